-- ranks: 1 2 3 4 5 8  quick: 1 3
-- SPDX-License-Identifier: MIT
-- mp.mpi: bad input is a clear error naming the function, the argument and
-- the rank; a fault while other ranks block in each mpi call aborts the task
-- and the next task works, with no message of the faulted one left; the
-- deadlock detector names MPI's calls with their tags and wildcards.
local function fails(pattern, f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok and tostring(err):find(pattern),
         "expected '" .. pattern .. "', got " .. tostring(err))
end

fails("mp.mpi.Send: %[rank 0/%d+%] not inside a parallel task", mp.mpi.Send, 1, 0, 0)
fails("not inside a parallel task", mp.mpi.Recv, 0, 0)

mp.exec(function()
  local mpi = mp.mpi
  local me, n = mp.rank, mp.size
  local R = "%[rank " .. me .. "/" .. n .. "%]"
  local function fails_(pattern, f, ...)
    local ok, err = pcall(f, ...)
    assert(not ok and tostring(err):find(pattern),
           "rank " .. me .. ": expected '" .. pattern .. "', got " .. tostring(err))
  end
  fails_("bad argument #3 to 'mp.mpi.Send' %(" .. R .. " tag %-1 is negative: tags are 0%.%.TAG_UB",
         mpi.Send, 1, 0, -1)
  fails_("bad argument #3 to 'mp.mpi.Isend' %(" .. R .. " tag %d+ is above TAG_UB",
         mpi.Isend, 1, 0, mpi.TAG_UB + 1)
  fails_("bad argument #2 to 'mp.mpi.Recv' %(" .. R .. " tag %-5 is negative", mpi.Recv, 0, -5)
  fails_("bad argument #2 to 'mp.mpi.Recv' %(" .. R .. " tag expected, got string", mpi.Recv, 0, "x")
  fails_("bad argument #2 to 'mp.mpi.Ssend' %(" .. R .. " destination rank " .. n ..
         " out of range 0%.%." .. (n - 1) .. " or PROC_NULL%)", mpi.Ssend, 1, n, 0)
  fails_("bad argument #1 to 'mp.mpi.Probe' %(" .. R .. " source rank %-7 out of range",
         mpi.Probe, -7, 0)
  fails_("bad argument #1 to 'mp.mpi.Irecv' %(" .. R .. " source rank expected, got table",
         mpi.Irecv, {}, 0)
  fails_("bad argument #1 to 'mp.mpi.Send' %(" .. R .. " cannot send a thread", mpi.Send,
         coroutine.create(print), 0, 0)
  fails_("mp.mpi.Recv", mpi.Recv, 0, 0, "not a communicator")
  fails_("bad argument #1 to 'mp.mpi.Wait' %(" .. R .. " request expected, got number", mpi.Wait, 1)
  fails_("bad argument #1 to 'mp.mpi.Waitall' %(" .. R .. " list of requests expected",
         mpi.Waitall, 1)
  fails_("bad argument #1 to 'mp.mpi.Waitany' %(" .. R .. " item 2 is not a request: string",
         mpi.Waitany, {mpi.Irecv(mpi.PROC_NULL, 0), "x"})
  local q = mpi.Irecv(mpi.PROC_NULL, 0)
  fails_("item 2 is a request listed twice", mpi.Waitall, {q, q})
  fails_("bad argument #1 to 'mp.mpi.Cancel' %(" .. R .. " only receives can be cancelled",
         mpi.Cancel, mpi.Isend(1, mpi.PROC_NULL, 0))
  fails_("bad argument #1 to 'mp.mpi.Sendrecv_replace' %(" .. R .. " mp.Array expected, got table",
         mpi.Sendrecv_replace, {}, 0, 0, 0, 0)
  fails_("would wait forever", mpi.Recv, me, 1)
  fails_("would wait forever", mpi.Wait, mpi.Irecv(me, 1))
  fails_("would wait forever", mpi.Ssend, 1, me, 2)
  assert(mpi.Recv(me, 2) == 1) -- the Ssend's message itself was sent
  if n > 1 then
    fails_("mp.mpi.Reduce_scatter_block' %(" .. R .. " " .. (n + 1) .. " elements do not split " ..
           "into " .. n .. " equal blocks", mpi.Reduce_scatter_block, mp.array("f64", n + 1),
           mpi.SUM)
    -- counts that disagree
    local right, left = (me + 1) % n, (me - 1) % n
    mpi.Send(mp.array("f64", 3), right, 4)
    fails_("mp.mpi.Sendrecv_replace: " .. R .. " counts disagree: received 3 elements into an " ..
           "array of 2", function()
      mpi.Sendrecv_replace(mp.array("f64", 2), right, 3, left, 4) -- tag 3 out, tag 4 in
    end)
    mpi.Recv(left, 3)
  end
  _G.kept = mpi.Irecv(0, 99) -- for the next task
  mpi.Barrier()
end)
mp.exec(function()
  local ok, err = pcall(mp.mpi.Wait, _G.kept)
  assert(not ok and err:find("request from an earlier or aborted task"), tostring(err))
end)

-- a fault on one rank while the others block in each call
local blockers = {"Recv", "Probe", "Ssend", "Wait", "Waitall", "Waitany", "Waitsome",
                  "Sendrecv", "Barrier", "Allreduce", "Exscan"}
for _, which in ipairs(blockers) do
  local ok, err = pcall(mp.exec, function(w)
    local mpi = mp.mpi
    local me, n = mp.rank, mp.size
    local culprit = n - 1
    if me == culprit then
      if n > 1 then mpi.Send("stale", 0, 5) end -- must never be seen afterwards
      error("boom in " .. w)
    end
    local any, t = mpi.ANY_SOURCE, 6
    if w == "Recv" then mpi.Recv(any, t)
    elseif w == "Probe" then mpi.Probe(culprit, t)
    elseif w == "Ssend" then mpi.Ssend(1, culprit, t)
    elseif w == "Wait" then mpi.Wait(mpi.Irecv(any, t))
    elseif w == "Waitall" then mpi.Waitall({mpi.Irecv(culprit, t), mpi.Issend(1, culprit, t)})
    elseif w == "Waitany" then mpi.Waitany({mpi.Irecv(culprit, t)})
    elseif w == "Waitsome" then mpi.Waitsome({mpi.Irecv(any, t)})
    elseif w == "Sendrecv" then mpi.Sendrecv(1, culprit, t, culprit, t)
    elseif w == "Barrier" then mpi.Barrier()
    elseif w == "Allreduce" then mpi.Allreduce(1, mpi.SUM)
    elseif w == "Exscan" then mpi.Exscan(1, mpi.SUM) end
  end, which)
  assert(not ok and tostring(err):find("boom in " .. which), tostring(err))
  -- the next task works, and nothing of the faulted one is left
  local v = mp.exec(function()
    local mpi = mp.mpi
    local me, n = mp.rank, mp.size
    local got = mpi.Sendrecv(me, (me + 1) % n, 5, (me - 1) % n, 5)
    assert(got == (me - 1) % n, "a stale message was delivered: " .. tostring(got))
    mpi.Barrier()
    assert(not mpi.Iprobe(mpi.ANY_SOURCE, mpi.ANY_TAG), "a message of the faulted task is left")
    return mpi.Allreduce(1, mpi.SUM)
  end)
  assert(v == mp.size)
end

-- deadlocks name MPI's calls, tags and wildcards
if mp.size >= 3 then
  local ok, err = pcall(mp.exec, function()
    local mpi = mp.mpi
    if mp.rank == 2 then mpi.Recv(mpi.ANY_SOURCE, 7) end
  end)
  assert(not ok and tostring(err):find("mpi.Recv%(ANY_SOURCE, tag 7%): %[rank 2/%d+%] would " ..
         "wait forever: every other rank has finished the task"), tostring(err))
  ok, err = pcall(mp.exec, function()
    local mpi = mp.mpi
    if mp.rank == 2 then mpi.Recv(mpi.ANY_SOURCE, 7) end
    if mp.rank == 1 then mpi.Wait(mpi.Irecv(0, mpi.ANY_TAG)) end
  end)
  assert(not ok and tostring(err):find("rank 1 waits in mpi.Wait%(ANY_TAG%) from rank 0") and
         tostring(err):find("rank 2 waits in mpi.Recv%(ANY_SOURCE, tag 7%)"), tostring(err))
end
print("mpi_errors ok", mp.size)
