-- ranks: nompi 1
-- SPDX-License-Identifier: MIT
-- lib/hmc.lua: NUTS and plain HMC on normal targets (gradients from ad.grad):
-- means within 4 Monte-Carlo standard errors, variances within a loose
-- factor, no divergences; reproducibility by seed; hmc.summary's ESS on
-- sequences with a known answer; a density with a hard boundary; bad input.
-- Every seed is fixed, so a run that passes always passes on this machine.

local hmc = require "mplua.hmc"

local fmt = string.format

local function grad_of(logp) return function(x) return ad.grad(logp, x) end end

-- Checks the draws against known means, sds and (for 2-d) the correlation.
local function check_normal(name, draws, info, mean, sd, corr)
  assert(#draws == 1000 and #draws[1] == #mean, name .. ": shape of draws")
  assert(info.divergences == 0, fmt("%s: %d divergences", name, info.divergences))
  assert(info.accept_rate > 0.6 and info.accept_rate <= 1, fmt("%s: accept_rate %g", name, info.accept_rate))
  assert(info.step > 0 and #info.inv_metric == #mean and info.n_leapfrog > 2000, name .. ": info")
  local s = hmc.summary(draws)
  for i = 1, #mean do
    local c = s[i]
    assert(c.ess > 50, fmt("%s: ess[%d] = %g", name, i, c.ess))
    local z = (c.mean - mean[i]) / c.mcse
    assert(math.abs(z) < 4, fmt("%s: mean[%d] = %g, expected %g (%.1f mcse)", name, i, c.mean, mean[i], z))
    local ratio = (c.sd / sd[i]) ^ 2
    assert(ratio > 0.7 and ratio < 1.4, fmt("%s: var[%d] ratio %g", name, i, ratio))
  end
  if corr then
    local m1, m2, sxy = s[1].mean, s[2].mean, 0
    for t = 1, #draws do sxy = sxy + (draws[t][1] - m1) * (draws[t][2] - m2) end
    local r = sxy / (#draws - 1) / (s[1].sd * s[2].sd)
    assert(math.abs(r - corr) < 0.06, fmt("%s: correlation %g, expected %g", name, r, corr))
  end
end

-- 1. 5-d standard normal
local function std_normal(x) return -0.5 * ad.dot(x, x) end
local x0 = {1, -1, 0.5, 2, 0}
for _, alg in ipairs{"nuts", "hmc"} do
  local draws, info = hmc.sample(grad_of(std_normal), x0, {n = 1000, seed = 11, algorithm = alg})
  check_normal("std normal/" .. alg, draws, info, {0, 0, 0, 0, 0}, {1, 1, 1, 1, 1})
end
assert(x0[1] == 1 and x0[2] == -1 and x0[3] == 0.5 and x0[4] == 2 and x0[5] == 0 and #x0 == 5,
       "x0 was modified")

-- 2. Correlated and scaled 2-d normal: sds 1 and 10, correlation 0.9, mean (1, -3).
--    The diagonal metric must learn the scales (variances 1 and 100).
local mu, sd, rho = {1, -3}, {1, 10}, 0.9
local function corr_normal(x)
  local a, b = (x[1] - mu[1]) / sd[1], (x[2] - mu[2]) / sd[2]
  return -0.5 * (a * a - 2 * rho * a * b + b * b) / (1 - rho * rho)
end
for _, alg in ipairs{"nuts", "hmc"} do
  local draws, info = hmc.sample(grad_of(corr_normal), {0, 0}, {n = 1000, seed = 5, algorithm = alg})
  check_normal("correlated/" .. alg, draws, info, mu, sd, rho)
  local ratio = info.inv_metric[2] / info.inv_metric[1]
  assert(ratio > 30 and ratio < 300, fmt("correlated/%s: inv_metric ratio %g, expected ~100", alg, ratio))
end

-- 3. Reproducibility: the same seed gives bitwise the same draws, whatever
--    math.random does in between; another seed gives other draws.
local function run(seed, alg)
  return hmc.sample(grad_of(corr_normal), {0.5, 0.5}, {n = 200, warmup = 200, seed = seed, algorithm = alg})
end
for _, alg in ipairs{"nuts", "hmc"} do
  math.randomseed(1)
  local a, ia = run(7, alg)
  math.randomseed(2); math.random()
  local b, ib = run(7, alg)
  local c = run(8, alg)
  local differ = 0
  for t = 1, #a do
    for i = 1, 2 do
      assert(a[t][i] == b[t][i], fmt("%s: same seed, draw %d differs", alg, t))
      if a[t][i] ~= c[t][i] then differ = differ + 1 end
    end
  end
  assert(ia.step == ib.step and ia.n_leapfrog == ib.n_leapfrog, alg .. ": same seed, different info")
  assert(differ > 300, alg .. ": another seed gives nearly the same draws")
end
-- draws are copies: changing one changes nothing else
local d = run(3, "hmc")
d[1][1] = 1e9
for t = 2, #d do assert(d[t][1] ~= 1e9, "draws share tables") end

-- 4. A hard boundary: a half-normal on x > 0 whose log density is -inf
--    beyond it. Trajectories that cross are divergent and are cut there,
--    so every draw stays inside. E|x| = sqrt(2/pi).
local function half_normal(x)
  if x[1] <= 0 then return -math.huge, {0} end
  return -0.5 * x[1] * x[1], {-x[1]}
end
local hd, hinfo = hmc.sample(half_normal, {1}, {n = 1000, seed = 3})
for t = 1, #hd do assert(hd[t][1] > 0, "half-normal: draw outside the support") end
local hs = hmc.summary(hd)[1]
assert(math.abs(hs.mean - math.sqrt(2 / math.pi)) < 5 * hs.mcse,
       fmt("half-normal: mean %g (mcse %g)", hs.mean, hs.mcse))
assert(hinfo.divergences + hinfo.warmup_divergences > 0, "half-normal: the boundary was never met")

-- 5. hmc.summary's ESS: iid draws give about n, an AR(1) chain with
--    coefficient phi gives about n (1 - phi) / (1 + phi).
local seed = 99
local function rnd() seed = (seed * 1103515245 + 12345) % 2147483648; return (seed + 0.5) / 2147483648 end
local function normal() return math.sqrt(-2 * math.log(rnd())) * math.cos(2 * math.pi * rnd()) end
local iid, ar, prev = {}, {}, 0
for t = 1, 4000 do
  iid[t] = {normal()}
  prev = 0.8 * prev + normal()
  ar[t] = {prev}
end
local e_iid, e_ar = hmc.summary(iid)[1].ess, hmc.summary(ar)[1].ess
assert(e_iid > 3000 and e_iid < 5500, "summary: iid ess " .. e_iid)
local expect = 4000 * 0.2 / 1.8
assert(e_ar > expect / 1.5 and e_ar < expect * 1.5, fmt("summary: AR(1) ess %g, expected ~%g", e_ar, expect))

-- 6. Bad input is raised with a clear message.
local function fails(pattern, f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok, "expected an error matching " .. pattern)
  assert(tostring(err):find(pattern), "error '" .. tostring(err) .. "' does not match " .. pattern)
end
local g = grad_of(std_normal)
fails("bad argument #1 to 'hmc.sample' %(function expected, got nil%)", hmc.sample, nil, {0})
fails("bad argument #2 to 'hmc.sample' %(non%-empty table of numbers expected, got string%)", hmc.sample, g, "x")
fails("bad argument #2 to 'hmc.sample' %(non%-empty table of numbers expected, got empty table%)", hmc.sample, g, {})
fails("x0%[2%] is inf", hmc.sample, g, {0, math.huge})
fails("option 'seed' must be an integer, got 1.5", hmc.sample, g, {0}, {seed = 1.5})
fails("option 'algorithm' must be one of \"nuts\", \"hmc\"", hmc.sample, g, {0}, {algorithm = "mala"})
fails("chain 1: the log density or its gradient is not finite at x0 nor at 100 random inits", hmc.sample,
      function() return -math.huge, {0} end, {-1})
fails("gradient of length 1, expected 2", hmc.sample, function() return 0, {0} end, {0, 0})
fails("bad argument #1 to 'hmc.summary'", hmc.summary, {})

print("hmc: ok")
