-- ranks: 1 2 3
-- SPDX-License-Identifier: MIT
-- Module tables travel by name: a task or a message holding a table that is
-- package.loaded[name] on the sender gets the receiving rank's own module
-- (stock Lua's `local mp = require "mp"` captured by a task, `local m =
-- math`, `ad`, a module required on every rank later), and a module loaded
-- on the sender only is a clear error on the receiver, not a silent copy.
local M, A, m, s = mp, ad, math, string
local n = mp.size

-- upvalues
local got = mp.exec(function()
  local ok = rawequal(M, mp) and rawequal(A, ad) and rawequal(m, math) and rawequal(s, string)
  return M.handin(ok and 1 or 0)
end)
assert(got == n, "modules captured as upvalues arrive as the receiver's own: " .. got)

-- mp's own tables of C functions are modules too: mp.mpi captured as MPI users write it
-- (`local mpi = mp.mpi` at the top of a script), mp.Array, and a C function of mp.mpi
local mpi, Array, Send = mp.mpi, mp.Array, mp.mpi.Send
got = mp.exec(function()
  local ok = rawequal(mpi, mp.mpi) and rawequal(Array, mp.Array) and rawequal(Send, mp.mpi.Send)
  return mpi.Allreduce(ok and 1 or 0, mpi.SUM)
end)
assert(got == n, "mp.mpi, mp.Array and mp.mpi.Send captured as upvalues: " .. got)

-- inside messages, nested, with a shared reference
got = mp.exec(function()
  local t = mp.bcast(mp.rank == 0 and {lib = math, again = math, m = mp, {ad}} or nil)
  local ok = rawequal(t.lib, math) and rawequal(t.again, math) and rawequal(t.m, mp)
             and rawequal(t[1][1], ad)
  return mp.handin(ok and 1 or 0)
end)
assert(got == n, "modules inside a message: " .. got)

-- a C module loaded on every rank after start: by name, each rank's own
mp.exec(function()
  package.loaded["my.cmod"] = {clock = os.clock, id = mp.rank}
end)
local cmod = package.loaded["my.cmod"]
got = mp.exec(function() return mp.handin(cmod.id) end)
assert(got == n * (n - 1) // 2, "each rank reads its own module: " .. got)

-- a Lua module loaded on rank 0 only is copied, functions and all
package.loaded["my.luamod"] = {twice = function(x) return 2 * x end, k = 5}
local lmod = package.loaded["my.luamod"]
got = mp.exec(function()
  return mp.handin(lmod.twice(lmod.k) + (package.loaded["my.luamod"] and 0 or 1))
end)
assert(got == n * 10 + (n - 1), "a Lua module travels by value: " .. got)

-- a C module loaded on rank 0 only: the receivers cannot resolve it
package.loaded.only_here = {x = 1, clock = os.clock}
local only = package.loaded.only_here
if n > 1 then
  local ok, err = pcall(mp.exec, function() return mp.handin(only.x) end)
  assert(not ok and tostring(err):find("module 'only_here' (sent by name) is not loaded here",
                                       1, true), tostring(err))
end
-- the job goes on
assert(mp.exec(function() return mp.handin(1) end) == n)
print("wire_modules ok")
