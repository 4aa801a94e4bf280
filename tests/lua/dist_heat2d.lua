-- ranks: 1 2 4
-- SPDX-License-Identifier: MIT
-- scripts/examples/heat2d.lua, smaller: the heat equation with halos on a Cartesian
-- grid, fixed and periodic edges, asserts that every rank's block is bitwise the
-- serial result.
arg = {"40", "30", "60"}
dofile(os.getenv("MPLUA_TEST_DIR") .. "/../scripts/examples/heat2d.lua")
