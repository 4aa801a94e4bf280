-- SPDX-License-Identifier: MIT
-- mpchaos: random message patterns with injected faults, to prove that the
-- abort protocol leaves every rank clean. Used by tests/lua/abort_chaos.lua
-- (a few hundred rounds in ctest) and scripts/bench/chaos.lua (the soak).
--
--   local chaos = require("mpchaos")
--   local r = chaos.new(seed)            -- plans come from rank 0's RNG
--   local faulted, err, secs = r:round(k) -- one random round; errors if a
--                                         -- check fails
local M = {}
M.__index = M

function M.new(seed)
  local self = setmetatable({seed = seed}, M)
  math.randomseed(seed)
  return self
end

-- A plan: a list of steps every rank runs in order, and maybe a fault.
local function plan(k, size)
  local steps = {}
  for _ = 1, math.random(1, 4) do
    local kind = math.random(1, 3)
    if kind == 1 then
      local msgs = {}
      for _ = 1, math.random(0, 2 * size) do
        local bytes = math.random() < 0.1 and math.random(20000, 300000) or math.random(0, 200)
        msgs[#msgs + 1] = {math.random(0, size - 1), math.random(0, size - 1), bytes}
      end
      steps[#steps + 1] = {"p2p", msgs}
    elseif kind == 2 then
      steps[#steps + 1] = {"handout", math.random(0, 1000)}
    else
      steps[#steps + 1] = {"handin", math.random(0, 1000)}
    end
  end
  local fault
  if math.random() < 0.6 then
    fault = {rank = math.random(0, size - 1), step = math.random(1, #steps + 1),
             how = math.random() < 0.25 and "abort" or "error"}
    -- sometimes another rank computes forever meanwhile: only the poll hook
    -- can stop it
    if size > 1 and math.random() < 0.2 then
      fault.spinner = (fault.rank + math.random(1, size - 1)) % size
    end
  end
  return {round = k, steps = steps, fault = fault}
end

-- What every rank runs (shipped by mp.exec with its upvalues).
local function run(p)
  local me = mp.rank
  local function maybe_fault(i)
    local f = p.fault
    if f and f.step == i then
      if f.rank == me then
        if f.how == "abort" then mp.abort("chaos abort in round " .. p.round) end
        error("chaos fault in round " .. p.round)
      elseif f.spinner == me then
        while true do end
      end
    end
  end
  for i, s in ipairs(p.steps) do
    maybe_fault(i)
    if s[1] == "p2p" then
      for j, m in ipairs(s[2]) do
        if m[1] == me then mp.send(m[2], {round = p.round, step = i, j = j}, string.rep("c", m[3])) end
      end
      for j, m in ipairs(s[2]) do
        if m[2] == me then
          local h, body = mp.recv(m[1])
          assert(h.round == p.round and h.step == i and h.j == j and #body == m[3],
                 ("rank %d: stale or misordered message in round %d: got round %s step %s #%s"):format(
                   me, p.round, h.round, h.step, h.j))
        end
      end
    elseif s[1] == "handout" then
      local v = mp.handout(me == 0 and s[2] or nil)
      assert(v == s[2], "handout value")
    else
      local v = mp.handin(s[2])
      if me == 0 then assert(v == s[2] * mp.size, "handin sum") end
    end
  end
  maybe_fault(#p.steps + 1)
end

-- Afterwards, every rank: a message sent now around the ring is the next one
-- its receiver gets (anything of the round before, delivered late, would come
-- first: a sender's messages arrive in order), nothing else is queued then,
-- and everyone agrees on the round.
local function check(k)
  local n = mp.size
  mp.send((mp.rank + 1) % n, "after", k)
  local what, got = mp.recv((mp.rank - 1) % n)
  assert(what == "after" and got == k, ("rank %d: a stale message after round %d: %s %s"):format(
    mp.rank, k, tostring(what), tostring(got)))
  assert(#mp.probe(0) == 0, "rank " .. mp.rank .. " has stale messages queued")
  assert(mp.handout(mp.rank == 0 and k or nil) == k, "handout disagrees")
  return mp.handin(k)
end

function M:round(k)
  local p = plan(k, mp.size)
  local t0 = mp.wtime()
  local ok, err = pcall(mp.exec, run, p)
  local t1 = mp.wtime()
  local sum = mp.exec(check, k)
  local t2 = mp.wtime()
  assert(sum == k * mp.size, ("round %d: ranks disagree (handin %s)"):format(k, tostring(sum)))
  if ok then
    assert(not p.fault, ("round %d: the fault planned on rank %d did not happen"):format(
      k, p.fault and p.fault.rank or -1))
    return false, nil, 0
  end
  err = tostring(err)
  if not p.fault then error(("round %d: unplanned failure: %s"):format(k, err)) end
  local first = tonumber(err:match("rank (%d+)/%d+ faulted"))
  assert(first == p.fault.rank, ("round %d: fault planned on rank %d, reported %s"):format(
    k, p.fault.rank, err))
  assert(err:find("chaos") and err:find("round " .. k, 1, true), "report lacks the message: " .. err)
  return true, err, (t1 - t0) + (t2 - t1)
end

return M
