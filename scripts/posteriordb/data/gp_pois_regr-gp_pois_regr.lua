-- SPDX-License-Identifier: MIT
-- SPDX-License-Identifier: BSD-3-Clause
-- posteriordb (github.com/stan-dev/posteriordb, BSD 3-Clause licence,
-- Copyright (c) 2011-2024 Stan Developers and their Assignees):
-- posterior gp_pois_regr-gp_pois_regr: the data (posterior_database/data/data/gp_pois_regr.json.zip)
-- and the mean and sd of each parameter over the reference draws
-- (posterior_database/reference_posteriors/draws/draws/gp_pois_regr-gp_pois_regr.json.zip,
-- 10000 draws from 10 chains), as {name, mean, sd}.
return {
  name = "gp_pois_regr-gp_pois_regr",
  data = {
    N = 11,
    x = {-10, -8, -6, -4, -2, 0, 2, 4, 6, 8, 10},
    y = {4.75906, 1.59423, 2.99548, 5.27501, 1.66472, 2.24347, 2.8914, 4.08681, 4.60588, 0.802364, 3.92136},
    k = {40, 37, 29, 12, 4, 3, 9, 19, 77, 82, 33},
  },
  ndraws = 10000,
  reference = {
    {"rho", 5.666529410211318, 0.6790211601946317},
    {"alpha", 2.9213441837951293, 0.7928218118007142},
    {"f[1]", 3.6357406040220313, 0.1520960076198161},
    {"f[2]", 3.6886122237673953, 0.12626689005065586},
    {"f[3]", 3.254665636158644, 0.14318839423291504},
    {"f[4]", 2.4091683323405535, 0.19695253352752753},
    {"f[5]", 1.561533122696365, 0.2468762243602589},
    {"f[6]", 1.2952616184372912, 0.26620010535882865},
    {"f[7]", 1.9312032971849111, 0.22459411515255862},
    {"f[8]", 3.1796066474828155, 0.1438716484290522},
    {"f[9]", 4.252921322528108, 0.09606546926361781},
    {"f[10]", 4.41509940077749, 0.09162112170800497},
    {"f[11]", 3.506816943062037, 0.16309999995384242},
  },
}
