-- SPDX-License-Identifier: MIT
-- Second order through mp.mapper: the Hessian of a 50-parameter model whose
-- 24 terms are mapper jobs (each job's 4x4 Hessian computed on the rank
-- that owns it), against
--   inline: the same model taped inline on rank 0, ad.hessian over all 50
--           parameters (what one would write without the map);
--   jobs:   the map's own work done serially on rank 0 (ad.hessian of each
--           job in turn, assembled into the 50x50 matrix): the speedup
--           S = T_jobs / T_map is the parallel gain, E = S / P.
-- Jobs are sized so that one job's Hessian takes about 1 ms here. Rounds
-- alternate between the map and the serial jobs, then the inline Hessian is
-- timed (its tangents take hundreds of MB); medians, and the fastest rounds.
-- Run: mpiexec -n 2 build/mplua scripts/bench/map_hessian.lua [rounds]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
local rounds = tonumber(arg and arg[1]) or 7
local P = mp.size
local J = 24 -- 2 shared + 2 per job = 50 parameters
local NP = 2 + 2 * J

local function timeit(iters, f)
  local t = mp.wtime()
  for _ = 1, iters do f() end
  return (mp.wtime() - t) / iters
end

-- job j: a nonlinear regression on its rows: y ~ normal(mu + a tanh(b x), s)
local function job(phi, theta, x, y)
  local mu = ad.add(ad.mul(ad.tanh(ad.mul(x, theta[2])), theta[1]), phi[1])
  return {ad.normal_lpdf(y, mu, ad.exp(phi[2]))}
end
local function make_data(n)
  local xr, xi, seed = {}, {}, 7
  local function u() seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 end
  for j = 1, J do
    local x, y = mp.array("f64", n), mp.array("f64", n)
    for i = 1, n do
      x[i] = 4 * u() - 2
      y[i] = 0.5 + (0.2 * j) * math.tanh(0.7 * x[i]) + 0.3 * (u() - 0.5)
    end
    xr[j], xi[j] = x, y
  end
  return xr, xi
end
local p0 = {0.4, -1.0}
for j = 1, J do p0[2 + 2 * j - 1], p0[2 + 2 * j] = 0.2 * j, 0.7 end

-- calibrate the rows so that one job's Hessian takes about 1 ms
local n = 2000
for _ = 1, 2 do
  local xr, xi = make_data(n)
  local f = function(t) return job(t:slice(1, 2), t:slice(3, 4), xr[1], xi[1])[1] end
  local x4 = {p0[1], p0[2], p0[3], p0[4]}
  ad.hessian(f, x4)
  local ts = {}
  for r = 1, 5 do ts[r] = timeit(4, function() ad.hessian(f, x4) end) end
  n = math.max(100, math.floor(n * 1e-3 / C.median(ts)))
end
local xr, xi = make_data(n)
local m = mp.mapper(job, xr, xi)

local function split(p)
  local th = {}
  for j = 1, J do th[j] = p:slice(2 + 2 * j - 1, 2 + 2 * j) end
  return p:slice(1, 2), th
end
local function logp_map(p)
  local phi, th = split(p)
  local s = ad.normal_lpdf(p, 0, 3)
  for _, y in ipairs(m(phi, th)) do s = s + y[1] end
  return s
end
local function logp_inline(p)
  local phi, th = split(p)
  local s = ad.normal_lpdf(p, 0, 3)
  for j = 1, J do s = s + job(phi, th[j], xr[j], xi[j])[1] end
  return s
end
-- the map's work, serially: each job's Hessian in its 4 parameters
local function hessian_jobs(p)
  local H = {}
  for i = 1, NP do H[i] = {} for k = 1, NP do H[i][k] = i == k and -1 / 9 or 0 end end
  for j = 1, J do
    local idx = {1, 2, 2 + 2 * j - 1, 2 + 2 * j}
    local _, _, h = ad.hessian(function(t) return job(t:slice(1, 2), t:slice(3, 4), xr[j], xi[j])[1] end,
                               {p[1], p[2], p[idx[3]], p[idx[4]]})
    for a = 1, 4 do for b = 1, 4 do H[idx[a]][idx[b]] = H[idx[a]][idx[b]] + h[a][b] end end
  end
  return H
end

-- the three agree
local _, _, H1 = ad.hessian(logp_map, p0)
local _, _, H2 = ad.hessian(logp_inline, p0)
local H3 = hessian_jobs(p0)
for i = 1, NP do
  for k = 1, NP do
    local s = math.max(1, math.abs(H2[i][k]))
    assert(math.abs(H1[i][k] - H2[i][k]) <= 1e-9 * s and math.abs(H3[i][k] - H2[i][k]) <= 1e-9 * s,
           ("H[%d][%d]: map %g inline %g jobs %g"):format(i, k, H1[i][k], H2[i][k], H3[i][k]))
  end
end

-- the fastest round of each too: on a shared machine rounds get preempted
local best = {}
local function tracked(name, f)
  return {name, function() local v = f(); best[name] = math.min(best[name] or math.huge, v); return v end}
end
-- the map and the serial jobs alternate; the inline Hessian (hundreds of MB
-- of tangents: its rounds would disturb the others') is timed after them
local med = C.interleave(rounds, {
  tracked("jobs", function() return timeit(2, function() hessian_jobs(p0) end) end),
  tracked("map", function() return timeit(2, function() ad.hessian(logp_map, p0) end) end),
})
med.inline = C.interleave(math.max(1, rounds // 2), {
  tracked("inline", function() return timeit(1, function() ad.hessian(logp_inline, p0) end) end),
}).inline
local S = med.jobs / med.map
print(("Hessian of a %d-parameter model, %d jobs of %d rows (a job's Hessian ~%.2f ms), %d ranks, %d rounds (medians)"):format(
  NP, J, n, med.jobs / J * 1e3, P, rounds))
print(("  inline ad.hessian %.2f ms   jobs' Hessians serially %.2f ms   through the map %.2f ms"):format(
  med.inline * 1e3, med.jobs * 1e3, med.map * 1e3))
print(("  ratio inline / map %.2f   speedup S = jobs / map %.2f   E = S/P %.2f"):format(
  med.inline / med.map, S, S / P))
print(("  fastest rounds: inline %.2f ms, jobs %.2f ms, map %.2f ms: S %.2f"):format(best.inline * 1e3,
  best.jobs * 1e3, best.map * 1e3, best.jobs / best.map))
