-- SPDX-License-Identifier: MIT
-- Run by a stock lua5.4 with mp.so on LUA_CPATH (tests/sh/embed_lua.sh):
-- mplua's model in stock Lua through the mp.serve() idiom, written the way
-- Lua code is: `local mp = require "mp"`. Functions sent to other ranks
-- capture that local; module tables travel by name, so each rank's task
-- gets its own mp.
local mp = require "mp"
if mp.rank > 0 then return mp.serve() end
local n = mp.size
-- point to point around a ring
local sum = mp.exec(function()
  mp.send((mp.rank + 1) % mp.size, mp.rank)
  return mp.allreduce(mp.recv((mp.rank - 1) % mp.size), "sum")
end)
print("ring", sum == n * (n - 1) // 2)
-- a collective on typed arrays
local s = mp.exec(function()
  local a = mp.array("f64", 4)
  for i = 1, 4 do a[i] = mp.rank + i end
  return mp.allreduce(a, "sum"):sum()
end)
print("array", s == 4 * n * (n - 1) / 2 + 10 * n)
-- a fault on the last rank, then the next task works
local ok, err = pcall(mp.exec, function() if mp.rank == mp.size - 1 then error("planned") end end)
print("fault", not ok and tostring(err):find("planned", 1, true) ~= nil)
print("recovered", mp.exec(function() return mp.allreduce(1, "sum") end) == n)
-- the Lua library is found next to the module
print("lib", type(require "mplua.optim") == "table")
print("ad", ad ~= nil and select(2, ad.grad(function(p) return ad.dot(p, p) end, {1, 2}))[2] == 4)
