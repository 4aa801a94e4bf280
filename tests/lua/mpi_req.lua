-- ranks: 1 2 3 4 5 8  quick: 1 2
-- SPDX-License-Identifier: MIT
-- mp.mpi's requests: Irecvs match in posting order, Ssend and Issend
-- complete only when matched, Waitany/Waitsome/Testsome/Testall and their
-- return conventions, Cancel of receives, inactive requests.
local ok = mp.exec(function()
  local mpi = mp.mpi
  local me, n = mpi.Comm_rank(), mpi.Comm_size()
  local right, left = (me + 1) % n, (me - 1) % n

  -- posted receives match in posting order, before a later blocking Recv
  local r1 = mpi.Irecv(left, mpi.ANY_TAG)
  local r2 = mpi.Irecv(mpi.ANY_SOURCE, 1)
  local s = {mpi.Isend("a", right, 1), mpi.Isend("b", right, 1), mpi.Isend("c", right, 1)}
  assert(mpi.Recv(left, 1) == "c", "a blocking Recv comes after the posted ones")
  local v1, st1 = mpi.Wait(r1)
  local v2 = mpi.Wait(r2)
  assert(v1 == "a" and st1.tag == 1 and v2 == "b", "posting order")
  local vals, sts = mpi.Waitall(s)
  assert(next(vals) == nil and next(sts) == nil, "sends give nothing")
  local okw, err = pcall(mpi.Wait, r1)
  assert(not okw and err:find("inactive"), "waiting twice")

  -- Waitany: 1-based index; inactive requests are skipped; all inactive: nil
  local q = {mpi.Irecv(left, 2), mpi.Irecv(left, 3)}
  mpi.Send(33, right, 3)
  local i, x, sx = mpi.Waitany(q)
  assert(i == 2 and x == 33 and sx.tag == 3, "waitany")
  mpi.Barrier() -- nobody sends tag 2 before every rank's Waitany above has returned
  mpi.Send(22, right, 2)
  local j, y = mpi.Waitany(q)
  assert(j == 1 and y == 22, "waitany skips inactive")
  assert(mpi.Waitany(q) == nil, "all inactive")

  -- Testsome, Waitsome, Testall
  local t = {mpi.Irecv(left, 4), mpi.Irecv(left, 5), mpi.Irecv(left, 6)}
  local idx = mpi.Testsome(t)
  assert(#idx == 0, "nothing sent yet")
  mpi.Barrier() -- each phase's messages are sent once every rank has checked the last
  mpi.Send(5, right, 5)
  mpi.Send(6, right, 6)
  local got, total = {}, 0
  while total < 2 do
    local ids, vs = mpi.Testsome(t)
    for k, id in ipairs(ids) do got[id] = vs[k]; total = total + 1 end
  end
  assert(got[2] == 5 and got[3] == 6 and not got[1], "testsome")
  assert(mpi.Testall(t) == false, "one still pending")
  mpi.Barrier()
  mpi.Send(4, right, 4)
  local ids, vs, ss = mpi.Waitsome(t)
  assert(#ids == 1 and ids[1] == 1 and vs[1] == 4 and ss[1].tag == 4, "waitsome")
  assert(mpi.Waitsome(t) == nil, "waitsome: all inactive")
  local all = {mpi.Irecv(left, 7), mpi.Isend(7, right, 7)}
  local done, av
  repeat done, av = mpi.Testall(all) until done
  assert(av[1] == 7 and av[2] == nil, "testall")

  -- Testany / Test
  local ta = {mpi.Irecv(left, 8)}
  mpi.Send(8, right, 8)
  local f, fi, v8
  repeat f, fi, v8 = mpi.Testany(ta) until f
  assert(fi == 1 and v8 == 8, "testany")
  local fa, fn = mpi.Testany(ta)
  assert(fa == true and fn == nil, "testany: all inactive")
  local tr = mpi.Irecv(left, 10)
  mpi.Send(10, right, 10)
  local flag, tv
  repeat flag, tv = mpi.Test(tr) until flag
  assert(tv == 10, "test")

  -- Cancel: a receive that matched nothing is cancelled; its wait says so
  local c = mpi.Irecv(left, 12)
  assert(mpi.Cancel(c) == true)
  local cv, cs = mpi.Wait(c)
  assert(cv == nil and cs.cancelled == true, "cancelled")
  mpi.Send(13, right, 13)
  mpi.Probe(left, 13) -- it has come: the Irecv matches it at once, too late to cancel
  local c2 = mpi.Irecv(left, 13)
  assert(mpi.Cancel(c2) == false, "matched: not cancelled")
  assert(mpi.Wait(c2) == 13)
  local okc, errc = pcall(mpi.Cancel, c2)
  assert(not okc and errc:find("inactive"), "cancel of an inactive request")

  -- Ssend returns only once matched: the receiver posts its receive after a
  -- barrier, and a flag sent before the barrier shows the order
  if n > 1 then
    if me == 0 then
      mpi.Ssend("sync", 1, 20)
      mpi.Send("after", 1, 21)
    elseif me == 1 then
      local st21 = mpi.Iprobe(0, 21)
      assert(not st21, "nothing sent after the Ssend before it is matched")
      assert(mpi.Recv(0, 20) == "sync")
      assert(mpi.Recv(0, 21) == "after")
    end
    -- Issend: its request completes when the receive matches it
    local rq = mpi.Issend(me, right, 22)
    local v22 = mpi.Recv(left, 22)
    mpi.Wait(rq)
    assert(v22 == left)
  else
    -- alone: an Issend to itself completes once its own Irecv matches it
    local rr = mpi.Irecv(0, 22)
    local sq = mpi.Issend("self", 0, 22)
    mpi.Wait(sq)
    assert(mpi.Wait(rr) == "self")
  end
  -- PROC_NULL requests complete at once
  local pv, ps = mpi.Wait(mpi.Irecv(mpi.PROC_NULL, 0))
  assert(pv == nil and ps.source == mpi.PROC_NULL)
  mpi.Wait(mpi.Isend(1, mpi.PROC_NULL, 0))
  return true
end)
assert(ok)
print("mpi_req ok", mp.size)
