-- The mplua demo: mpiexec -n 4 build/mplua scripts/demo.lua (scripts/demo.sh)
-- SPDX-License-Identifier: MIT
print(("mplua demo: %d ranks, each running Lua"):format(mp.size))
-- 1. Run a function on every rank; rank 0 gets its own results.
local function greet() return ("rank %d of %d"):format(mp.rank, mp.size) end
print("mp.exec ->", mp.exec(greet))

-- 2. A ring: every rank passes a token to its right neighbour.
local sum = mp.exec(function()
  local right, left = (mp.rank + 1) % mp.size, (mp.rank - 1) % mp.size
  mp.send(right, {from = mp.rank, msg = "hello"})
  local token = mp.recv(left)
  assert(token.from == left)
  return mp.handin(token.from)
end)
print("ring: sum of the ranks whose tokens went round =", sum)

-- 3. Hand out work from rank 0, hand in the results: a parallel sum of squares.
local n = 1000000
local total = mp.exec(function()
  local N = mp.handout(mp.rank == 0 and n or nil)
  local s = 0
  for i = mp.rank + 1, N, mp.size do s = s + i * i end
  return mp.handin(s)
end)
print(("sum of i^2 for i = 1..%d: %d (expected %d)"):format(n, total, n * (n + 1) * (2 * n + 1) // 6))

-- 4. An error on one rank stops the task on every rank, even ranks busy in a
--    loop that never ends; rank 0 gets one report (which rank, what, where),
--    here caught with pcall, and the next task works. In batch mode (-b) any
--    fault ends the job, caught or not: the demo says so instead.
if mp.batch then
  print("batch mode (-b): a fault would end the job; run without -b to see one caught")
  return
end
local ok, report = pcall(mp.exec, function()
  if mp.rank == mp.size - 1 then error("something went wrong here") end
  while true do end -- the others would run for ever: the fault stops them
end)
print("a fault, caught:", ok)
print("  " .. tostring(report):gsub("\n", "\n  "))
print("and the next task works:", mp.exec(function() return mp.handin(1) end), "ranks answered")
