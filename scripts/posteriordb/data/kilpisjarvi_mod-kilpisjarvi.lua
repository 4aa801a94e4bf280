-- SPDX-License-Identifier: MIT
-- SPDX-License-Identifier: BSD-3-Clause
-- posteriordb (github.com/stan-dev/posteriordb, BSD 3-Clause licence,
-- Copyright (c) 2011-2024 Stan Developers and their Assignees):
-- posterior kilpisjarvi_mod-kilpisjarvi: the data (posterior_database/data/data/kilpisjarvi_mod.json.zip)
-- and the mean and sd of each parameter over the reference draws
-- (posterior_database/reference_posteriors/draws/draws/kilpisjarvi_mod-kilpisjarvi.json.zip,
-- 10000 draws from 10 chains), as {name, mean, sd}.
return {
  name = "kilpisjarvi_mod-kilpisjarvi",
  data = {
    N = 62,
    x = {3952, 3953, 3954, 3955, 3956, 3957, 3958, 3959, 3960, 3961, 3962, 3963, 3964, 3965, 3966, 3967, 3968,
     3969, 3970, 3971, 3972, 3973, 3974, 3975, 3976, 3977, 3978, 3979, 3980, 3981, 3982, 3983, 3984, 3985,
     3986, 3987, 3988, 3989, 3990, 3991, 3992, 3993, 3994, 3995, 3996, 3997, 3998, 3999, 4000, 4001, 4002,
     4003, 4004, 4005, 4006, 4007, 4008, 4009, 4010, 4011, 4012, 4013},
    y = {8.3, 10.9, 9.4, 8.1, 8.1, 7.7, 8.6, 9.1, 11, 10.1, 7.6, 8.8, 8.3, 7.2, 9.3, 8.8, 7.6, 10.5, 11, 8.9,
     11.3, 10, 10.1, 6.4, 8.2, 8.4, 9.5, 9.9, 10.6, 7.6, 7.7, 8.1, 8.4, 9.7, 9.5, 7.3, 10.3, 9.6, 10.3, 9.8,
     9, 9.1, 9.5, 8.7, 9.9, 10.5, 9.4, 9, 9, 9.7, 11.4, 10.7, 10.1, 10.8, 10.4, 10.3, 8.8, 9.8, 8.8, 10.8,
     8.6, 11.1},
    xpred = 2016,
    pmualpha = 9.31290322580645,
    psalpha = 100,
    pmubeta = 0,
    psbeta = 0.0333333333333333,
  },
  ndraws = 10000,
  reference = {
    {"alpha", -60.712280822229665, 29.964667393563637},
    {"beta", 0.01758362601671587, 0.007524213490006221},
    {"sigma", 1.131666928648437, 0.1078191262722065},
  },
}
