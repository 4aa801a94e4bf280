-- SPDX-License-Identifier: MIT
local t = nil
print(t.x)
