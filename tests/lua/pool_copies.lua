-- ranks: 1 2 3
-- SPDX-License-Identifier: MIT
-- A pool task gets the same thing wherever it runs: rank 0, when it works
-- too, gets a copy of its task and reaps a copy of its result, made as a
-- worker's are (through the codec), so work that changes its task changes
-- nothing on rank 0, and a task or result that cannot travel is an error
-- on one rank as on many (rank 0 runs some tasks when the scheduling lets it).
local n = mp.size
local sown, results = {}, {}
mp.pool{
  sow = function(i) if i <= 4 * n then sown[i] = {count = 0, list = {1, 2}}; return sown[i] end end,
  work = function(t) t.count = t.count + 1; t.list[1] = 7; return t end,
  reap = function(i, r) results[i] = r end,
}
for i = 1, 4 * n do
  local s, r = sown[i], results[i]
  assert(s.count == 0 and s.list[1] == 1, "task " .. i .. "'s work changed rank 0's table")
  assert(r ~= s and r.count == 1 and r.list[1] == 7, "result " .. i)
end
-- a result that keeps a reference to rank 0's tables is a copy too
local keep = {}
mp.pool{sow = function(i) if i <= 2 * n then return {i} end end,
        work = function(t) return {t, t} end,
        reap = function(i, r) assert(r[1] == r[2] and r[1][1] == i); keep[i] = r[1] end}
for i = 1, 2 * n do assert(keep[i][1] == i) end
-- what cannot travel fails on any number of ranks
for _, opts in ipairs({
  {sow = function(i) if i <= 2 then return coroutine.create(print) end end, work = function() return 1 end},
  {sow = function(i) if i <= 2 * n then return i end end, work = function() return coroutine.create(print) end},
}) do
  opts.self = n == 1
  local ok, err = pcall(mp.pool, opts)
  assert(not ok and tostring(err):find("cannot send a thread", 1, true), tostring(err))
end
print("pool_copies ok")
