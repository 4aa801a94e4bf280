-- SPDX-License-Identifier: MIT
-- SPDX-License-Identifier: BSD-3-Clause
-- posteriordb (github.com/stan-dev/posteriordb, BSD 3-Clause licence,
-- Copyright (c) 2011-2024 Stan Developers and their Assignees):
-- posterior eight_schools-eight_schools_noncentered: the data (posterior_database/data/data/eight_schools.json.zip)
-- and the mean and sd of each parameter over the reference draws
-- (posterior_database/reference_posteriors/draws/draws/eight_schools-eight_schools_noncentered.json.zip,
-- 10000 draws from 10 chains), as {name, mean, sd}.
return {
  name = "eight_schools-eight_schools_noncentered",
  data = {
    J = 8,
    y = {28, 8, -3, 7, -1, 1, 18, 12},
    sigma = {15, 10, 16, 11, 9, 11, 10, 18},
  },
  ndraws = 10000,
  reference = {
    {"theta[1]", 6.150502293344259, 5.615863418889257},
    {"theta[2]", 4.939581140742171, 4.6455781139408385},
    {"theta[3]", 3.905906090015835, 5.280711952216741},
    {"theta[4]", 4.796016751384928, 4.770938024092459},
    {"theta[5]", 3.6144363246798945, 4.6147206922358865},
    {"theta[6]", 4.051147578967492, 4.796248400609532},
    {"theta[7]", 6.317169758868946, 5.002855395177531},
    {"theta[8]", 4.883996943532865, 5.317692056077121},
    {"mu", 4.410518336954923, 3.309296476726348},
    {"tau", 3.6020595236405875, 3.198477670976633},
  },
}
