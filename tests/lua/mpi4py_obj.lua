-- ranks: 1 2 3 4 5 8  quick: 2
-- SPDX-License-Identifier: MIT
-- mpi4py's object tests (test/test_p2p_obj.py, test_cco_obj.py,
-- test_cco_ngh_obj.py) and its group tests (test_group.py), translated to mp.mpi case by case: each case runs
-- on COMM_WORLD, its Dup, a communicator of this rank alone (COMM_SELF:
-- Comm_split by rank) and that one's Dup, as mpi4py's four classes do.
-- Their messages are mpi4py's in Lua (nil, booleans, integers up to
-- +-2^63-1, floats, complex numbers, a string, a list, a dictionary, a set
-- as keys, and the list of all of them; nil is not a list item for
-- Scatter, Alltoall and Neighbor_alltoall, a list of nils having no length
-- in Lua). What has no equivalent in mp.mpi
-- is listed in SKIPPED below, with why; the run prints it.
local SKIPPED = {
  ["test_p2p_obj testIRecvAndBSend, testIRecvAndIBSend"] =
    "buffered sends (MPI_Bsend, MPI_Attach_buffer): not in mp.mpi (every send is buffered)",
  ["test_p2p_obj testMixed"] =
    "a raw buffer with a datatype (comm.Isend([buf, 'B'])): mp.mpi sends Lua values",
  ["test_p2p_obj testRecvObjArg"] = "a receive buffer argument: a Lua receive returns the value",
  ["test_p2p_obj testCommLock"] = "mpi4py's per-communicator thread locks (Python only)",
  ["test_p2p_obj testCancel (Issend)"] =
    "cancelling a send (MPI 4.0 deprecates it): ported with a cancelled Irecv",
  ["test_cco_obj REPLACE, NO_OP"] =
    "MPI_REPLACE, MPI_NO_OP (one-sided accumulate ops): not mp.mpi ops",
  ["test_cco_obj bad roots' error class"] =
    "MPI_ERR_ROOT: errors are Lua errors here (ported: a bad root raises)",
  ["test_p2p_obj_matched (Mprobe, Improbe, Mrecv, Imrecv)"] = "matched probes: not in mp.mpi",
  ["test_group TestGroupNull, TestGroupEmpty.testFree"] =
    "MPI_GROUP_NULL and freeing GROUP_EMPTY: groups are values here (nil, no free)",
  ["test_cco_obj_inter"] = "intercommunicators: not in mp.mpi",
}

package.path = "lib/?.lua;" .. package.path
local list_eq = require("mpi_checks").same

local function cases()
  local mpi = mp.mpi
  local messages = {n = 0}
  local basic = {true, false, -7, 0, 7, 1 << 31, math.mininteger + 1, math.maxinteger,
                 -2.17, 0.0, 3.14, mp.complex(1, 2), mp.complex(2, -3), "mpi4py"}
  local function add(v) messages.n = messages.n + 1; messages[messages.n] = v end
  add(nil)
  for _, v in ipairs(basic) do add(v) end
  add(table.move(basic, 1, #basic, 1, {}))
  local dict, set = {}, {}
  for k, v in ipairs(basic) do -- a set's keys: not the complex numbers (userdata keys
    dict["k" .. k] = v           -- are compared by identity in Lua)
    if type(v) ~= "userdata" then set[v] = true end
  end
  add(dict)
  add(set)
  local all = table.move(messages, 1, messages.n, 1, {n = messages.n})
  add(all)

  local function eq(a, b)
    if type(a) ~= "table" or type(b) ~= "table" then
      return a == b or (a ~= a and b ~= b)
    end
    for k, v in pairs(a) do if not eq(v, b[k]) then return false end end
    for k in pairs(b) do if a[k] == nil then return false end end
    return true
  end
  local function each(f) for i = 1, messages.n do f(messages[i]) end end
  -- the messages as list items (alltoall, scatter): a list of nils has no length in Lua
  local function each_item(f) for i = 2, messages.n do f(messages[i]) end end
  local function inactive(req)
    local ok, err = pcall(mpi.Test, req)
    return not ok and tostring(err):find("inactive") ~= nil
  end
  local function sorted(t) t = table.move(t, 1, #t, 1, {}); table.sort(t); return t end

  local P = {} -- test_p2p_obj.py

  -- SendAndRecv, SSendAndRecv: a chain along the ranks with send
  local function chain(comm, send)
    local size, rank = mpi.Comm_size(comm), mpi.Comm_rank(comm)
    each(function(s)
      send(s, mpi.PROC_NULL, 0, comm)
      assert(mpi.Recv(mpi.PROC_NULL, 0, comm) == nil)
    end)
    if size == 1 then return end
    each(function(s)
      local r
      if rank == 0 then send(s, rank + 1, 0, comm); r = s
      elseif rank == size - 1 then r = mpi.Recv(rank - 1, 0, comm)
      else r = mpi.Recv(rank - 1, 0, comm); send(r, rank + 1, 0, comm) end
      assert(eq(r, s))
    end)
  end
  function P.SendAndRecv(comm) chain(comm, mpi.Send) end
  function P.SSendAndRecv(comm) chain(comm, mpi.Ssend) end

  -- ISendAndRecv, ISSendAndRecv: to PROC_NULL, to itself, round a ring
  local function isend_recv(comm, isend, sync)
    local size, rank = mpi.Comm_size(comm), mpi.Comm_rank(comm)
    each(function(s)
      local req = isend(s, mpi.PROC_NULL, 0, comm)
      mpi.Wait(req)
      assert(inactive(req) and mpi.Recv(mpi.PROC_NULL, 0, comm) == nil)
    end)
    each(function(s)
      local req = isend(s, rank, 0, comm)
      if sync then assert(mpi.Test(req) == false, "an Issend completes when matched") end
      local r = mpi.Recv(rank, 0, comm)
      while not mpi.Test(req) do end
      assert(inactive(req) and eq(r, s))
    end)
    each(function(s)
      local req = isend(s, (rank + 1) % size, 0, comm)
      local r = mpi.Recv((rank - 1) % size, 0, comm)
      mpi.Wait(req)
      assert(inactive(req) and eq(r, s))
    end)
  end
  function P.ISendAndRecv(comm) isend_recv(comm, mpi.Isend, false) end
  function P.ISSendAndRecv(comm) isend_recv(comm, mpi.Issend, true) end

  function P.IRecvAndSend(comm)
    local size, rank = mpi.Comm_size(comm), mpi.Comm_rank(comm)
    each(function(s)
      local req = mpi.Irecv(mpi.PROC_NULL, 0, comm)
      mpi.Send(s, mpi.PROC_NULL, 0, comm)
      assert(mpi.Wait(req) == nil and inactive(req))
    end)
    each(function(s)
      local req = mpi.Irecv(rank, 0, comm)
      assert(mpi.Test(req) == false)
      mpi.Send(s, rank, 0, comm)
      local flag, r = mpi.Test(req)
      while not flag do flag, r = mpi.Test(req) end
      assert(inactive(req) and eq(r, s))
    end)
    each(function(s)
      local req = mpi.Irecv((rank - 1) % size, 0, comm)
      mpi.Send(s, (rank + 1) % size, 0, comm)
      assert(eq(mpi.Wait(req), s) and inactive(req))
    end)
    each(function(s)
      local reqs = {mpi.Irecv(rank, 1, comm), mpi.Irecv(rank, 2, comm), mpi.Irecv(rank, 3, comm)}
      for i = 1, 3 do
        mpi.Send(s, rank, i, comm)
        local index, obj = mpi.Waitany(reqs)
        assert(index == i and eq(obj, s) and inactive(reqs[index]))
      end
      assert(mpi.Waitany(reqs) == nil) -- MPI_UNDEFINED: every request inactive
    end)
    each(function(s)
      local reqs = {mpi.Irecv(rank, 1, comm), mpi.Irecv(rank, 2, comm), mpi.Irecv(rank, 3, comm)}
      assert(mpi.Testany(reqs) == false)
      for i = 1, 3 do
        mpi.Send(s, rank, i, comm)
        local flag, index, obj = mpi.Testany(reqs)
        while not flag do flag, index, obj = mpi.Testany(reqs) end
        assert(index == i and eq(obj, s) and inactive(reqs[i]))
      end
      local flag, index = mpi.Testany(reqs)
      assert(flag == true and index == nil)
    end)
  end

  function P.IRecvAndISend(comm)
    local size, rank = mpi.Comm_size(comm), mpi.Comm_rank(comm)
    local dst, src = (rank + 1) % size, (rank - 1) % size
    each(function(s)
      local rreq = mpi.Irecv(src, 0, comm)
      local sreq = mpi.Isend(s, dst, 0, comm)
      local reqs = {sreq, rreq}
      local i1, m1 = mpi.Waitany(reqs)
      assert(i1 == 1 or i1 == 2)
      if i1 == 2 then assert(eq(m1, s)) else assert(m1 == nil) end
      local i2, m2 = mpi.Waitany(reqs)
      assert(i2 ~= i1 and inactive(sreq) and inactive(rreq))
      if i2 == 2 then assert(eq(m2, s)) else assert(m2 == nil) end
    end)
    each(function(s)
      local reqs = {mpi.Isend(s, dst, 0, comm)}
      reqs[2] = mpi.Irecv(src, 0, comm)
      local got = {}
      for _ = 1, 2 do
        local flag, i, m = mpi.Testany(reqs)
        while not flag do flag, i, m = mpi.Testany(reqs) end
        assert(not got[i])
        got[i] = true
        if i == 2 then assert(eq(m, s)) else assert(m == nil) end
      end
    end)
    each(function(s)
      local rreq = mpi.Irecv(src, 0, comm)
      local sreq = mpi.Isend(s, dst, 0, comm)
      local vals = mpi.Waitall({sreq, rreq})
      assert(vals[1] == nil and eq(vals[2], s) and inactive(sreq) and inactive(rreq))
    end)
    each(function(s)
      local rreq = mpi.Irecv(rank, 1, comm)
      assert(mpi.Testall({rreq}) == false)
      local sreq = mpi.Isend(s, rank, 1, comm)
      while true do
        local flag, vals = mpi.Testall({sreq, rreq})
        if flag then assert(vals[1] == nil and eq(vals[2], s)) break end
      end
    end)
  end

  -- six sends to itself; three receives
  local function isends(isend, s, rank, comm)
    local reqs = {}
    for k = 1, 6 do reqs[k] = isend(s, rank, 0, comm) end
    return reqs
  end
  local function recv3(s, rank, comm)
    for _ = 1, 3 do assert(eq(mpi.Recv(rank, 0, comm), s)) end
  end

  function P.ManyISendAndRecv(comm)
    local rank = mpi.Comm_rank(comm)
    each(function(s)
      local reqs = isends(mpi.Isend, s, rank, comm)
      if not mpi.Testall(reqs) then
        assert(type(mpi.Testsome(reqs)) == "table")
      end
      recv3(s, rank, comm)
      recv3(s, rank, comm)
      local flag = mpi.Testall(reqs)
      if not flag then -- some completed in Testsome above: Waitall takes the others
        mpi.Waitall(reqs)
      end
    end)
    each(function(s)
      local reqs = isends(mpi.Isend, s, rank, comm)
      recv3(s, rank, comm)
      assert(mpi.Waitany(reqs) == 1)
      local idx1 = mpi.Waitsome(reqs) or {}
      recv3(s, rank, comm)
      local idx2 = mpi.Waitsome(reqs) or {}
      assert(6 == 1 + #idx1 + #idx2)
      local idx = {1}
      for _, i in ipairs(idx1) do idx[#idx + 1] = i end
      for _, i in ipairs(idx2) do idx[#idx + 1] = i end
      assert(list_eq(sorted(idx), {1, 2, 3, 4, 5, 6}))
      mpi.Waitall(reqs)
    end)
  end

  function P.ManyISSendAndRecv(comm)
    local rank = mpi.Comm_rank(comm)
    each(function(s)
      local reqs = isends(mpi.Issend, s, rank, comm)
      assert(mpi.Testall(reqs) == false)
      recv3(s, rank, comm)
      assert(mpi.Testall(reqs) == false)
      local flag, index = mpi.Testany(reqs)
      if flag then assert(index == 1) end
      local idx = mpi.Testsome(reqs)
      for _, i in ipairs(idx or {}) do assert(i >= 1 and i <= 3 and (not flag or i ~= 1)) end
      for _ = 1, 3 do
        assert(mpi.Testall(reqs) == false)
        assert(eq(mpi.Recv(rank, 0, comm), s))
      end
      local done = false
      for _ = 1, 10 do done = done or mpi.Testall(reqs); if done then break end end
      assert(done)
    end)
  end

  function P.Cancel(comm) -- a receive cancelled (see SKIPPED)
    local rank = mpi.Comm_rank(comm)
    each(function(s)
      local req = mpi.Irecv(rank, 0, comm)
      assert(mpi.Cancel(req) == true)
      local v, st = mpi.Wait(req)
      assert(v == nil and st.cancelled)
      mpi.Send(s, rank, 0, comm) -- not taken by the cancelled receive
      assert(eq(mpi.Recv(rank, 0, comm), s))
    end)
  end

  local function irecv_then(send, comm)
    local rank = mpi.Comm_rank(comm)
    each(function(s)
      local r1, r2, r3 = mpi.Irecv(rank, 1, comm), mpi.Irecv(rank, 2, comm),
                         mpi.Irecv(rank, 3, comm)
      send(s, rank, comm)
      assert(eq(mpi.Wait(r3), s) and eq(mpi.Wait(r2), s) and eq(mpi.Wait(r1), s))
    end)
  end
  function P.IRecvAndSSend(comm)
    irecv_then(function(s, rank, c)
      for tag = 3, 1, -1 do mpi.Ssend(s, rank, tag, c) end
      mpi.Ssend(s, mpi.PROC_NULL, 3, c)
    end, comm)
  end
  function P.IRecvAndISSend(comm)
    irecv_then(function(s, rank, c)
      mpi.Waitall({mpi.Issend(s, rank, 3, c), mpi.Issend(s, rank, 2, c), mpi.Issend(s, rank, 1, c)})
      mpi.Wait(mpi.Issend(s, mpi.PROC_NULL, 3, c))
    end, comm)
  end

  function P.Sendrecv(comm)
    local size, rank = mpi.Comm_size(comm), mpi.Comm_rank(comm)
    each(function(s)
      local r, st = mpi.Sendrecv(s, (rank + 1) % size, 0, (rank - 1) % size, 0, comm)
      assert(eq(r, s) and st.source == (rank - 1) % size and st.tag == 0)
      assert(mpi.Sendrecv(s, mpi.PROC_NULL, 0, mpi.PROC_NULL, 0, comm) == nil)
    end)
  end

  function P.PingPong01(comm)
    local size, rank = mpi.Comm_size(comm), mpi.Comm_rank(comm)
    each(function(s)
      mpi.Send(s, mpi.PROC_NULL, 0, comm)
      assert(mpi.Recv(mpi.PROC_NULL, 0, comm) == nil)
    end)
    if size == 1 then return end
    each(function(s)
      local r = s
      if rank == 0 then mpi.Send(s, 1, 0, comm); r = mpi.Recv(1, 0, comm)
      elseif rank == 1 then r = mpi.Recv(0, 0, comm); mpi.Send(r, 0, 0, comm) end
      assert(eq(r, s))
    end)
  end

  function P.Probe(comm)
    comm = mpi.Comm_dup(comm)
    local rank = mpi.Comm_rank(comm)
    assert(mpi.Iprobe(mpi.ANY_SOURCE, mpi.ANY_TAG, comm) == false)
    each(function(s)
      local req = mpi.Issend(s, rank, 123, comm)
      local flag, st = mpi.Iprobe(mpi.ANY_SOURCE, mpi.ANY_TAG, comm)
      while not flag do flag, st = mpi.Iprobe(mpi.ANY_SOURCE, mpi.ANY_TAG, comm) end
      assert(st.source == rank and st.tag == 123)
      st = mpi.Probe(mpi.ANY_SOURCE, mpi.ANY_TAG, comm)
      assert(st.source == rank and st.tag == 123)
      assert(mpi.Test(req) == false, "a probe does not match")
      assert(eq(mpi.Recv(rank, 123, comm), s))
      assert(select("#", mpi.Wait(req)) == 0 and inactive(req))
    end)
    mpi.Comm_free(comm)
  end

  local function some_recv(comm, call, lists)
    comm = mpi.Comm_dup(comm)
    local rank = mpi.Comm_rank(comm)
    local reqs = {}
    for i = 0, 5 do reqs[i + 1] = mpi.Irecv(rank, i, comm) end
    if call == mpi.Testsome then
      local idx, vals, sts = mpi.Testsome(reqs)
      assert(#idx == 0 and #vals == 0 and #sts == 0)
    end
    for _, list in ipairs(lists) do
      for _, i in ipairs(list) do mpi.Ssend("abc", rank, i, comm) end
      local idx, vals, sts = call(reqs)
      local want = {}
      for k, i in ipairs(list) do want[k] = i + 1 end
      assert(list_eq(sorted(idx), sorted(want)))
      for k = 1, #idx do
        assert(vals[k] == "abc" and inactive(reqs[idx[k]]) and sts[k].source == rank)
        assert(sts[k].tag == idx[k] - 1)
      end
    end
    assert(call(reqs) == nil, "every request inactive")
  end
  function P.WaitSomeRecv(comm) some_recv(comm, mpi.Waitsome, {{5}, {3, 1, 2}, {0, 4}}) end
  function P.TestSomeRecv(comm) some_recv(comm, mpi.Testsome, {{5}, {}, {3, 1, 2}, {}, {0, 4}}) end

  local function some_send(comm, call, lists)
    comm = mpi.Comm_dup(comm)
    local rank = mpi.Comm_rank(comm)
    local reqs = {}
    for i = 0, 5 do reqs[i + 1] = mpi.Issend("abc", rank, i, comm) end
    if call == mpi.Testsome then assert(#mpi.Testsome(reqs) == 0) end
    for _, list in ipairs(lists) do
      for _, i in ipairs(list) do assert(mpi.Recv(rank, i, comm) == "abc") end
      local want = {}
      for k, i in ipairs(list) do want[k] = i + 1 end
      local idx = {}
      while #idx < #want do
        local more, vals = call(reqs)
        for k, i in ipairs(more) do idx[#idx + 1] = i; assert(vals[k] == nil) end
      end
      assert(list_eq(sorted(idx), sorted(want)))
      for _, i in ipairs(idx) do assert(inactive(reqs[i])) end
    end
    assert(call(reqs) == nil)
  end
  function P.WaitSomeSend(comm) some_send(comm, mpi.Waitsome, {{5}, {3, 1, 2}, {0, 4}}) end
  function P.TestSomeSend(comm) some_send(comm, mpi.Testsome, {{5}, {}, {3, 1, 2}, {}, {0, 4}}) end

  local C = {} -- test_cco_obj.py
  local function sum(n) return n * (n - 1) // 2 end

  function C.Barrier(comm) mpi.Barrier(comm) end
  function C.Bcast(comm)
    each(function(s)
      for root = 0, mpi.Comm_size(comm) - 1 do assert(eq(mpi.Bcast(s, root, comm), s)) end
    end)
  end
  function C.Gather(comm)
    local size, rank = mpi.Comm_size(comm), mpi.Comm_rank(comm)
    each(function(s)
      for root = 0, size - 1 do
        local r = mpi.Gather(s, root, comm)
        if rank == root then
          for k = 1, size do assert(eq(r[k], s)) end
        else assert(r == nil) end
      end
    end)
  end
  function C.Scatter(comm)
    local size, rank = mpi.Comm_size(comm), mpi.Comm_rank(comm)
    each_item(function(s)
      for root = 0, size - 1 do
        local t
        if rank == root then t = {}; for k = 1, size do t[k] = s end end
        assert(eq(mpi.Scatter(t, root, comm), s))
      end
    end)
  end
  function C.Allgather(comm)
    each(function(s)
      local r = mpi.Allgather(s, comm)
      for k = 1, mpi.Comm_size(comm) do assert(eq(r[k], s)) end
    end)
  end
  function C.Alltoall(comm)
    local size = mpi.Comm_size(comm)
    each_item(function(s)
      local t = {}
      for k = 1, size do t[k] = s end
      local r = mpi.Alltoall(t, comm)
      for k = 1, size do assert(eq(r[k], s)) end
    end)
  end
  local function prod() return 0 end -- of 0, 1, ..., size - 1
  function C.Reduce(comm)
    local size, rank = mpi.Comm_size(comm), mpi.Comm_rank(comm)
    for root = 0, size - 1 do
      for _, op in ipairs({mpi.SUM, mpi.PROD, mpi.MAX, mpi.MIN, mpi.MAXLOC, mpi.MINLOC}) do
        local loc = op == mpi.MAXLOC or op == mpi.MINLOC
        local v = mpi.Reduce(loc and {rank, rank} or rank, op, root, comm)
        if rank ~= root then assert(v == nil)
        elseif op == mpi.SUM then assert(v == sum(size))
        elseif op == mpi.PROD then assert(v == prod(size))
        elseif op == mpi.MAX then assert(v == size - 1)
        elseif op == mpi.MIN then assert(v == 0)
        elseif op == mpi.MAXLOC then assert(v[1] == size - 1 and v[2] == size - 1)
        else assert(v[1] == 0 and v[2] == 0) end
      end
    end
    for _, root in ipairs({-size, size}) do
      assert(not pcall(mpi.Reduce, 0, mpi.SUM, root, comm), "bad root " .. root)
    end
  end
  function C.Allreduce(comm)
    local size, rank = mpi.Comm_size(comm), mpi.Comm_rank(comm)
    assert(mpi.Allreduce(rank, mpi.SUM, comm) == sum(size))
    assert(mpi.Allreduce(rank, mpi.PROD, comm) == prod(size))
    assert(mpi.Allreduce(rank, mpi.MAX, comm) == size - 1)
    assert(mpi.Allreduce(rank, mpi.MIN, comm) == 0)
    assert(mpi.Allreduce({rank, rank}, mpi.MAXLOC, comm)[2] == size - 1)
    assert(mpi.Allreduce({rank, rank}, mpi.MINLOC, comm)[2] == 0)
  end
  function C.Scan(comm)
    local size, rank = mpi.Comm_size(comm), mpi.Comm_rank(comm)
    assert(mpi.Scan(size, mpi.SUM, comm) == size * (rank + 1))
    assert(mpi.Scan(rank, mpi.SUM, comm) == sum(rank + 1))
    local mn, mx = mpi.Scan({rank, rank}, mpi.MINLOC, comm), mpi.Scan({rank, rank}, mpi.MAXLOC, comm)
    assert(mn[1] == 0 and mn[2] == 0 and mx[1] == rank and mx[2] == rank)
  end
  function C.Exscan(comm)
    local size, rank = mpi.Comm_size(comm), mpi.Comm_rank(comm)
    local s, r = mpi.Exscan(size, mpi.SUM, comm), mpi.Exscan(rank, mpi.SUM, comm)
    local mn = mpi.Exscan({rank, rank}, mpi.MINLOC, comm)
    local mx = mpi.Exscan({rank, rank}, mpi.MAXLOC, comm)
    if rank == 0 then assert(s == nil and r == nil and mn == nil and mx == nil)
    else
      assert(s == size * rank and r == sum(rank))
      assert(mn[1] == 0 and mn[2] == 0 and mx[1] == rank - 1 and mx[2] == rank - 1)
    end
  end

  local N = {} -- test_cco_ngh_obj.py
  local function topo_comms(comm)
    local size, rank = mpi.Comm_size(comm), mpi.Comm_rank(comm)
    local n, m = size // 2, size // 3 -- mpi4py's int(size**1/2.0), int(size**1/3.0)
    local dims = m * m * m == size and {m, m, m} or n * n == size and {n, n} or {size}
    local periods = {}
    for k = 1, #dims do periods[k] = true end
    local index, edges = {}, {}
    for i = 0, size - 1 do
      edges[#edges + 1] = (i - 1) % size
      edges[#edges + 1] = (i + 1) % size
      index[#index + 1] = #edges
    end
    return {
      mpi.Cart_create(comm, dims, periods),
      mpi.Graph_create(comm, index, edges),
      mpi.Dist_graph_create_adjacent(comm, {(rank - 2) % size, (rank - 1) % size}, nil,
                                     {(rank + 1) % size, (rank + 2) % size}, nil),
    }
  end
  local function counts(c)
    local t = mpi.Topo_test(c)
    if t == mpi.CART then return 2 * mpi.Cartdim_get(c), 2 * mpi.Cartdim_get(c) end
    if t == mpi.GRAPH then
      local k = mpi.Graph_neighbors_count(c, mpi.Comm_rank(c))
      return k, k
    end
    local indeg, outdeg = mpi.Dist_graph_neighbors_count(c)
    return indeg, outdeg
  end
  function N.NeighborAllgather(comm)
    for _, c in ipairs(topo_comms(comm)) do
      local rsize = counts(c)
      each(function(s)
        local r = mpi.Neighbor_allgather(s, c)
        for k = 1, rsize do assert(eq(r[k], s)) end
      end)
      mpi.Comm_free(c)
    end
  end
  function N.NeighborAlltoall(comm)
    for _, c in ipairs(topo_comms(comm)) do
      local rsize, ssize = counts(c)
      each_item(function(s)
        local t = {}
        for k = 1, ssize do t[k] = s end
        local r = mpi.Neighbor_alltoall(t, c)
        for k = 1, rsize do assert(eq(r[k], s)) end
      end)
      mpi.Comm_free(c)
    end
  end

  local G = {} -- test_group.py: on GROUP_EMPTY, COMM_SELF's group, COMM_WORLD's
  local function G_cases(g)
    local cmp, E = mpi.Group_compare, mpi.GROUP_EMPTY
    local n = mpi.Group_size(g)
    assert(cmp(g, g) == mpi.IDENT)
    local c = cmp(g, mpi.Comm_group(mpi.COMM_WORLD))
    assert(c == mpi.IDENT or c == mpi.SIMILAR or c == mpi.UNEQUAL)
    assert(not pcall(cmp, g, nil), "Compare with no group raises")
    assert(cmp(mpi.Group_union(E, g), g) == mpi.IDENT)
    assert(cmp(mpi.Group_union(g, E), g) == mpi.IDENT)
    assert(cmp(mpi.Group_union(g, g), g) == mpi.IDENT)
    assert(cmp(mpi.Group_difference(E, g), E) == mpi.IDENT)
    assert(cmp(mpi.Group_difference(g, E), g) == mpi.IDENT)
    assert(cmp(mpi.Group_difference(g, g), E) == mpi.IDENT)
    assert(cmp(mpi.Group_intersection(E, g), E) == mpi.IDENT)
    assert(cmp(mpi.Group_intersection(g, E), E) == mpi.IDENT)
    assert(cmp(mpi.Group_intersection(g, g), g) == mpi.IDENT)
    assert(cmp(mpi.Group_incl(g, {}), E) == mpi.IDENT)
    assert(cmp(mpi.Group_excl(g, {}), g) == mpi.IDENT)
    if n > 0 then
      assert(cmp(mpi.Group_range_incl(g, {}), E) == mpi.IDENT)
      assert(cmp(mpi.Group_range_incl(g, {{0, n - 1, 1}}), g) == mpi.IDENT)
      assert(cmp(mpi.Group_range_excl(g, {}), g) == mpi.IDENT)
      assert(cmp(mpi.Group_range_excl(g, {{0, n - 1, 1}}), E) == mpi.IDENT)
    end
    local r1 = {}
    for _ = 1, 3 do for r = 0, n - 1 do r1[#r1 + 1] = r end end
    assert(list_eq(mpi.Group_translate_ranks(g, r1, g), r1))
    if n > 0 then
      local nulls = {}
      for k = 1, 10 do nulls[k] = mpi.PROC_NULL end
      assert(list_eq(mpi.Group_translate_ranks(g, nulls, g), nulls))
      for _, r in ipairs(mpi.Group_translate_ranks(g, r1, E)) do assert(r == mpi.UNDEFINED) end
    end
  end
  function G.GroupEmpty()
    local g = mpi.GROUP_EMPTY
    assert(mpi.Group_size(g) == 0 and mpi.Group_rank(g) == mpi.UNDEFINED)
    G_cases(g)
  end
  function G.GroupSelf(comm)
    local g = mpi.Comm_group(comm)
    assert(mpi.Group_size(g) == 1 and mpi.Group_rank(g) == 0)
    G_cases(g)
  end
  function G.GroupWorld()
    local g = mpi.Comm_group(mpi.COMM_WORLD)
    local size, rank = mpi.Group_size(g), mpi.Group_rank(g)
    assert(size >= 1 and rank >= 0 and rank < size)
    G_cases(g)
  end

  -- mpi4py's four classes: World, WorldDup, Self, SelfDup
  local world = mpi.COMM_WORLD
  local self = mpi.Comm_split(world, mpi.Comm_rank(world))
  local comms = {World = world, WorldDup = mpi.Comm_dup(world), Self = self,
                 SelfDup = mpi.Comm_dup(self)}
  local ran = 0
  for _, name in ipairs({"GroupEmpty", "GroupSelf", "GroupWorld"}) do
    local ok, err = pcall(G[name], comms.Self)
    if not ok then error(("test_group %s: %s"):format(name, tostring(err)), 0) end
    ran = ran + 1
  end
  for _, suite in ipairs({P, C, N}) do
    local names = {}
    for name in pairs(suite) do names[#names + 1] = name end
    table.sort(names) -- every rank in the same order
    for _, name in ipairs(names) do
      for _, cname in ipairs({"World", "WorldDup", "Self", "SelfDup"}) do
        local ok, err = pcall(suite[name], comms[cname])
        if not ok then error(("test%s (%s): %s"):format(name, cname, tostring(err)), 0) end
        ran = ran + 1
      end
    end
  end
  return ran
end

local ran = mp.exec(cases)
assert(ran == (18 + 10 + 2) * 4 + 3, "cases run: " .. tostring(ran))
local skipped = {}
for k, why in pairs(SKIPPED) do skipped[#skipped + 1] = ("  %s: %s"):format(k, why) end
table.sort(skipped)
print(("mpi4py_obj: %d cases run (30 of mpi4py's object tests on 4 communicators, and the " ..
       "3 classes of test_group.py); not ported:\n%s"):format(ran, table.concat(skipped, "\n")))
