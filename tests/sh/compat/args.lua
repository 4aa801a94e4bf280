-- SPDX-License-Identifier: MIT
-- the script's `...` and the arg table, negative indices included
print(select("#", ...), ...)
local lo = 0
while arg[lo - 1] ~= nil do lo = lo - 1 end
for i = lo, #arg do print(i, arg[i]) end
