-- ranks: 1 2 3 4 5 8 20  quick: 1 2
-- SPDX-License-Identifier: MIT
-- mp.mpi's point to point against MPI's semantics: tags and statuses,
-- non-overtaking per (source, tag, communicator), wildcard matching,
-- PROC_NULL, Sendrecv and Sendrecv_replace, Probe and Iprobe, communicators
-- from mp (a split), and MPI messages kept apart from mp.send/mp.recv.
local results = {mp.exec(function()
  local mpi = mp.mpi
  local me, n = mpi.Comm_rank(), mpi.Comm_size()
  local right, left = (me + 1) % n, (me - 1) % n

  -- a ring with tags: each message's status says where it came from
  local v, st = mpi.Sendrecv({me, "x"}, right, 5, left, 5)
  assert(v[1] == left and v[2] == "x" and st.source == left and st.tag == 5, "ring")

  -- non-overtaking: 10 messages on each of two tags from the left, received
  -- tag 2 first; each tag's messages come in the order sent
  for i = 1, 10 do mpi.Send(i, right, 1); mpi.Send(-i, right, 2) end
  for i = 1, 10 do assert(mpi.Recv(left, 2) == -i, "tag 2 order") end
  for i = 1, 10 do
    local x, s = mpi.Recv(left, mpi.ANY_TAG)
    assert(x == i and s.tag == 1, "ANY_TAG keeps the sender's order")
  end

  -- a wildcard receive takes any sender's message, and the status tells whose
  mpi.Send(me * 100, 0, 9)
  if me == 0 then
    local seen = {}
    for _ = 1, n do
      local x, s = mpi.Recv(mpi.ANY_SOURCE, 9)
      assert(x == s.source * 100 and not seen[s.source], "wildcard")
      seen[s.source] = true
    end
  end

  -- counts: bytes of a string, elements of an array
  mpi.Send("hello", right, 3)
  mpi.Send(mp.array("f64", {1, 2, 3}), right, 4)
  local s1 = mpi.Probe(left, 3)
  assert(s1.count == 5 and s1.source == left and s1.tag == 3, "probe status")
  local _, s2 = mpi.Recv(left, 3)
  assert(s2.count == 5, "string count")
  local flag, s3 = mpi.Iprobe(mpi.ANY_SOURCE, 4)
  while not flag do flag, s3 = mpi.Iprobe(mpi.ANY_SOURCE, 4) end
  assert(s3.tag == 4, "iprobe")
  local a, s4 = mpi.Recv(left, 4)
  assert(s4.count == 3 and a[3] == 3, "array count")
  assert(not mpi.Iprobe(left, 4), "nothing left on tag 4")

  -- PROC_NULL: sends vanish, receives return at once
  mpi.Send(1, mpi.PROC_NULL, 0)
  local z, sz = mpi.Recv(mpi.PROC_NULL, 0)
  assert(z == nil and sz.source == mpi.PROC_NULL and sz.tag == mpi.ANY_TAG and sz.count == 0)
  local edge = me == n - 1 and mpi.PROC_NULL or me + 1
  local from = me == 0 and mpi.PROC_NULL or me - 1
  local y = mpi.Sendrecv(me, edge, 6, from, 6)
  if me == 0 then assert(y == nil, "open chain") else assert(y == me - 1, "open chain") end

  -- Sendrecv_replace: the array is overwritten with the neighbour's
  local buf = mp.array("i32", {me, me})
  local sr = mpi.Sendrecv_replace(buf, right, 7, left, 7)
  assert(buf[1] == left and buf[2] == left and sr.source == left, "replace")

  -- a communicator from mp: tags are per communicator
  local half = mp.world:split(me % 2)
  local hr, hn = mpi.Comm_rank(half), mpi.Comm_size(half)
  mpi.Send("world", right, 11)
  mpi.Send("half", (hr + 1) % hn, 11, half)
  local hv, hs = mpi.Recv((hr - 1) % hn, 11, half)
  assert(hv == "half" and hs.source == (hr - 1) % hn, "sub-communicator")
  assert(mpi.Recv(left, 11) == "world", "world")

  -- mp.send and mpi.Send do not mix
  mp.send(right, "mp")
  mpi.Send("mpi", right, 0)
  assert(mp.recv(left) == "mp" and mpi.Recv(left, 0) == "mpi", "channels apart")
  assert(mpi.TAG_UB >= 32767)
  return "ok"
end)}
assert(results[1] == "ok")
print("mpi_p2p ok", mp.size)
