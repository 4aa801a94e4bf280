-- SPDX-License-Identifier: MIT
print(pcall(string.rep, "x", 1 << 40))
local s = ("x"):rep(1 << 40)
