-- SPDX-License-Identifier: MIT
-- laplace: draws from the normal approximation at a posterior's mode, as
-- CmdStan's laplace method: the mode of the log density on the
-- unconstrained scale (L-BFGS, lib/optim.lua), its Hessian H there (exact,
-- ad.hessian), then draws x = mode + L'^-1 z with L L' = -H, z ~ N(0, I).
--
--   local laplace = require "mplua.laplace"
--   local r = laplace.laplace_sample(function(x, jacobian)
--     local p, lj = m:unpack(x)
--     return (jacobian and lj or 0) + logp(p)
--   end, m:init(1), {jacobian = true, draws = 1000, seed = 7})
--
-- logp(x, jacobian) is the log density (recorded with ad: it is
-- differentiated twice) of the unconstrained values x, with the log
-- Jacobian of the constraining transforms added when jacobian is true.
-- The choice is explicit: opts.jacobian must be given. true: the mode and
-- the approximation of the density of the unconstrained parameters (what
-- sampling targets; CmdStan's default, jacobian = 1); false: the maximum a
-- posteriori estimate of the constrained parameters (CmdStan's optimize
-- default), the approximation then centred on it.
--
-- opts: jacobian (required), draws (1000), seed, optimize (true: x0 is a
-- start; false: x0 is the mode), and L-BFGS's options under lbfgs.
-- Returns {mode, log_p_mode, hessian (rows), draws (lists), log_p (logp at
-- each draw), log_g (the approximation's normalized log density at each
-- draw: log_p - log_g are importance weights), optim (L-BFGS's info),
-- jacobian}.

local M = {}
local fmt = string.format

local function fail(arg, msg) error(fmt("bad argument #%d to 'laplace.laplace_sample' (%s)", arg, msg), 3) end

function M.laplace_sample(logp, x0, opts)
  local mt = getmetatable(logp)
  if type(logp) ~= "function" and not (type(mt) == "table" and mt.__call) then
    fail(1, fmt("function expected, got %s", type(logp)))
  end
  if type(x0) ~= "table" or #x0 == 0 then fail(2, "non-empty table of numbers expected") end
  if type(opts) ~= "table" or type(opts.jacobian) ~= "boolean" then
    fail(3, "opts.jacobian must be given: true (the mode and approximation of the unconstrained density, "
      .. "as CmdStan's laplace) or false (around the maximum a posteriori of the constrained parameters)")
  end
  for k in pairs(opts) do
    if k ~= "jacobian" and k ~= "draws" and k ~= "seed" and k ~= "optimize" and k ~= "lbfgs" then
      fail(3, fmt("unknown option '%s'", tostring(k)))
    end
  end
  local jac = opts.jacobian
  local ndraws = opts.draws or 1000
  if not (math.tointeger(ndraws) and ndraws >= 0) then fail(3, "opts.draws must be a non-negative integer") end
  local seed = math.tointeger(opts.seed or 20240101)
  if not seed then fail(3, "opts.seed must be an integer") end
  local f = function(x) return logp(x, jac) end
  local mode, info = {}, nil
  for i = 1, #x0 do mode[i] = x0[i] + 0.0 end
  if opts.optimize ~= false then
    local optim = require "mplua.optim"
    local neg = function(x)
      local v, g = ad.grad(f, x)
      local ng = {}
      for i = 1, #g do ng[i] = -g[i] end
      return -v, ng
    end
    local fval
    mode, fval, info = optim.lbfgs(neg, mode, opts.lbfgs)
    if not info.converged and info.status ~= "stalled" then
      error(fmt("laplace.laplace_sample: the optimizer did not find the mode (%s: %s)", info.status,
        tostring(info.message)), 2)
    end
  end
  local lp_mode, _, H = ad.hessian(f, mode)
  local n = #mode
  -- the precision -H and its Cholesky factor
  local P = {}
  for i = 1, n do P[i] = {} for j = 1, n do P[i][j] = -H[i][j] end end
  local L = require("mplua.hmc_metric").cholesky(P)
  if not L then
    error("laplace.laplace_sample: the Hessian at the mode is not negative definite (no normal approximation there)", 2)
  end
  local logdet = 0
  for i = 1, n do logdet = logdet + math.log(L[i][i]) end
  local rng = require("mplua.hmc_rng").new(seed)
  local draws, log_p, log_g = {}, {}, {}
  local half_log_2pi = 0.5 * math.log(2 * math.pi)
  for t = 1, ndraws do
    local z, zz = {}, 0
    for i = 1, n do z[i] = rng.normal(); zz = zz + z[i] * z[i] end
    local u = {} -- L' u = z: back substitution
    for i = n, 1, -1 do
      local s = z[i]
      for k = i + 1, n do s = s - L[k][i] * u[k] end
      u[i] = s / L[i][i]
    end
    local x = {}
    for i = 1, n do x[i] = mode[i] + u[i] end
    draws[t] = x
    log_g[t] = -0.5 * zz - n * half_log_2pi + logdet
    local v = f(x)
    log_p[t] = type(v) == "number" and v or ad.value(v)
  end
  return {mode = mode, log_p_mode = lp_mode, hessian = H, draws = draws, log_p = log_p, log_g = log_g,
          optim = info, jacobian = jac}
end

return M
