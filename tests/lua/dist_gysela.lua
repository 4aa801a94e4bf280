-- ranks: 4 16
-- SPDX-License-Identifier: MIT
-- scripts/examples/gysela_transpose.lua: Gysela's 5-D poloidal -> collisional transpose
-- and back, checked element by element against the global array, and the FFTs along the
-- dimensions each layout holds whole, checked against direct sums (it asserts).
dofile(os.getenv("MPLUA_TEST_DIR") .. "/../scripts/examples/gysela_transpose.lua")
