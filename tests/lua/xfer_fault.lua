-- ranks: 2 3 4 5 8 20  quick: 2
-- SPDX-License-Identifier: MIT
-- The transport harness under faults: a rank raises between posting a large
-- message and its completion, a receiver fails while parts are in flight, a
-- rank fails in the middle of a tree of forwards (bcast, handout) or while
-- the others spin in Lua or sit in a collective. After every fault, every
-- rank must be back, clean: the next task works and nothing of the aborted
-- one is delivered (each rank checks that its messages are the fresh ones
-- and that no queue holds anything). MPLUA_XFER_SEED replays a failure.
package.path = "lib/?.lua;" .. package.path
local X = mp.require("xfer")
local seed = tonumber(os.getenv("MPLUA_XFER_SEED")) or 20261123
local n = mp.size
-- each point 5 times up to 4 ranks, twice above (each round costs all n ranks)
local rounds = tonumber(os.getenv("MPLUA_XFER_ROUNDS")) or (n <= 4 and 40 or 16)
print(("xfer_fault: seed %d, %d rounds, %d ranks"):format(seed, rounds, n))

local POINTS = {"after_isend", "after_irecv", "before_recv", "in_bcast", "in_handout",
                "spin", "in_allreduce", "in_alltoall"}

local function faulty(c)
  local X = require("xfer")
  local me, n = mp.rank, mp.size
  local bad = me == c.rank
  local function boom() error("injected fault at " .. c.point .. " on rank " .. me) end
  local big = X.gen(c.kind, c.size, X.seed(c.seed, me))
  local dst, src = (me + 1) % n, (me - 1) % n
  if c.point == "after_isend" then
    mp.isend(dst, big)
    if bad then boom() end
    mp.recv(src)
  elseif c.point == "after_irecv" then
    local q = mp.irecv(src)
    if bad then boom() end
    mp.send(dst, big)
    q:wait()
  elseif c.point == "before_recv" then
    mp.send(dst, big, big)
    if bad then boom() end
    mp.recv(src)
  elseif c.point == "in_bcast" or c.point == "in_handout" then
    local v = me == 0 and big or nil
    if bad and me ~= 0 then boom() end -- an inner rank of the tree never forwards
    if c.point == "in_bcast" then mp.bcast(v, 0) else mp.handout(v) end
    if bad then boom() end
    mp.barrier()
  elseif c.point == "spin" then
    if bad then mp.send(dst, big); boom() end
    while true do end
  elseif c.point == "in_allreduce" then
    if bad then boom() end
    mp.allreduce(mp.array("f64", c.size // 8 + 1):fill(me), "sum")
  else
    local t = {}
    for r = 0, n - 1 do t[r + 1] = big end
    if bad then mp.isend(dst, big); boom() end
    mp.alltoall(t)
  end
end

local function fresh(round)
  local X = require("xfer")
  local me, n = mp.rank, mp.size
  local v = X.gen("mixed", 70000, X.seed(round, me))
  mp.send((me + 1) % n, "fresh", round, v)
  local tag, k, got = mp.recv((me - 1) % n)
  assert(tag == "fresh" and k == round, "a stale message was delivered after an abort")
  X.check(X.gen("mixed", 70000, X.seed(round, (me - 1) % n)), got, "the message after the abort")
  local t = mp.bcast(me == 0 and v or nil)
  if me ~= 0 then X.check(X.gen("mixed", 70000, X.seed(round, 0)), t, "bcast after the abort") end
  mp.barrier()
  assert(#mp.probe() == 0, "a message of the aborted task was delivered")
  return mp.handin(1)
end

local r = X.rng(seed)
local sizes = {1000, 5000, 70000, 1 << 20, n <= 4 and (8 << 20) or (1 << 20)}
local kinds = {"str", "array:f64", "mixed", "table"}
for round = 1, rounds do
  local c = {point = POINTS[(round - 1) % #POINTS + 1], rank = r(n), seed = r(),
             kind = kinds[r(#kinds) + 1], size = sizes[r(#sizes) + 1]}
  if c.point == "in_bcast" or c.point == "in_handout" then
    -- every other time a rank that forwards: 2 in bcast's binomial tree (from 4 ranks),
    -- 1 in handout's tree of fan-out 16 (from 18 ranks); else any rank but the root
    local inner = c.point == "in_bcast" and n >= 4 and 2 or c.point == "in_handout" and n >= 18 and 1
    c.rank = inner and (round - 1) // #POINTS % 2 == 0 and inner or n > 1 and 1 + r(n - 1) or 0
  end
  if c.kind == "table" then c.size = c.size % 9001 end -- entries, not bytes
  local what = ("round %d (seed %d): %s on rank %d, %s of %d bytes"):format(round, seed, c.point,
                                                                         c.rank, c.kind, c.size)
  local ok, err = pcall(mp.exec, faulty, c)
  assert(not ok, what .. ": the task did not fail")
  err = tostring(err)
  assert(err:find("injected fault at " .. c.point .. " on rank " .. c.rank, 1, true) and
         err:find("rank " .. c.rank .. "/" .. n .. " faulted", 1, true), what .. ": " .. err)
  local ok2, sum = pcall(mp.exec, fresh, round)
  assert(ok2 and sum == n, what .. ": the next task " .. tostring(sum))
end
print(("xfer_fault ok: %d faults, every one recovered"):format(rounds))
