-- ranks: 1 2 3 4 20
-- SPDX-License-Identifier: MIT
-- exec (functions with local helpers, chunks, arguments, results), include,
-- require, handout, handin, cd, nfan; at 20 ranks the tree has two levels.
local n = mp.size
local function helper(x) return x * 2 end
local r = table.pack(mp.exec(function(a, b) return helper(a) + b, mp.rank end, 20, 2))
assert(r.n == 2 and r[1] == 42 and r[2] == 0, "exec results are rank 0's")

-- every rank really ran: collect ranks through handin of a table of flags
local flags = mp.exec(function()
  local t = {}
  for i = 1, mp.size do t[i] = 0 end
  t[mp.rank + 1] = 1
  return mp.handin(t)
end)
for i = 1, n do assert(flags[i] == 1, "rank " .. (i - 1) .. " did not run") end

-- a chunk string runs on every rank
assert(mp.exec("return mp.handin(mp.rank)") == n * (n - 1) // 2)

-- handout: rank 0's values reach everyone; handin sums numbers
local total = mp.exec(function()
  local a, b, c
  if mp.rank == 0 then a, b, c = mp.handout(7, "x", {1, 2}) else a, b, c = mp.handout() end
  assert(a == 7 and b == "x" and c[2] == 2, "handout values on rank " .. mp.rank)
  return mp.handin(a + mp.rank)
end)
assert(total == 7 * n + n * (n - 1) // 2, "handin sum " .. tostring(total))
assert(mp.exec(function() return mp.handin() end) == nil, "handin() synchronizes")

-- small fan-out: a deep tree gives the same answers; an abort goes down the
-- same tree (each rank passes it on): every rank stops, whichever faults,
-- while a rank inside the tree computes, and the next task works
local old = mp.nfan(2)
assert(old == tonumber(os.getenv("MPLUA_NFAN") or 16), "the fan-out starts at 16 or MPLUA_NFAN")
assert(mp.exec("return mp.handin(1)") == n)
for _, fan in ipairs{1, 2, 3} do
  mp.nfan(fan)
  for _, victim in ipairs{n - 1, n // 2} do
    local ok, e = pcall(mp.exec, function(v)
      if mp.rank == v then error("fanout: on purpose") end
      if mp.rank == 1 and n > 2 then while true do end end -- stopped by the poll hook
      mp.barrier()
    end, victim)
    assert(not ok and e.rank == victim, tostring(e))
    assert(mp.exec("return mp.handin(1)") == n)
  end
end
mp.nfan(old)

-- include and require ship the file from rank 0
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))
local f = assert(io.open(dir .. "/inc.lua", "w"))
f:write("#!/usr/bin/env mplua\nincluded_value = (included_value or 0) + 1 + mp.rank * 0\n")
f:close()
mp.include(dir .. "/inc.lua")
assert(mp.exec(function() return mp.handin(included_value) end) == n)
f = assert(io.open(dir .. "/mymod.lua", "w"))
f:write("local M = {} function M.twice(x) return 2 * x end return M\n")
f:close()
package.path = dir .. "/?.lua;" .. package.path
local M = mp.require("mymod")
assert(M.twice(4) == 8)
assert(mp.exec(function() return mp.handin(require("mymod").twice(1)) end) == 2 * n)

-- cd: every rank to rank 0's directory
mp.cd(dir)
assert(mp.exec(function()
  local ok = io.open("inc.lua") ~= nil
  return mp.handin(ok and 1 or 0)
end) == n)
os.execute("rm -rf " .. dir)
print("fanout ok")
