-- SPDX-License-Identifier: MIT
-- hmc_nuts: Hamiltonian dynamics and the transitions of Stan's samplers
-- (pure Lua): the multinomial No-U-Turn sampler with the generalized U-turn
-- criterion and its checks across subtree boundaries (Betancourt 2017, as
-- Stan's base_nuts), and static HMC (a fixed integration time, the step
-- size jittered).
--
-- A sampler state S holds: lp (logp_grad), rng, metric (lib/hmc_metric.lua),
-- eps (step size), max_depth, steps (static HMC), jitter, and counters the
-- transitions set: n_grad (gradient evaluations), n_leap, depth, divergent.
-- A point z = {q, p, g, lp} is never modified once made, so trajectory ends
-- and proposals are shared by reference. A point where logp or its gradient
-- is not finite, or where the energy error exceeds 1000, is a divergence:
-- the trajectory stops there and the point is never drawn.

local M = {}

local exp, log, huge, max = math.exp, math.log, math.huge, math.max
local fmt = string.format

local MAX_DELTA_H = 1000

local function isfinite(v) return v == v and v ~= huge and v ~= -huge end
M.isfinite = isfinite

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

-- The density at q: lp and a copy of the gradient; a non-finite value or
-- gradient becomes lp = -inf. Malformed results are errors.
function M.evaluate(S, q)
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
local evaluate = M.evaluate

function M.hamiltonian(S, z)
  local h = S.metric:kinetic(z.p) - z.lp
  return h == h and h or huge
end
local hamiltonian = M.hamiltonian

function M.leapfrog(S, z, eps)
  local n = #z.q
  local p = {}
  for i = 1, n do p[i] = z.p[i] + 0.5 * eps * z.g[i] end
  local v, q = S.metric:velocity(p), {}
  for i = 1, n do q[i] = z.q[i] + eps * v[i] end
  local lp, g = evaluate(S, q)
  if lp ~= -huge then -- else divergent: the trajectory stops here
    for i = 1, n do p[i] = p[i] + 0.5 * eps * g[i] end
  end
  return {q = q, p = p, g = g, lp = lp}
end
local leapfrog = M.leapfrog

function M.momentum(S, z)
  return {q = z.q, g = z.g, lp = z.lp, p = S.metric:draw(S.rng)}
end
local momentum = M.momentum

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
    local ps = S.metric:velocity(z1.p)
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

-- One NUTS transition from z: the new state and its acceptance statistic.
function M.nuts(S, z)
  z = momentum(S, z)
  local H0 = hamiltonian(S, z)
  local ps0 = S.metric:velocity(z.p)
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

-- Static HMC: a fixed integration time (steps leapfrog steps, or int_time /
-- eps of them), then a Metropolis correction. Jittering the step size (Neal
-- 2011) breaks the resonances of a fixed trajectory length.
function M.static(S, z)
  z = momentum(S, z)
  local H0 = hamiltonian(S, z)
  local eps = S.eps * (1 + S.jitter * (2 * S.rng.uniform() - 1))
  local steps = S.steps or math.max(1, math.floor(S.int_time / eps))
  local z1 = z
  S.n_leap, S.depth = 0, nil
  for _ = 1, steps do
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

-- NUTS with a jittered step size (stepsize_jitter > 0, as Stan's option).
function M.nuts_jittered(S, z)
  local eps = S.eps
  S.eps = eps * (1 + S.jitter * (2 * S.rng.uniform() - 1))
  local z1, a = M.nuts(S, z)
  S.eps = eps
  return z1, a
end

return M
