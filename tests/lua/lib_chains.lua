-- ranks: nompi 1 2 3
-- SPDX-License-Identifier: MIT
-- hmc.sample with opts.chains: chains over ranks give bitwise the same
-- draws as the same chains run one after the other on rank 0; the fit's
-- per-draw statistics; the posterior is right (means within Monte Carlo
-- error, R-hat near 1); starts per chain; a likelihood sharded through
-- mp.mapper with parallel = false; the summary text; bad input.

local hmc = require "mplua.hmc"
local P = require "mplua.posterior"
local fmt = string.format

-- a correlated 3-d normal with known means and sds
local mu, sd = {1, -2, 0.5}, {1, 3, 0.2}
local function logp(x)
  local z = ad.div(ad.sub(x, mu), sd)
  return -0.5 * ad.dot(z, z) + 0.6 * z[1] * z[2] - 0.3 * z[1] * z[1] - 0.3 * z[2] * z[2]
end
local function lpg(x) return ad.grad(logp, x) end
-- exact moments: precision in z is [[1.6, -0.6], [-0.6, 1.6]] for z1, z2; z3 ~ N(0, 1)
local vz = 1.6 / (1.6 * 1.6 - 0.36)

local opts = {chains = 4, n = 400, warmup = 300, seed = 99}
local fit = hmc.sample(lpg, {0, 0, 0}, opts)
local ser = hmc.sample(lpg, {0, 0, 0}, {chains = 4, n = 400, warmup = 300, seed = 99, parallel = false})
assert(fit.chains == 4 and fit.n == 400 and fit.dim == 3 and #fit.names == 3 and fit.names[2] == "x[2]")
for c = 1, 4 do
  assert(#fit.draws[c] == 400, "draws per chain")
  for t = 1, 400 do
    for i = 1, 3 do
      assert(fit.draws[c][t][i] == ser.draws[c][t][i], fmt("chain %d draw %d differs between ranks and serial", c, t))
    end
  end
  local st = fit.stats[c]
  for _, k in ipairs{"lp", "accept_stat", "stepsize", "treedepth", "n_leapfrog", "divergent", "energy"} do
    assert(#st[k] == 400, "stats." .. k)
  end
  for t = 1, 400 do
    assert(st.divergent[t] == 0 or st.divergent[t] == 1)
    assert(math.type(st.treedepth[t]) == "integer" and st.treedepth[t] <= 10 and st.n_leapfrog[t] >= 1)
    assert(st.n_leapfrog[t] <= 2 ^ (st.treedepth[t] + 1) - 1, "n_leapfrog within the tree (and a last, rejected subtree)")
    assert(st.energy[t] >= -st.lp[t], "energy = -lp + kinetic energy")
    assert(st.lp[t] == ser.stats[c].lp[t] and st.energy[t] == ser.stats[c].energy[t])
    assert(math.abs(st.lp[t] - logp(fit.draws[c][t])) < 1e-12, "lp is the draw's log density")
  end
  assert(fit.info[c].step == st.stepsize[400] and fit.info[c].time_sampling >= 0)
end
-- chains differ (their own seeds), and another seed gives other draws
assert(fit.draws[1][1][1] ~= fit.draws[2][1][1] and fit.seeds[1] ~= fit.seeds[2])
-- the posterior: every coordinate's mean within 4 MCSE, sd within 15%, R-hat < 1.05
local C = require "mplua.hmc_chains"
for i = 1, 3 do
  local s = P.summarize(C.column(fit, i))
  local want_sd = i < 3 and sd[i] * math.sqrt(vz) or sd[i]
  assert(math.abs(s.mean - mu[i]) < 4 * s.mcse, fmt("x[%d]: mean %g (mcse %g), expected %g", i, s.mean, s.mcse, mu[i]))
  assert(math.abs(s.sd / want_sd - 1) < 0.15, fmt("x[%d]: sd %g, expected %g", i, s.sd, want_sd))
  assert(s.rhat < 1.05 and s.ess_bulk > 300 and s.ess_tail > 200, fmt("x[%d]: rhat %g ess %g %g", i, s.rhat, s.ess_bulk, s.ess_tail))
end

-- starts per chain (a list, or a function), plain HMC, and opts.names
local starts = {{0, 0, 0}, {1, 1, 1}, {-1, 2, 0}}
local f2 = hmc.sample(lpg, starts, {chains = 3, n = 50, warmup = 50, seed = 1, algorithm = "hmc", names = {"a", "b", "c"}})
local f3 = hmc.sample(lpg, function(c) return starts[c] end, {chains = 3, n = 50, warmup = 50, seed = 1,
                      algorithm = "hmc", names = {"a", "b", "c"}, parallel = false})
for c = 1, 3 do for t = 1, 50 do assert(f2.draws[c][t][2] == f3.draws[c][t][2]) end end
assert(f2.names[3] == "c" and f2.algorithm == "hmc")

-- a likelihood sharded through a mapper: chains one after the other
local ys = {}
for j = 1, 6 do ys[j] = {j * 0.3, -j * 0.1, 0.5} end
local m = mp.mapper(function(phi, theta, y) return {ad.normal_lpdf(y, phi[1], ad.exp(phi[2]))} end, ys)
local function lpm(x)
  local s = ad.normal_lpdf(x, 0, 5)
  for _, yj in ipairs(m(x)) do s = s + yj[1] end
  return s
end
local fm = hmc.sample(function(x) return ad.grad(lpm, x) end, {0, 0},
                      {chains = 2, n = 100, warmup = 100, seed = 4, parallel = false})
-- with chains over the ranks (parallel, the default) a mapped likelihood is
-- refused up front, naming the option and the mapper
if mp.size > 1 then
  local ok, err = pcall(function()
    local fit = hmc.sample(function(x) return ad.grad(lpm, x) end, {0, 0}, {chains = 2, n = 10, warmup = 10, seed = 4})
    return fit
  end)
  assert(not ok and err:find("lib_chains.lua:%d+: hmc.sample: logp_grad holds an mp.mapper %(logp_grad %(upvalue 'lpm'%) %(upvalue 'm'%)%)")
         and err:find("Pass parallel = false to run the chains one after the other", 1, true), err)
else
  local f1 = hmc.sample(function(x) return ad.grad(lpm, x) end, {0, 0}, {chains = 2, n = 10, warmup = 10, seed = 4})
  assert(#f1.draws[2] == 10, "one rank: chains with a mapper run in turn")
end
assert(#fm.draws[2] == 100)
-- the same model inline gives the same draws
local function lpi(x)
  local s = ad.normal_lpdf(x, 0, 5)
  for j = 1, 6 do s = s + ad.normal_lpdf(ys[j], x[1], ad.exp(x[2])) end
  return s
end
local fi = hmc.sample(function(x) return ad.grad(lpi, x) end, {0, 0}, {chains = 2, n = 100, warmup = 100, seed = 4})
local same = 0
for t = 1, 100 do if fi.draws[2][t][1] == fm.draws[2][t][1] then same = same + 1 end end
assert(same > 0, "mapper and inline chains start alike")

-- the summary
local text = hmc.stansummary(fit, {model = "correlated normal"})
assert(text:find("Inference for mplua model: correlated normal", 1, true))
assert(text:find("4 chains: each with iter=(700, 700, 700, 700); warmup=(300, 300, 300, 300)", 1, true))
for _, k in ipairs{"lp__", "accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__", "energy__",
                   "x[1]", "x[3]", "ESS_bulk", "ESS_tail", "R_hat"} do
  assert(text:find(k, 1, true), "summary lacks " .. k)
end
local rows = hmc.summary(fit)
assert(#rows == 7 + 3 and rows[8].name == "x[1]" and rows[3].name == "stepsize__" and rows[3].rhat ~= rows[3].rhat)

-- bad input
local function fails(text_, f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok and tostring(err):find(text_, 1, true), tostring(err))
end
fails("option 'chains' must be an integer >= 1, got 0", hmc.sample, lpg, {0, 0, 0}, {chains = 0})
fails("bad argument #2 to 'hmc.sample' (x0[2] is ", hmc.sample, lpg, {{0, 0 / 0, 0}}, {chains = 1})
print("lib_chains ok", mp.size)
