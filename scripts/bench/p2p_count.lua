-- SPDX-License-Identifier: MIT
-- Instructions per exchange (a send and a receive of one number) of
-- mp.send/mp.recv and of the interruptible C scheme (bench.iahead), counted
-- on rank 0 under callgrind. Rank 1 sends all its messages while rank 0
-- sleeps without polling, so rank 0's receives find their message in UCX's
-- queue and its sends never wait (the queue is made long enough): what is
-- counted is the work of an exchange without its waits, the same on a
-- loaded machine as on a quiet one.
-- Run it through p2p_count.sh, which prints the counts.
-- KIND: mp (mp.send/mp.recv) or c (the C scheme); N: exchanges.
local kind, n = arg[1] or "mp", tonumber(arg[2]) or 20000
assert(mp.size == 2, "run with 2 ranks")

local function mp_ahead(iters, v, lead, pause)
  local other = 1 - mp.rank
  local send, recv = mp.send, mp.recv
  mp.barrier()
  if mp.rank == lead then
    for _ = 1, iters do send(other, v) end
    for _ = 1, iters do recv(other) end
  else
    os.execute("sleep " .. pause) -- no poll meanwhile: the messages stay in UCX's queue
    bench.collect(true)
    for _ = 1, iters do send(other, v); recv(other) end
    bench.collect(false)
  end
end

local pause = 3 -- seconds for rank 1's sends, even on a loaded machine (checked: p2p_count.sh)
if kind == "c" then mp.exec(bench.iahead, n, 8, 1, pause)
else mp.exec(mp_ahead, n, 1.5, 1, pause) end
print(kind, n, "done")
