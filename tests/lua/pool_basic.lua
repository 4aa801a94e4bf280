-- ranks: 1 2 3 4
-- SPDX-License-Identifier: MIT
-- mp.pool with uneven work: each result checked, every task reaped exactly
-- once; self, ranks, pmap order.
local function run(opts, N)
  local seen, cnt = {}, 0
  opts.sow = function(n) if n <= N then return {n = n} end end
  opts.work = function(t)
    local s = 0
    for i = 1, (t.n * 7919) % 3000 do s = s + i end -- uneven
    return {n = t.n, s = s, rank = mp.rank}
  end
  local by = {}
  opts.reap = function(n, r)
    assert(not seen[n], "reaped twice")
    seen[n] = true
    cnt = cnt + 1
    local k = (n * 7919) % 3000
    assert(r.n == n and r.s == k * (k + 1) // 2)
    by[r.rank] = (by[r.rank] or 0) + 1
  end
  mp.pool(opts)
  assert(cnt == N)
  return by
end
run({}, 1000)
run({}, 0)
local by = run({self = true}, 500)
if mp.size == 1 then assert(by[0] == 500) end
if mp.size > 1 then -- rank 0 kept free
  by = run({self = false}, 300)
  assert(not by[0])
end
if mp.size > 2 then
  by = run({ranks = {2}}, 300)
  assert(by[2] == 300 and not by[1])
end
local list = {}
for i = 1, 777 do list[i] = i end
local r = mp.pmap(function(x) return x * x end, list)
for i = 1, 777 do assert(r[i] == i * i) end
assert(#mp.pmap(print, {}) == 0)
print("pool_basic ok")
