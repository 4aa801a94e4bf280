-- SPDX-License-Identifier: MIT
-- SPDX-License-Identifier: BSD-3-Clause
-- posteriordb (github.com/stan-dev/posteriordb, BSD 3-Clause licence,
-- Copyright (c) 2011-2024 Stan Developers and their Assignees):
-- posterior gp_pois_regr-gp_regr: the data (posterior_database/data/data/gp_pois_regr.json.zip)
-- and the mean and sd of each parameter over the reference draws
-- (posterior_database/reference_posteriors/draws/draws/gp_pois_regr-gp_regr.json.zip,
-- 10000 draws from 10 chains), as {name, mean, sd}.
return {
  name = "gp_pois_regr-gp_regr",
  data = {
    N = 11,
    x = {-10, -8, -6, -4, -2, 0, 2, 4, 6, 8, 10},
    y = {4.75906, 1.59423, 2.99548, 5.27501, 1.66472, 2.24347, 2.8914, 4.08681, 4.60588, 0.802364, 3.92136},
    k = {40, 37, 29, 12, 4, 3, 9, 19, 77, 82, 33},
  },
  ndraws = 10000,
  reference = {
    {"rho", 6.874348177825831, 1.265755832201429},
    {"alpha", 2.4423998398757027, 0.7818326686346695},
    {"sigma", 1.8287310657279656, 0.5050161400132238},
  },
}
