-- SPDX-License-Identifier: MIT
-- Many ranks: what the runtime's own protocols cost as the job grows, beside C MPI's
-- MPI_Barrier and a 1 MiB MPI_Bcast at the same rank count, interleaved in one job: an
-- empty task, an abort and the next task (recovery), a deadlock report, a 1 MiB bcast,
-- a pool of 1000 empty tasks, a transpose of a 1024 x 1024 f64 array. Medians of the
-- rounds, in ms. scale.sh runs it at 2, 8, 16, 32 and 64 ranks and prints the table.
-- Run: mpiexec -n P build/mpbench scripts/bench/scale.lua [rounds]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
local rounds = tonumber(arg and arg[1]) or 5
local P = mp.size
local MiB = 1 << 20
local REPS = P <= 8 and 20 or P <= 16 and 8 or 4 -- operations per round (oversubscribed: slow)
local NT = 1024 -- the transpose's n x n (divisible by every rank count measured)
local empty = function() end

local function per(reps, f)
  local t = mp.wtime()
  for _ = 1, reps do f() end
  return (mp.wtime() - t) / reps
end

local abort_round = C.abort_round

local function deadlock_round()
  local ok, e = pcall(mp.exec, function() mp.recv((mp.rank + 1) % mp.size) end)
  assert(not ok and e.deadlock, tostring(e))
end

local function mp_bcast(reps, bytes)
  local a = mp.rank == 0 and mp.array("u8", bytes):fill(1) or nil
  mp.bcast(a)
  mp.barrier()
  local t = mp.wtime()
  for _ = 1, reps do mp.bcast(a) end
  return (mp.wtime() - t) / reps
end

local function mp_transpose(reps, n)
  local A = mp.layout(("f64[a=%d, b=%d@1]"):format(n, n))
  local B = mp.layout(("f64[a=%d@1, b=%d]"):format(n, n))
  local plan = mp.transpose(A, B)
  local a, out = A:alloc():fill(mp.rank), B:alloc()
  plan:forward(a, out)
  mp.barrier()
  local t = mp.wtime()
  for _ = 1, reps do plan:forward(a, out) end
  return (mp.wtime() - t) / reps
end

local function pool(n)
  local got = 0
  mp.pool{sow = function(k) if k <= n then return k end end, work = function(x) return x end,
          reap = function() got = got + 1 end, progress = false}
  assert(got == n)
end

local med = C.interleave(rounds, {
  {"c_barrier", function() return mp.exec(bench.barrier, REPS) end},
  {"c_bcast", function() return mp.exec(bench.bcast, REPS, MiB) end},
  {"task", function() return per(REPS, function() mp.exec(empty) end) end},
  -- an untimed abort first: the first abort after the C kernels renews the communicator
  -- they used (mplua_comm), a cost of those kernels, not of an abort
  {"abort", function() abort_round(); return per(REPS // 2, abort_round) end},
  {"deadlock", function() abort_round(); return per(2, deadlock_round) end},
  {"bcast", function() return mp.exec(mp_bcast, REPS, MiB) end},
  {"pool", function() return per(1, function() pool(1000) end) end},
  {"transpose", function() return mp.exec(mp_transpose, REPS, NT) end},
})
local ms = function(x) return ("%.3g"):format(x * 1e3) end
print(("ranks %d, %d rounds (medians, ms)"):format(P, rounds))
print("| ranks | empty task | abort + recovery | deadlock report | 1 MiB bcast | pool of 1000 | "
      .. "transpose 1024^2 f64 | C barrier | C 1 MiB bcast |")
print(("| %d | %s | %s | %s | %s | %s | %s | %s | %s |"):format(P, ms(med.task), ms(med.abort),
  ms(med.deadlock), ms(med.bcast), ms(med.pool), ms(med.transpose), ms(med.c_barrier),
  ms(med.c_bcast)))
