-- SPDX-License-Identifier: MIT
-- optim: gradient-based minimizers over fg(x) -> f, g (pure Lua).
--
--   local optim = require "mplua.optim"
--   local x, f, info = optim.lbfgs(function(x) return ad.grad(nll, x) end, {0, 0})
--
-- x is a list of numbers; fg returns the value and a gradient list of the
-- same length. Both routines minimize and return `x, f, info` with
-- info = {iter, nfev, converged, status, message, g}. The caller's x0 is
-- never modified, and every point handed to fg is a fresh table.
--
-- `converged` means converged: max|g| <= gtol * max(1, |f|). Every other
-- stop has its own status and converged = false:
--   "converged"   the gradient test above
--   "stalled"     the relative decrease (f_old - f_new) / max(|f_old|, |f_new|)
--                 stayed at or below ftol for 3 iterations in a row (the limit
--                 of double precision, or a very flat valley); ftol = 0 turns
--                 this test off. Relative to f itself, without a floor of 1:
--                 a minimum near 0 (least squares, Rosenbrock) keeps improving
--                 by tiny absolute amounts that are large relative ones
--   "linesearch"  the line search found no decrease
--   "maxiter"     maxiter iterations
--   "callback"    callback(iter, x, f, g) returned true
-- Defaults: gtol 1e-8, ftol 1e-15 (a decrease of a few ulps: only the limit
-- of precision stalls; larger tolerances stop both methods in flat stretches
-- where the gradient still shrinks); lbfgs maxiter 1000, m 10 (pairs kept);
-- gd maxiter 10000, step 1.
--
-- A trial point where fg gives a non-finite value or gradient (a log barrier
-- crossed, an overflow) is treated as "too far": the line searches back off.
-- The starting point itself must be finite: that is a usage error.

local M = {}

local abs, max, min, sqrt, huge = math.abs, math.max, math.min, math.sqrt, math.huge
local fmt = string.format

local function isfinite(v) return v == v and v ~= huge and v ~= -huge end

local function dot(a, b)
  local s = 0
  for i = 1, #a do s = s + a[i] * b[i] end
  return s
end

local function norm_inf(a)
  local m = 0
  for i = 1, #a do m = max(m, abs(a[i])) end
  return m
end

-- x + a*d, as a new table
local function axpy(x, a, d)
  local r = {}
  for i = 1, #x do r[i] = x[i] + a * d[i] end
  return r
end

local function callable(f)
  if type(f) == "function" then return true end
  local mt = getmetatable(f)
  return type(mt) == "table" and mt.__call ~= nil
end

-- Argument checks (raised, worded like lauxlib's) and a copy of x0.
local function check_args(name, fg, x0, opts)
  if not callable(fg) then
    error(fmt("bad argument #1 to '%s' (function expected, got %s)", name, type(fg)), 3)
  end
  if type(x0) ~= "table" then
    error(fmt("bad argument #2 to '%s' (table of numbers expected, got %s)", name, type(x0)), 3)
  end
  if #x0 == 0 then error(fmt("bad argument #2 to '%s' (empty table)", name), 3) end
  local x = {}
  for i = 1, #x0 do
    local v = x0[i]
    if type(v) ~= "number" or not isfinite(v) then
      error(fmt("bad argument #2 to '%s' (x0[%d] is %s, expected a finite number)",
                name, i, tostring(v)), 3)
    end
    x[i] = v + 0.0
  end
  if opts ~= nil and type(opts) ~= "table" then
    error(fmt("bad argument #3 to '%s' (table expected, got %s)", name, type(opts)), 3)
  end
  return x, opts or {}
end

-- Wraps fg: counts calls, copies the gradient (fg may reuse its table) and
-- maps any non-finite value or gradient to f = inf (g = nil).
local function evaluator(name, fg, n)
  local ev = {nfev = 0}
  function ev.eval(x)
    ev.nfev = ev.nfev + 1
    local f, g = fg(x)
    if type(f) ~= "number" then
      error(fmt("%s: fg returned %s as its value, expected a number", name, type(f)), 0)
    end
    if type(g) ~= "table" and type(g) ~= "userdata" then
      error(fmt("%s: fg returned %s as its gradient, expected a table", name, type(g)), 0)
    end
    if #g ~= n then
      error(fmt("%s: fg returned a gradient of length %d, expected %d", name, #g, n), 0)
    end
    if not isfinite(f) then return huge, nil end
    local gc = {}
    for i = 1, n do
      local v = g[i]
      if type(v) ~= "number" then
        error(fmt("%s: fg returned %s as gradient[%d], expected a number", name, type(v), i), 0)
      end
      if not isfinite(v) then return huge, nil end
      gc[i] = v
    end
    return f, gc
  end
  return ev
end

local function start(name, ev, x)
  local f, g = ev.eval(x)
  if not g then error(fmt("%s: fg(x0) is not finite (value or gradient)", name), 3) end
  return f, g
end

---------------------------------------------------------------------------
-- Strong-Wolfe line search: Nocedal & Wright, Algorithms 3.5 (bracket) and
-- 3.6 (zoom), with safeguarded cubic interpolation. Points are records
-- {a = step, f = value, d = directional derivative, x = point, g = gradient};
-- a non-finite point has f = inf and no d, and always becomes the upper end.

local C1, C2 = 1e-4, 0.9
local MAX_BRACKET, MAX_ZOOM = 30, 40

local function probe(ev, x, d, a)
  local xa = axpy(x, a, d)
  local f, g = ev.eval(xa)
  return {a = a, f = f, g = g, x = xa, d = g and dot(g, d)}
end

-- Minimizer of the cubic (or quadratic) through lo and hi, kept at least 10%
-- of the interval away from both ends; bisection when nothing better is known.
local function interpolate(lo, hi)
  local w = hi.a - lo.a
  local t
  if hi.d and isfinite(hi.f) then
    local d1 = lo.d + hi.d - 3 * (lo.f - hi.f) / (lo.a - hi.a)
    local r = d1 * d1 - lo.d * hi.d
    if r >= 0 then
      local d2 = (w > 0 and 1 or -1) * sqrt(r)
      t = hi.a - w * (hi.d + d2 - d1) / (hi.d - lo.d + 2 * d2)
    end
  end
  if not (t and isfinite(t)) and isfinite(hi.f) then -- quadratic from f_lo, d_lo, f_hi
    local den = 2 * (hi.f - lo.f - lo.d * w)
    if den > 0 then t = lo.a - lo.d * w * w / den end
  end
  local a1, a2 = min(lo.a, hi.a), max(lo.a, hi.a)
  local pad = 0.1 * (a2 - a1)
  if not (t and t == t) or t < a1 + pad or t > a2 - pad then t = lo.a + 0.5 * w end
  return t
end

-- Returns the accepted point, or nil and a reason. A point that satisfies
-- only sufficient decrease is returned when the curvature condition cannot be
-- met (the caller then skips the quasi-Newton update).
local function zoom(ev, x, d, f0, d0, lo, hi)
  for _ = 1, MAX_ZOOM do
    local a = interpolate(lo, hi)
    if abs(hi.a - lo.a) * norm_inf(d) <= 1e-16 * max(1, norm_inf(x)) then break end
    local p = probe(ev, x, d, a)
    if not p.d or p.f > f0 + C1 * a * d0 or p.f >= lo.f then
      hi = p
    else
      if abs(p.d) <= -C2 * d0 then return p end
      if p.d * (hi.a - lo.a) >= 0 then hi = lo end
      lo = p
    end
  end
  if lo.a > 0 then return lo end
  return nil, "line search found no decrease"
end

local function wolfe_search(ev, x, f, g, d, a1)
  local d0 = dot(g, d)
  local prev = {a = 0, f = f, g = g, x = x, d = d0}
  local a = a1
  for i = 1, MAX_BRACKET do
    local p = probe(ev, x, d, a)
    if not p.d or p.f > f + C1 * a * d0 or (i > 1 and p.f >= prev.f) then
      return zoom(ev, x, d, f, d0, prev, p)
    end
    if abs(p.d) <= -C2 * d0 then return p end
    if p.d >= 0 then return zoom(ev, x, d, f, d0, p, prev) end
    prev, a = p, 2 * a -- still descending steeply: extrapolate
  end
  return prev.a > 0 and prev or nil, "line search could not bracket a step"
end

---------------------------------------------------------------------------
-- Shared driver bookkeeping

local function stopper(opts, name, ftol0, maxiter0)
  local gtol = opts.gtol or 1e-8
  local ftol = opts.ftol or ftol0
  local maxiter = opts.maxiter or maxiter0
  local callback = opts.callback
  if callback ~= nil and not callable(callback) then
    error(fmt("bad argument #3 to '%s' (opts.callback must be a function)", name), 3)
  end
  local stalls = 0
  local s = {maxiter = maxiter}
  function s.gradient_small(f, g) return norm_inf(g) <= gtol * max(1, abs(f)) end
  -- true when f has stalled for 3 iterations in a row (never when ftol = 0:
  -- "off" must not turn into "stop when f does not decrease")
  function s.stalled(fold, fnew)
    if ftol > 0 and (fold - fnew) <= ftol * max(abs(fold), abs(fnew)) then
      stalls = stalls + 1
    else
      stalls = 0
    end
    return stalls >= 3
  end
  -- after an iteration: done, status, message
  function s.after(iter, fold, x, f, g)
    if callback and callback(iter, x, f, g) == true then return true, "callback", "stopped by callback" end
    if s.gradient_small(f, g) then return true, "converged", "gradient below gtol" end
    if s.stalled(fold, f) then
      return true, "stalled", fmt("stalled: relative reduction of f below ftol for 3 iterations, max|g| %.3g above gtol", norm_inf(g))
    end
    return false
  end
  return s
end

local function result(x, f, g, iter, ev, status, message)
  return x, f, {iter = iter, nfev = ev.nfev, converged = status == "converged", status = status,
                message = message, g = g}
end

---------------------------------------------------------------------------
-- L-BFGS (Nocedal & Wright, Algorithm 7.4/7.5)

-- d = -H g by the two-loop recursion over the stored pairs (oldest first).
local function two_loop(g, S, Y, RHO)
  local n, k = #g, #S
  local q, alpha = {}, {}
  for i = 1, n do q[i] = -g[i] end
  for j = k, 1, -1 do
    alpha[j] = RHO[j] * dot(S[j], q)
    local y = Y[j]
    for i = 1, n do q[i] = q[i] - alpha[j] * y[i] end
  end
  if k > 0 then -- H0 = gamma I, gamma = s'y / y'y of the newest pair
    local gamma = 1 / (RHO[k] * dot(Y[k], Y[k]))
    for i = 1, n do q[i] = gamma * q[i] end
  end
  for j = 1, k do
    local b = RHO[j] * dot(Y[j], q)
    local s = S[j]
    for i = 1, n do q[i] = q[i] + (alpha[j] - b) * s[i] end
  end
  return q
end

function M.lbfgs(fg, x0, opts)
  local name = "optim.lbfgs"
  local x, o = check_args(name, fg, x0, opts)
  local m = o.m or 10
  local stop = stopper(o, name, 1e-15, 1000)
  local ev = evaluator(name, fg, #x)
  local f, g = start(name, ev, x)
  if stop.gradient_small(f, g) then return result(x, f, g, 0, ev, "converged", "gradient below gtol") end
  local S, Y, RHO = {}, {}, {}
  for iter = 1, stop.maxiter do
    local d = two_loop(g, S, Y, RHO)
    local a1 = 1
    if #S == 0 or dot(g, d) >= 0 then
      -- no curvature yet, or a direction spoiled by rounding: steepest descent,
      -- with a first step of unit length
      S, Y, RHO = {}, {}, {}
      for i = 1, #g do d[i] = -g[i] end
      a1 = min(1, 1 / sqrt(dot(g, g)))
    end
    local p, why = wolfe_search(ev, x, f, g, d, a1)
    if not p and #S > 0 then -- the memory may be stale: retry downhill once
      S, Y, RHO = {}, {}, {}
      for i = 1, #g do d[i] = -g[i] end
      p, why = wolfe_search(ev, x, f, g, d, min(1, 1 / sqrt(dot(g, g))))
    end
    if not p then return result(x, f, g, iter - 1, ev, "linesearch", why) end
    local s, y = {}, {}
    for i = 1, #x do s[i], y[i] = p.x[i] - x[i], p.g[i] - g[i] end
    local sy = dot(s, y)
    if sy > 1e-10 * dot(y, y) then -- keep H positive definite
      if #S == m then table.remove(S, 1); table.remove(Y, 1); table.remove(RHO, 1) end
      S[#S + 1], Y[#Y + 1], RHO[#RHO + 1] = s, y, 1 / sy
    end
    local fold = f
    x, f, g = p.x, p.f, p.g
    local done, status, why = stop.after(iter, fold, x, f, g)
    if done then return result(x, f, g, iter, ev, status, why) end
  end
  return result(x, f, g, stop.maxiter, ev, "maxiter", "maximum number of iterations reached")
end

---------------------------------------------------------------------------
-- Gradient descent with Armijo backtracking. The accepted step is doubled
-- for the next iteration, so a too-small initial step recovers.

function M.gd(fg, x0, opts)
  local name = "optim.gd"
  local x, o = check_args(name, fg, x0, opts)
  local step = o.step or 1
  if type(step) ~= "number" or not (step > 0) or step == huge then
    error(fmt("bad argument #3 to '%s' (opts.step must be a positive number)", name), 2)
  end
  local stop = stopper(o, name, 1e-15, 10000)
  local ev = evaluator(name, fg, #x)
  local f, g = start(name, ev, x)
  if stop.gradient_small(f, g) then return result(x, f, g, 0, ev, "converged", "gradient below gtol") end
  for iter = 1, stop.maxiter do
    local gg = dot(g, g)
    local a, xn, fn, gn = step
    for _ = 1, 60 do
      xn = axpy(x, -a, g)
      fn, gn = ev.eval(xn)
      if gn and fn <= f - C1 * a * gg then break end
      gn, a = nil, a * 0.5
    end
    if not gn then return result(x, f, g, iter - 1, ev, "linesearch", "line search found no decrease") end
    step = 2 * a
    local fold = f
    x, f, g = xn, fn, gn
    local done, status, why = stop.after(iter, fold, x, f, g)
    if done then return result(x, f, g, iter, ev, status, why) end
  end
  return result(x, f, g, stop.maxiter, ev, "maxiter", "maximum number of iterations reached")
end

return M
