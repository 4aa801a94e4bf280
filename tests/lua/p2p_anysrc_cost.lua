-- ranks: 8 20 64
-- SPDX-License-Identifier: MIT
-- A receive from any source finds its message in time independent of the number of ranks:
-- mp.stats().any_source_looks counts the queued messages (and per-sender queues) that
-- receives and probes from any source look at. Rank 0 serves every other rank, which sends
-- it K messages, through mp.recv(), mp.irecv(), a communicator's recv, mp.probe and mp.mpi's
-- Recv and Iprobe from ANY_SOURCE: each receive looks at a few messages, whatever the number
-- of ranks (a walk over every sender's queue costs a look per rank per receive, and per poll
-- of its wait). The 64-rank run checks the same, with fewer messages.
local P = mp.size
local K = P >= 64 and 3 or 12
local BOUND = 3 -- looks per receive: a wait's last poll finds it, the take finds it again

local function looks() return mp.stats().any_source_looks end

-- rank 0 takes n messages with take(), which returns sender and value; each sender's
-- values come in the order sent (1..K); the looks per message are returned
local function serve(n, take)
  local l0, last = looks(), {}
  for _ = 1, n do
    local from, k = take()
    assert(k == (last[from] or 0) + 1, ("from %s: #%s after #%s"):format(from, k, last[from]))
    last[from] = k
  end
  for r = 1, mp.size - 1 do assert(last[r] == K, ("rank %d: %s of %d"):format(r, last[r], K)) end
  return (looks() - l0) / n
end

local per = mp.exec(function(K)
  local mpi, n, got = mp.mpi, K * (mp.size - 1), {}
  -- each phase's messages are all taken before the next phase's are sent
  local function send_all(send)
    mp.barrier()
    if mp.rank > 0 then for k = 1, K do send(k) end end
  end

  send_all(function(k) mp.send(0, k) end)
  if mp.rank == 0 then got.recv = serve(n, mp.recv) end

  send_all(function(k) mp.send(0, k) end)
  if mp.rank == 0 then got.irecv = serve(n, function() return mp.irecv():wait() end) end

  local sub = mp.world:split(0, -mp.rank) -- comm ranks reversed: rank 0 is the last
  send_all(function(k) sub:send(sub.size - 1, k) end)
  if mp.rank == 0 then
    got.comm = serve(n, function()
      local from, k = sub:recv()
      return sub.size - 1 - from, k
    end)
  end

  -- probe: one message queued at a time (rank 0 asks each rank in turn)
  mp.barrier()
  if mp.rank == 0 then
    local l0 = looks()
    for _ = 1, K do
      for r = 1, mp.size - 1 do
        mp.send(r, "go")
        local q = mp.probe(1)
        assert(#q == 1 and q[1] == r, ("probe lists %s, not rank %d"):format(table.concat(q, ","), r))
        assert(mp.recv(r) == r)
      end
    end
    got.probe = (looks() - l0) / n
  else
    for _ = 1, K do assert(mp.recv(0) == "go"); mp.send(0, mp.rank) end
  end

  send_all(function(k) mpi.Send(k, 0, k % 3) end)
  if mp.rank == 0 then
    got.mpi = serve(n, function()
      local k, s = mpi.Recv(mpi.ANY_SOURCE, mpi.ANY_TAG)
      assert(s.tag == k % 3, "tag")
      return s.source, k
    end)
  end

  send_all(function(k) mpi.Send(k, 0, 7) end)
  if mp.rank == 0 then
    got.iprobe = serve(n, function()
      local flag, s = mpi.Iprobe(mpi.ANY_SOURCE, mpi.ANY_TAG)
      while not flag do flag, s = mpi.Iprobe(mpi.ANY_SOURCE, mpi.ANY_TAG) end
      local k = mpi.Recv(s.source, s.tag)
      return s.source, k
    end)
  end
  mp.barrier()
  return mp.rank == 0 and got or nil
end, K)

local bad = {}
for _, what in ipairs({"recv", "irecv", "comm", "probe", "mpi", "iprobe"}) do
  print(("%d ranks: %-6s %.2f looks per receive"):format(P, what, per[what]))
  if per[what] > BOUND then bad[#bad + 1] = what end
end
assert(#bad == 0, ("more than %d looks per receive from any source: %s"):format(
  BOUND, table.concat(bad, ", ")))
print("p2p_anysrc_cost ok")
