-- SPDX-License-Identifier: MIT
-- mp.mapper benchmark, interleaved rounds in one job (medians):
--  1. per-call overhead for empty jobs (4 per rank), plain and differentiated,
--     next to a raw MPI_Allreduce of the same bytes and an empty mp.exec;
--  2. speedup for jobs of about 1 ms (8 per rank): a differentiated call
--     against the same model taped inline on rank 0 (the serial program),
--     speedup S = T_serial / T_map, efficiency E = S / P (and S / min(P,
--     cores) when oversubscribed).
-- Run: mpiexec -n N build/mpbench scripts/bench/map.lua [rounds]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
local rounds = tonumber(arg and arg[1]) or 9
local P = mp.size
local function cores()
  local p = io.popen("nproc 2>/dev/null")
  local n = p and tonumber(p:read("l") or "") or 1
  if p then p:close() end
  return n or 1
end
local NCORE = cores()

local function timeit(iters, f)
  local t = mp.wtime()
  for _ = 1, iters do f() end
  return (mp.wtime() - t) / iters
end

-- 1. overhead ----------------------------------------------------------
local NJ = 4 * P
local empty = mp.mapper(function(t) return {t[1]} end, nil, nil)
local th = {}
for j = 1, NJ do th[j] = {j + 0.5} end
empty(th)
local OV_ITERS = P > 2 and 20 or 200
local ov = C.interleave(rounds, {
  {"raw", function() return mp.exec(bench.allreduce, OV_ITERS, NJ) end},
  {"exec", function() return timeit(OV_ITERS, function() mp.exec(function() end) end) end},
  {"plain", function() return timeit(OV_ITERS, function() empty(th) end) end},
  {"grad", function()
    return timeit(OV_ITERS, function()
      ad.grad(function(p)
        local tt = {}
        for j = 1, NJ do tt[j] = {p[1]} end
        local s = 0
        for _, y in ipairs(empty(tt)) do s = s + y[1] end
        return s
      end, {1.0})
    end)
  end},
})
print(string.format("ranks %d on %d cores, %d rounds (medians)", P, NCORE, rounds))
print(string.format("per call, %d empty jobs: plain %s  differentiated %s  | raw MPI_Allreduce of %d f64 %s, empty mp.exec %s",
  NJ, C.us(ov.plain), C.us(ov.grad), NJ, C.us(ov.raw), C.us(ov.exec)))
print(string.format("  ratio plain call / allreduce %.3g, plain call / mp.exec %.2f", ov.plain / ov.raw, ov.plain / ov.exec))

-- 2. speedup ----------------------------------------------------------
-- A job: one group of a logistic regression, log-likelihood of n rows of
-- K covariates (vectorized ad: one matvec and one lpmf node).
local K, JOBS = 8, 8 * P
local function job(beta, X, y)
  return {ad.bernoulli_logit_lpmf(y, ad.matvec(X, beta))}
end
local function make_data(n)
  local xr, xi, seed = {}, {}, 12345
  local function u() seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 end
  for j = 1, JOBS do
    local X, y = mp.array("f64", n, K), mp.array("f64", n)
    for i = 1, n do
      for k = 1, K do X:set(i, k, u() - 0.5) end
      y[i] = u() < 0.5 and 1 or 0
    end
    xr[j], xi[j] = X, y
  end
  return xr, xi
end
local beta0 = {}
for k = 1, K * JOBS do beta0[k] = 0.01 * (k % 7) end
local function serial(xr, xi)
  return ad.grad(function(b)
    local s = 0
    for j = 1, JOBS do s = s + job(b:slice((j - 1) * K + 1, j * K), xr[j], xi[j])[1] end
    return s
  end, beta0)
end
-- calibrate n so that one job's gradient takes about 1 ms here
local n = 2000
for _ = 1, 2 do
  local xr, xi = make_data(n)
  serial(xr, xi)
  local t = timeit(5, function() serial(xr, xi) end) / JOBS
  n = math.max(100, math.floor(n * 1e-3 / t))
end
local xr, xi = make_data(n)
local m = mp.mapper(job, xr, xi)
local function mapped()
  return ad.grad(function(b)
    local tt = {}
    for j = 1, JOBS do tt[j] = b:slice((j - 1) * K + 1, j * K) end
    local s = 0
    for _, y in ipairs(m(tt)) do s = s + y[1] end
    return s
  end, beta0)
end
local v1, g1 = serial(xr, xi)
local v2, g2 = mapped()
assert(math.abs(v1 - v2) <= 1e-9 * math.abs(v1) and math.abs(g1[1] - g2[1]) <= 1e-9 * (1 + math.abs(g1[1])))
local IT = 2
local sp = C.interleave(rounds, {
  {"serial", function() return timeit(IT, function() serial(xr, xi) end) end},
  {"map", function() return timeit(IT, mapped) end},
})
local S = sp.serial / sp.map
print(string.format("%d jobs of %d x %d rows (%.2f ms each serial): serial %.2f ms  map %.2f ms  speedup S %.2f  E = S/P %.2f%s",
  JOBS, n, K, sp.serial / JOBS * 1e3, sp.serial * 1e3, sp.map * 1e3, S, S / P,
  P > NCORE and string.format("  S/min(P,cores) %.2f", S / NCORE) or ""))
