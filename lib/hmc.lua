-- hmc: Hamiltonian Monte Carlo over a log density with its gradient (pure Lua).
--
--   local hmc = require "mplua.hmc"
--   local draws, info = hmc.sample(function(x) return ad.grad(logp, x) end, {0, 0},
--                                  {n = 1000, seed = 42})
--   local s = hmc.summary(draws)  -- s[i] = {mean, sd, ess, mcse}
--
-- logp_grad(x) returns log p(x) (up to a constant) and its gradient; x is a
-- list of numbers. "nuts" is Stan's multinomial No-U-Turn sampler with the
-- generalized U-turn criterion and its checks across subtree boundaries;
-- "hmc" is plain HMC with a fixed number of leapfrog steps. Warmup tunes the
-- step size by dual averaging (Hoffman & Gelman 2014) and a diagonal inverse
-- metric in Stan's doubling windows. All randomness comes from a private
-- xoshiro256** generator seeded by opts.seed, so a run is reproducible
-- whatever else uses math.random.
--
-- opts (defaults): n (1000 draws), warmup (n), seed (20240101), algorithm
-- ("nuts"), step (initial step size, else Stan's heuristic), steps (10,
-- "hmc"), jitter (0.5, "hmc": each transition uses step * U(1 +- jitter)),
-- max_depth (10), target_accept (0.8), inv_metric (initial diagonal, 1s),
-- adapt (false: no tuning), adapt_metric (false: tune the step size only).
-- info: step, inv_metric, accept_rate (mean acceptance statistic of the
-- draws), divergences (among the draws), warmup_divergences, n_leapfrog
-- (gradient evaluations, warmup included), mean_depth (NUTS tree depth),
-- time_warmup, time_sampling (seconds), and stats: per draw, Stan's sampler
-- parameters lp, accept_stat, stepsize, treedepth, n_leapfrog, divergent
-- (0/1), energy (the Hamiltonian of the drawn state).
--
-- With opts.chains = C (and opts.parallel, default true), several chains
-- over the ranks: hmc.sample returns a fit, hmc.stansummary(fit) its
-- summary as CmdStan prints it, hmc.summary(fit) the rows (lib/hmc_chains.lua,
-- lib/posterior.lua).
--
-- A trajectory point where logp is not finite (or the gradient is not), or
-- where the energy error exceeds 1000, is a divergence: the trajectory stops
-- there and the point is never drawn.

local M = {}

local exp, log, sqrt, huge = math.exp, math.log, math.sqrt, math.huge
local floor, min, max = math.floor, math.min, math.max
local fmt = string.format

local MAX_DELTA_H = 1000

local function isfinite(v) return v == v and v ~= huge and v ~= -huge end -- numbers only

local function copy(t)
  local r = {}
  for i = 1, #t do r[i] = t[i] end
  return r
end

local function add(a, b)
  local r = {}
  for i = 1, #a do r[i] = a[i] + b[i] end
  return r
end

local function dot(a, b)
  local s = 0
  for i = 1, #a do s = s + a[i] * b[i] end
  return s
end

local function log_sum_exp(a, b)
  if a == -huge then return b end
  if b == -huge then return a end
  local m = max(a, b)
  return m + log(exp(a - m) + exp(b - m))
end

---------------------------------------------------------------------------
-- Random numbers: splitmix64 seeds xoshiro256** (Blackman & Vigna); Lua 5.4
-- integers wrap modulo 2^64, and >> is a logical shift, as the C code needs.

local function rotl(x, k) return (x << k) | (x >> (64 - k)) end

local function new_rng(seed)
  local sm = seed
  local function splitmix()
    sm = sm + 0x9E3779B97F4A7C15
    local z = sm
    z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ~ (z >> 27)) * 0x94D049BB133111EB
    return z ~ (z >> 31)
  end
  local s0, s1, s2, s3 = splitmix(), splitmix(), splitmix(), splitmix()
  local function next64()
    local r = rotl(s1 * 5, 7) * 9
    local t = s1 << 17
    s2 = s2 ~ s0; s3 = s3 ~ s1; s1 = s1 ~ s2; s0 = s0 ~ s3
    s2 = s2 ~ t; s3 = rotl(s3, 45)
    return r
  end
  local rng = {}
  -- uniform in (0, 1): the top 53 bits, centred, so never 0 or 1
  function rng.uniform() return ((next64() >> 11) + 0.5) * 0x1p-53 end
  local spare -- Box-Muller makes normals in pairs
  function rng.normal()
    if spare then local z = spare; spare = nil; return z end
    local r = sqrt(-2 * log(rng.uniform()))
    local t = 2 * math.pi * rng.uniform()
    spare = r * math.sin(t)
    return r * math.cos(t)
  end
  return rng
end

---------------------------------------------------------------------------
-- Hamiltonian dynamics. A state {q, p, g, lp} is never modified once made,
-- so trajectory ends and proposals are shared by reference.

-- Evaluates the density; a non-finite value or gradient becomes lp = -inf.
local function evaluate(S, q)
  S.n_grad = S.n_grad + 1
  local lp, g = S.lp(q)
  if type(lp) ~= "number" or (type(g) ~= "table" and type(g) ~= "userdata") then
    error(fmt("hmc.sample: logp_grad must return a number and a gradient table, got %s, %s",
              type(lp), type(g)), 0)
  end
  if #g ~= #q then
    error(fmt("hmc.sample: logp_grad returned a gradient of length %d, expected %d", #g, #q), 0)
  end
  local gc = {}
  for i = 1, #q do
    local v = g[i]
    if type(v) ~= "number" then
      error(fmt("hmc.sample: logp_grad returned %s as gradient[%d], expected a number", type(v), i), 0)
    end
    if not isfinite(v) then lp = -huge end
    gc[i] = v
  end
  if not isfinite(lp) then lp = -huge end -- +inf or nan is no better than -inf
  return lp, gc
end

local function hamiltonian(S, z)
  local k, minv = 0, S.minv
  for i = 1, #z.p do k = k + minv[i] * z.p[i] * z.p[i] end
  local h = 0.5 * k - z.lp
  return h == h and h or huge
end

local function sharp(S, p) -- M^-1 p, the velocity
  local r, minv = {}, S.minv
  for i = 1, #p do r[i] = minv[i] * p[i] end
  return r
end

local function leapfrog(S, z, eps)
  local n, minv = #z.q, S.minv
  local p, q = {}, {}
  for i = 1, n do p[i] = z.p[i] + 0.5 * eps * z.g[i] end
  for i = 1, n do q[i] = z.q[i] + eps * minv[i] * p[i] end
  local lp, g = evaluate(S, q)
  if lp ~= -huge then -- else divergent: the trajectory stops here
    for i = 1, n do p[i] = p[i] + 0.5 * eps * g[i] end
  end
  return {q = q, p = p, g = g, lp = lp}
end

local function momentum(S, z)
  local p = {}
  for i = 1, #z.q do p[i] = S.rng.normal() / sqrt(S.minv[i]) end
  return {q = z.q, g = z.g, lp = z.lp, p = p}
end

---------------------------------------------------------------------------
-- NUTS (Betancourt 2017, as in Stan's base_nuts): multinomial sampling of
-- the trajectory, biased towards the newest subtree at the top level.

-- Generalized no-U-turn criterion: both end velocities point along rho.
local function persists(ps_minus, ps_plus, rho)
  return dot(ps_plus, rho) > 0 and dot(ps_minus, rho) > 0
end

-- A subtree of 2^depth leapfrog steps from z in direction dir: returns
-- {valid, last (state), prop (sampled state), lw (log weight), rho (sum of
-- momenta), p_beg, p_end, ps_beg, ps_end (momenta and velocities at its ends)}.
local function build_tree(S, z, depth, dir, H0)
  if depth == 0 then
    local z1 = leapfrog(S, z, dir * S.eps)
    local dH = hamiltonian(S, z1) - H0
    S.n_leap = S.n_leap + 1
    S.sum_accept = S.sum_accept + (dH < 0 and 1 or exp(-dH))
    if dH > MAX_DELTA_H then S.divergent = true; return {valid = false} end
    local ps = sharp(S, z1.p)
    return {valid = true, last = z1, prop = z1, lw = -dH, rho = z1.p,
            p_beg = z1.p, p_end = z1.p, ps_beg = ps, ps_end = ps}
  end
  local t1 = build_tree(S, z, depth - 1, dir, H0)
  if not t1.valid then return t1 end
  local t2 = build_tree(S, t1.last, depth - 1, dir, H0)
  if not t2.valid then return t2 end
  local lw = log_sum_exp(t1.lw, t2.lw)
  local prop = t1.prop
  if S.rng.uniform() < exp(t2.lw - lw) then prop = t2.prop end
  local rho = add(t1.rho, t2.rho)
  local ok = persists(t1.ps_beg, t2.ps_end, rho)
    and persists(t1.ps_beg, t2.ps_beg, add(t1.rho, t2.p_beg))
    and persists(t1.ps_end, t2.ps_end, add(t2.rho, t1.p_end))
  return {valid = ok, last = t2.last, prop = prop, lw = lw, rho = rho,
          p_beg = t1.p_beg, p_end = t2.p_end, ps_beg = t1.ps_beg, ps_end = t2.ps_end}
end

-- One NUTS transition from z; returns the new state and its acceptance stat.
local function nuts_step(S, z)
  z = momentum(S, z)
  local H0 = hamiltonian(S, z)
  local ps0 = sharp(S, z.p)
  -- The trajectory so far, by its two ends (fwd, bck): state, momentum, velocity.
  local fwd = {z = z, p = z.p, ps = ps0}
  local bck = {z = z, p = z.p, ps = ps0}
  local rho, lw, sample = z.p, 0, z
  S.n_leap, S.sum_accept = 0, 0
  local depth = 0
  while depth < S.max_depth do
    local dir = S.rng.uniform() > 0.5 and 1 or -1
    local near, far = bck, fwd -- `far` is the end we grow from
    if dir < 0 then near, far = fwd, bck end
    local t = build_tree(S, far.z, depth, dir, H0)
    if not t.valid then break end -- divergent or U-turn inside: discard it
    depth = depth + 1
    -- Biased progressive sampling: favour the new subtree (Betancourt 2017, A.3.2)
    if t.lw > lw or S.rng.uniform() < exp(t.lw - lw) then sample = t.prop end
    lw = log_sum_exp(lw, t.lw)
    local old_rho = rho
    rho = add(rho, t.rho)
    local ok = persists(near.ps, t.ps_end, rho)
      and persists(near.ps, t.ps_beg, add(old_rho, t.p_beg))
      and persists(far.ps, t.ps_end, add(t.rho, far.p))
    local new_far = {z = t.last, p = t.p_end, ps = t.ps_end}
    if dir > 0 then fwd = new_far else bck = new_far end
    if not ok then break end
  end
  S.depth = depth
  return sample, S.sum_accept / S.n_leap
end

-- Plain HMC: `steps` leapfrog steps, then a Metropolis correction.
local function hmc_step(S, z)
  z = momentum(S, z)
  local H0 = hamiltonian(S, z)
  -- jittering the step size (Neal 2011) breaks the resonances of a
  -- fixed trajectory length: on a normal, eps*steps near a multiple of the
  -- period makes draws nearly repeat
  local eps = S.eps * (1 + S.jitter * (2 * S.rng.uniform() - 1))
  local z1 = z
  S.n_leap, S.depth = 0, nil
  for _ = 1, S.steps do
    z1 = leapfrog(S, z1, eps)
    S.n_leap = S.n_leap + 1
    if z1.lp == -huge then break end
  end
  local dH = hamiltonian(S, z1) - H0
  if dH > MAX_DELTA_H then S.divergent = true end
  local accept = dH < 0 and 1 or exp(-dH)
  if S.rng.uniform() < accept then return z1, accept end
  return z, accept
end

---------------------------------------------------------------------------
-- Adaptation

-- Stan's init_stepsize: double or halve eps until the acceptance
-- probability of one leapfrog step crosses 0.8.
local function find_step(S, z, transition_eps)
  S.eps = transition_eps or 1
  local function delta()
    local z0 = momentum(S, z)
    local z1 = leapfrog(S, z0, S.eps)
    return hamiltonian(S, z0) - hamiltonian(S, z1)
  end
  local target = log(0.8)
  local up = delta() > target
  repeat
    S.eps = up and 2 * S.eps or 0.5 * S.eps
    local d = delta() -- never nan: hamiltonian() maps nan to inf
  until (up and d <= target) or (not up and d >= target) or S.eps < 1e-12 or S.eps > 1e7
end

-- Dual averaging on log(eps) (Hoffman & Gelman 2014, Algorithm 6; Stan's
-- constants gamma = 0.05, t0 = 10, kappa = 0.75, mu = log(10 eps0)).
local function new_dual(delta)
  local D = {}
  function D.restart(eps)
    D.mu, D.count, D.s_bar, D.x_bar = log(10 * eps), 0, 0, 0
  end
  function D.learn(accept)
    D.count = D.count + 1
    local eta = 1 / (D.count + 10)
    D.s_bar = (1 - eta) * D.s_bar + eta * (delta - min(1, accept))
    local x = D.mu - D.s_bar * sqrt(D.count) / 0.05
    local w = D.count ^ -0.75
    D.x_bar = (1 - w) * D.x_bar + w * x
    return exp(x)
  end
  function D.final() return exp(D.x_bar) end
  return D
end

-- Ends (iteration numbers) of Stan's metric windows: an initial buffer of
-- 75, windows of 25, 50, 100, ... (the last one stretched), a final buffer
-- of 50; scaled down to 15% / 75% / 10% when warmup is short.
local function window_ends(warmup)
  if warmup < 20 then return {}, 0 end
  local init, term, base = 75, 50, 25
  if init + base + term > warmup then
    init, term = floor(0.15 * warmup), floor(0.1 * warmup)
    base = warmup - init - term
  end
  local ends, last, size = {}, init, base
  while true do
    local e = last + size
    if e + 2 * size > warmup - term then ends[#ends + 1] = warmup - term; break end
    ends[#ends + 1] = e
    last, size = e, 2 * size
  end
  return ends, init
end

---------------------------------------------------------------------------
-- The sampler

-- Checks the arguments of hmc.sample (errors raised `level` frames above
-- this function: 3 for a direct call from M.sample); returns a copy of x0,
-- the options, the seed and the algorithm.
function M._check(lp, x0, opts, level)
  local function fail(arg, msg) error(fmt("bad argument #%d to 'hmc.sample' (%s)", arg, msg), level) end
  local mt = getmetatable(lp)
  if type(lp) ~= "function" and not (type(mt) == "table" and mt.__call) then
    fail(1, fmt("function expected, got %s", type(lp)))
  end
  if type(x0) ~= "table" or #x0 == 0 then
    fail(2, fmt("non-empty table of numbers expected, got %s", type(x0) == "table" and "empty table" or type(x0)))
  end
  local q = {}
  for i = 1, #x0 do
    if type(x0[i]) ~= "number" or not isfinite(x0[i]) then
      fail(2, fmt("x0[%d] is %s, expected a finite number", i, tostring(x0[i])))
    end
    q[i] = x0[i] + 0.0
  end
  if opts ~= nil and type(opts) ~= "table" then fail(3, fmt("table expected, got %s", type(opts))) end
  opts = opts or {}
  for _, k in ipairs{"n", "warmup", "steps", "max_depth"} do
    local v = opts[k]
    if v ~= nil and not (math.tointeger(v) and v >= 0) then
      fail(3, fmt("opts.%s must be a non-negative integer", k))
    end
  end
  for i = 1, opts.inv_metric and #q or 0 do
    local v = opts.inv_metric[i]
    if type(v) ~= "number" or not (v > 0 and v < huge) then fail(3, "opts.inv_metric must hold positive numbers") end
  end
  local seed = opts.seed or 20240101
  if math.type(seed) ~= "integer" then seed = math.tointeger(seed) end
  if not seed then fail(3, "opts.seed must be an integer") end
  local alg = opts.algorithm or "nuts"
  if alg ~= "nuts" and alg ~= "hmc" then
    fail(3, fmt("opts.algorithm must be \"nuts\" or \"hmc\", got %s", tostring(alg)))
  end
  return q, opts, seed, alg
end

-- One chain from q (checked), with opts o; returns the draws and info with
-- the per-draw statistics (info.stats). Used by M.sample and by
-- lib/hmc_chains.lua for each chain of a multi-chain run.
function M._chain(logp_grad, q, o, seed, alg)
  local dim, n = #q, o.n or 1000
  local warmup = o.warmup or n
  local S = {
    lp = logp_grad, rng = new_rng(seed), n_grad = 0,
    max_depth = max(1, o.max_depth or 10), steps = o.steps or 10, jitter = o.jitter or 0.5,
    minv = {},
  }
  for i = 1, dim do S.minv[i] = o.inv_metric and o.inv_metric[i] or 1.0 end
  local step = alg == "nuts" and nuts_step or hmc_step
  local clock = mp and mp.wtime or os.clock
  local t0 = clock()

  local lp0, g0 = evaluate(S, q)
  if lp0 == -huge then error("hmc.sample: logp_grad(x0) is not finite (value or gradient)", 3) end
  local z = {q = q, g = g0, lp = lp0}

  local adapt = warmup > 0 and o.adapt ~= false
  if o.step then S.eps = o.step else find_step(S, z) end
  local dual = new_dual(o.target_accept or 0.8)
  dual.restart(S.eps)
  local ends, init = window_ends(adapt and o.adapt_metric ~= false and warmup or 0)
  local wi, wn, wmean, wm2 = 1 -- window number; Welford's running variance
  local function wreset()
    wn, wmean, wm2 = 0, {}, {}
    for i = 1, dim do wmean[i], wm2[i] = 0, 0 end
  end
  wreset()

  -- per draw: Stan's sampler parameters (lp__, accept_stat__, stepsize__,
  -- treedepth__, n_leapfrog__, divergent__, energy__)
  local st = {lp = {}, accept_stat = {}, stepsize = {}, treedepth = {}, n_leapfrog = {},
              divergent = {}, energy = {}}
  local draws, sum_accept, divergences, warm_div, depth_sum = {}, 0, 0, 0, 0
  local t_warm
  for it = 1, warmup + n do
    S.divergent = false
    local accept
    local eps = S.eps
    z, accept = step(S, z)
    if it <= warmup then
      if S.divergent then warm_div = warm_div + 1 end
      if adapt then
        S.eps = dual.learn(accept)
        if ends[wi] and it > init then
          wn = wn + 1
          for i = 1, dim do
            local d = z.q[i] - wmean[i]
            wmean[i] = wmean[i] + d / wn
            wm2[i] = wm2[i] + d * (z.q[i] - wmean[i])
          end
          if it == ends[wi] then
            -- regularize towards 1e-3 as Stan does, so a short window cannot
            -- collapse the metric
            for i = 1, dim do
              S.minv[i] = (wn / (wn + 5)) * (wm2[i] / (wn - 1)) + 1e-3 * (5 / (wn + 5))
            end
            wi = wi + 1
            wreset()
            find_step(S, z, S.eps)
            dual.restart(S.eps)
          end
        end
        if it == warmup then S.eps = dual.final() end
      end
      if it == warmup then t_warm = clock() end
    else
      if S.divergent then divergences = divergences + 1 end
      sum_accept = sum_accept + accept
      depth_sum = depth_sum + (S.depth or 0)
      local k = #draws + 1
      draws[k] = copy(z.q)
      st.lp[k], st.accept_stat[k], st.stepsize[k] = z.lp, accept, eps
      st.treedepth[k], st.n_leapfrog[k] = S.depth or 0, S.n_leap
      st.divergent[k], st.energy[k] = S.divergent and 1 or 0, hamiltonian(S, z)
    end
  end
  local t1 = clock()
  t_warm = t_warm or t0
  return draws, {step = S.eps, inv_metric = copy(S.minv), accept_rate = sum_accept / n,
    divergences = divergences, warmup_divergences = warm_div, n_leapfrog = S.n_grad,
    mean_depth = alg == "nuts" and depth_sum / n or nil, stats = st,
    time_warmup = t_warm - t0, time_sampling = t1 - t_warm}
end

-- One chain (draws, info), or with opts.chains several (a fit: lib/hmc_chains.lua).
function M.sample(logp_grad, x0, opts)
  if type(opts) == "table" and opts.chains ~= nil then
    return require("mplua.hmc_chains").run(logp_grad, x0, opts)
  end
  local q, o, seed, alg = M._check(logp_grad, x0, opts, 3)
  return M._chain(logp_grad, q, o, seed, alg)
end

---------------------------------------------------------------------------
-- Summary: mean, sd and effective sample size per coordinate. ESS uses
-- Geyer's initial monotone sequence on the autocorrelations of the single
-- chain (as Stan does for one chain), capped at n·log10(n) as Stan does for
-- antithetic chains; mcse = sd / sqrt(ess). A constant coordinate has ess nan.

local function ess(x, mean, n)
  local function acov(k)
    local s = 0
    for t = 1, n - k do s = s + (x[t] - mean) * (x[t + k] - mean) end
    return s / n
  end
  local c0 = acov(0)
  if not (c0 > 0) then return 0 / 0 end
  local tau, prev = -1, huge
  for m = 0, floor((n - 2) / 2) do
    local G = (acov(2 * m) + acov(2 * m + 1)) / c0
    if G <= 0 then break end
    G = min(G, prev) -- initial monotone sequence
    tau, prev = tau + 2 * G, G
  end
  -- antithetic chains can make tau tiny or negative: Stan's floor 1/log10(n)
  return n / max(tau, log(10) / log(n))
end

-- the summary rows of a multi-chain fit (lib/posterior.lua), and its text
-- as CmdStan's stansummary prints it
function M.stansummary(fit, opts) return require("mplua.posterior").stansummary(fit, opts) end

function M.summary(draws)
  if type(draws) == "table" and draws.chains then return require("mplua.posterior").summary(draws) end
  if type(draws) ~= "table" or #draws < 4 or type(draws[1]) ~= "table" then
    error("bad argument #1 to 'hmc.summary' (list of at least 4 draws expected)", 2)
  end
  local n, dim, out = #draws, #draws[1], {}
  for i = 1, dim do
    local x, s = {}, 0
    for t = 1, n do x[t] = draws[t][i]; s = s + x[t] end
    local mean, ss = s / n, 0
    for t = 1, n do ss = ss + (x[t] - mean) ^ 2 end
    local sd = sqrt(ss / (n - 1))
    local e = ess(x, mean, n)
    out[i] = {mean = mean, sd = sd, ess = e, mcse = sd / sqrt(e)}
  end
  return out
end

return M
