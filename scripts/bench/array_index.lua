-- SPDX-License-Identifier: MIT
-- The cost of a[i] on an mp.Array against a table, interleaved; medians.
--   build/mplua --nompi scripts/bench/array_index.lua [n=2000000] [rounds=9]
-- Also a strided view's a[i], and an empty loop (the loop's own cost).
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "?.lua;" .. package.path
local common = require "common"
local n = tonumber(arg and arg[1]) or 2000000
local rounds = tonumber(arg and arg[2]) or 9

local a = mp.array("f64", n)
local t = {}
for i = 1, n do t[i] = 0.0 end
local v = mp.array("f64", 2, n):view(1, ":")   -- strided: every other element
local function timed(f)
  return function()
    local c = os.clock()
    f()
    return (os.clock() - c) / n
  end
end
local med = common.interleave(rounds, {
  {"loop", timed(function() local s = 0 for i = 1, n do s = s + i end end)},
  {"table read", timed(function() local s = 0 for i = 1, n do s = s + t[i] end end)},
  {"array read", timed(function() local s = 0 for i = 1, n do s = s + a[i] end end)},
  {"view read", timed(function() local s = 0 for i = 1, n do s = s + v[i] end end)},
  {"table write", timed(function() for i = 1, n do t[i] = 1.5 end end)},
  {"array write", timed(function() for i = 1, n do a[i] = 1.5 end end)},
})
print(string.format("a[i], %d elements, medians of %d interleaved rounds (CPU time)", n, rounds))
for _, k in ipairs({"loop", "table read", "array read", "view read", "table write", "array write"}) do
  print(string.format("  %-12s %6.1f ns", k, med[k] * 1e9))
end
