-- SPDX-License-Identifier: MIT
-- The send window of a blocking transpose: time per transpose (median of rounds) and the
-- most bytes of sends in flight at once on any rank (mp.stats().pending_bytes_peak; "n/a"
-- on a build without it), for an n x n f64 array moved from column to row blocks.
--   mpiexec -n 8 build/mplua scripts/bench/window.lua [n=2048] [rounds=5] [iters=4]
-- MPLUA_XCHG_WINDOW sets the window (0: every send at once). scripts/bench/window.sh runs
-- it for several windows and a base build, interleaved.
local n = tonumber(arg and arg[1]) or 2048
local rounds = tonumber(arg and arg[2]) or 5
local iters = tonumber(arg and arg[3]) or 4
local res = mp.exec(function(n, rounds, iters)
  local A = mp.layout(("f64[a=%d, b=%d@1]"):format(n, n), {balanced = true})
  local B = mp.layout(("f64[a=%d@1, b=%d]"):format(n, n), {balanced = true})
  local T = mp.transpose(A, B)
  local a, out = A:alloc():fill(mp.rank), B:alloc()
  T:forward(a, out)
  local times = {}
  local peak = -1
  for r = 1, rounds do
    mp.barrier()
    mp.stats()
    local t = mp.wtime()
    for _ = 1, iters do T:forward(a, out) end
    times[r] = (mp.wtime() - t) / iters
    peak = math.max(peak, mp.stats().pending_bytes_peak or -1)
  end
  table.sort(times)
  local t = mp.allreduce(times[(rounds + 1) // 2], "max")
  peak = mp.allreduce(peak, "max")
  return mp.rank == 0 and {t, peak, T:info()} or nil
end, n, rounds, iters)
local t, peak, info = res[1], res[2], res[3]
print(("ranks %d n %d window %s: %.3f ms per transpose, sends in flight at most %s bytes "
       .. "(rank 0 sends %d bytes in %d messages)"):format(mp.size, n,
       tostring(info.window or "none"), t * 1e3, peak >= 0 and ("%d"):format(peak) or "n/a",
       info.send_bytes, info.messages))
