-- SPDX-License-Identifier: MIT
-- Tracing's cost, same job, interleaved rounds (medians):
--   p2p round trip, send+recv to itself on rank 0 and 1 MiB bandwidth,
--   untraced vs traced (a recording of 65536 events per rank around the task;
--   the ring wraps, as in long runs);
--   mp.trace.stop with 65000 events per rank vs a raw MPI_Gather of the same
--   bytes plus writing a file of the trace's size.
-- Run: mpiexec -n 4 build/mpbench scripts/bench/trace.lua [rounds]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
assert(mp.size >= 2, "run with at least 2 ranks")
local rounds = tonumber(arg and arg[1]) or 7
local N = 20000
local MiB = 1 << 20
local big = string.rep("b", MiB)

local pingpong, stream = C.pingpong, C.stream

local function traced(f, ...)
  mp.trace.start{events = 65536}
  local r = mp.exec(f, ...)
  mp.trace.stop()
  return r
end

-- send to itself and take it back on rank 0: the recorder's CPU cost alone
-- (no MPI, no other rank: steady on a loaded machine)
local function selfloop(n, v)
  local t = mp.wtime()
  if mp.rank == 0 then
    for _ = 1, n do mp.send(0, v); mp.recv(0) end
  end
  return (mp.wtime() - t) / n
end

-- each round runs every case once; the ratios are medians of the rounds'
-- own ratios (a loaded machine moves whole rounds, not one case)
local cases = {
  {"rt", function() return mp.exec(pingpong, N, 1.5) end},
  {"rt_tr", function() return traced(pingpong, N, 1.5) end},
  {"bw", function() return mp.exec(stream, 200, big) end},
  {"bw_tr", function() return traced(stream, 200, big) end},
  {"self", function() return mp.exec(selfloop, 4 * N, 1.5) end},
  {"self_tr", function() return traced(selfloop, 4 * N, 1.5) end},
}
local got = {}
for _, c in ipairs(cases) do got[c[1]] = {} end
for _ = 1, rounds do
  for _, c in ipairs(cases) do table.insert(got[c[1]], c[2]()) end
end
local med, ratio = {}, {}
for k, v in pairs(got) do med[k] = C.median(v) end
for _, k in ipairs{"rt", "bw", "self"} do
  local r = {}
  for i = 1, rounds do r[i] = got[k .. "_tr"][i] / got[k][i] end
  ratio[k] = C.median(r)
end

-- stop: 65000 events per rank (marks), gathered and written
local EV = 65000
local file = os.tmpname()
local function stop_round()
  mp.trace.start{events = EV, file = file}
  mp.exec(function(n) for _ = 1, n do mp.trace.mark("m") end end, EV)
  local t = mp.wtime()
  mp.trace.stop()
  return mp.wtime() - t
end
local fsize
local function floor_round()
  local g = mp.exec(bench.gather, 1, EV * 48)
  local f = io.open(file, "rb")
  local text = f:read("a")
  f:close()
  fsize = #text
  local t = mp.wtime()
  local o = assert(io.open(file .. ".copy", "wb"))
  o:write(text)
  o:close()
  return g + (mp.wtime() - t)
end
stop_round()
local sr = {}
for i = 1, math.max(3, rounds // 2) do sr[i] = stop_round() / floor_round() end
local sm = C.interleave(math.max(3, rounds // 2), {{"stop", stop_round}, {"floor", floor_round}})
sm.ratio = C.median(sr)
os.remove(file)
os.remove(file .. ".copy")

print(string.format("ranks %d, %d rounds (medians)", mp.size, rounds))
print(string.format("p2p round trip: untraced %s  traced %s  traced/untraced %.2fx",
  C.us(med.rt), C.us(med.rt_tr), ratio.rt))
print(string.format("send+recv to itself (rank 0, no MPI): untraced %s  traced %s  " ..
  "traced/untraced %.2fx  (+%s)", C.us(med.self), C.us(med.self_tr), ratio.self,
  C.us(med.self_tr - med.self)))
print(string.format("1 MiB bandwidth: untraced %.0f MB/s  traced %.0f MB/s  traced/untraced %.3f",
  MiB / med.bw / 1e6, MiB / med.bw_tr / 1e6, 1 / ratio.bw))
print(string.format("mp.trace.stop, %d events x %d ranks (%.1f MB of JSON): %.1f ms; " ..
  "MPI_Gather of %d bytes per rank + writing the file: %.1f ms; ratio %.2fx",
  EV, mp.size, fsize / 1e6, sm.stop * 1e3, EV * 48, sm.floor * 1e3, sm.ratio))
