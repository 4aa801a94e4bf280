-- SPDX-License-Identifier: MIT
-- A server loop receiving from any source: every rank but 0 sends rank 0 K small messages,
-- then a notice on another channel; once rank 0 has every notice (a sender's messages do
-- not overtake each other, so all the others have reached its queues), it takes them all,
-- timed, from whoever sent: with mp.recv(), with mp.mpi.Recv(ANY_SOURCE, ANY_TAG), and in
-- the same job, interleaved, with C's MPI_Recv(MPI_ANY_SOURCE) and the interruptible scheme
-- (poll MPI_Improbe(MPI_ANY_SOURCE), MPI_Mrecv), after the same notices. Prints the time per
-- message (each side's median over chunks of CHUNK messages: a loop of a millisecond or two
-- on an oversubscribed machine loses its core now and then), the ratios, and
-- mp.stats().any_source_looks per message (the queued messages and queues a receive looked at).
-- Run: mpiexec -n 8 build/mpbench scripts/bench/anysrc.lua [rounds] [K]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
assert(mp.size >= 2, "run with at least 2 ranks")
local rounds = tonumber(arg and arg[1]) or 7
local K = tonumber(arg and arg[2]) or math.max(100, 20000 // (mp.size - 1))
local CHUNK = 500 -- as ANYSRC_CHUNK in mpbench.c

-- rank 0: seconds per message, and looks per message
local function server(k, mpi)
  local M = mp.mpi
  if mp.rank > 0 then
    for i = 1, k do
      if mpi then M.Send(i, 0, 0) else mp.send(0, i) end
    end
    if mpi then mp.send(0, true) else M.Send(true, 0, 1) end -- the notice
    mp.recv(0) -- napping, not ending the task, while rank 0's loop is timed
    return 0, 0
  end
  for _ = 1, mp.size - 1 do
    if mpi then mp.recv() else M.Recv(M.ANY_SOURCE, 1) end
  end
  local n, l0, chunks = k * (mp.size - 1), mp.stats().any_source_looks, {}
  for c = 1, n // CHUNK do
    local len = c < n // CHUNK and CHUNK or n - (c - 1) * CHUNK
    local t = mp.wtime()
    if mpi then
      for _ = 1, len do M.Recv(M.ANY_SOURCE, M.ANY_TAG) end
    else
      for _ = 1, len do mp.recv() end
    end
    chunks[c] = (mp.wtime() - t) / len
  end
  local t = C.median(chunks)
  l0 = (mp.stats().any_source_looks - l0) / n
  local all = {}
  for r = 1, mp.size - 1 do all[r] = r end
  mp.send(all, true)
  return t, l0
end

local looks = {}
local function mp_case(mpi)
  return function()
    local t, l = mp.exec(server, K, mpi)
    looks[mpi and "mpi" or "mp"] = l
    return t
  end
end
local med = C.interleave(rounds, {
  {"c", function() return mp.exec(bench.anysrc, K, false) end},
  {"ic", function() return mp.exec(bench.anysrc, K, true) end},
  {"mp", mp_case(false)},
  {"mpi", mp_case(true)},
})
print(string.format("ranks %d, %d rounds of %d messages from each of %d ranks (medians)",
  mp.size, rounds, K, mp.size - 1))
print(string.format("per message: mp.recv() %s  mp.mpi.Recv(ANY_SOURCE) %s  C MPI_Recv(ANY_SOURCE) %s"
  .. "  C interruptible %s", C.us(med.mp), C.us(med.mpi), C.us(med.c), C.us(med.ic)))
print(string.format("  ratio mp.recv() / C %.2fx, / interruptible C %.2fx; mp.mpi / C %.2fx",
  med.mp / med.c, med.mp / med.ic, med.mpi / med.c))
print(string.format("  looks per message: mp.recv() %.2f, mp.mpi.Recv %.2f", looks.mp, looks.mpi))
