-- SPDX-License-Identifier: MIT
-- heat_lua.lua: the solver of heat_host.c stepped from Lua: its kernel is a C
-- module (heat_kernel.c, built as heat_kernel.so), the loop is Lua, run as one
-- task on every rank. Prints what `heat_host nx ny steps` prints (same numbers):
--   mpiexec -n 4 mplua scripts/examples/heat_lua.lua [nx ny steps [alpha]]
--   mpiexec -n 4 lua5.4 -l mp scripts/examples/heat_lua.lua [nx ny steps [alpha]]
-- with heat_kernel.so on package.cpath (LUA_CPATH, or the build's lib/lua/5.4).
if mp.rank > 0 then return mp.serve() end -- stock lua5.4: every rank runs this file
local nx, ny = tonumber(arg[1]) or 64, tonumber(arg[2]) or 64
local steps, alpha = tonumber(arg[3]) or 100, tonumber(arg[4]) or 0.1

local mx, mid, sums = mp.exec(function(nx, ny, steps, alpha)
  local k = require("heat_kernel").new(nx, ny) -- this rank's rows; k.T views them
  for _ = 1, steps do k:step(alpha) end
  local m, s = k:stats()
  local r = ny // 2 - k.row0 -- the middle cell: global row ny//2, column nx//2 (0-based)
  local v = r >= 0 and r < k.nloc and k.T[nx // 2 + 1 + r * nx] or -1
  return mp.allreduce(m, "max"), mp.allreduce(v, "max"), mp.gather(s)
end, nx, ny, steps, alpha)
local sum = 0
for r = 1, #sums do sum = sum + sums[r] end -- in rank order, as heat_host adds them
print(string.format("heat %dx%d after %d steps: max %.17g mid %.17g sum %.17g", nx, ny, steps,
                    mx, mid, sum))
