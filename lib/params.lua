-- params: declare a model's parameters with their constraints, unpack a
-- flat unconstrained vector into named constrained values (pure Lua over ad
-- and lib/transforms.lua).
--
--   local params = require "mplua.params"
--   local m = params{                      -- or params.declare{...}
--     {"mu"},                              -- a real
--     {"tau", lower = 0},                  -- a positive real
--     {"theta", 8},                        -- a vector of 8 reals
--     {"sigma", 2, lower = 0, upper = 5},  -- bounded vector
--     {"w", 3, "simplex"},                 -- also "ordered", "positive_ordered",
--     {"L", 3, "cholesky_corr"},           -- "unit_vector", "cholesky_corr" (K x K)
--   }
--   local function logp(x)                 -- x: m.dim unconstrained values
--     local p, lj = m:unpack(x)            -- p.mu, p.tau, p.theta[i], ...; lj: log Jacobian
--     return lj + ad.normal_lpdf(p.theta, p.mu, p.tau) + ...
--   end
--   hmc.sample(function(x) return ad.grad(logp, x) end, m:init(1), opts)
--
-- m.dim: the unconstrained size; m.names: the constrained values' names in
-- order ("mu", "theta[1]", ..., "L[2,1]"); m:unpack(x) works on vars (inside
-- ad.grad) and on numbers (tables), giving numbers, ad.Consts and plain
-- values then; m:constrain(x) is the list of constrained numbers in
-- m.names order (for draws and summaries); m:init(seed) a start point with
-- each unconstrained value uniform in (-2, 2), as Stan's default inits.

local T = require "mplua.transforms"

local M = {}
local Model = {}
Model.__index = Model

local KINDS = {real = true, simplex = true, ordered = true, positive_ordered = true,
               unit_vector = true, cholesky_corr = true}

-- unconstrained size and constrained size of a declaration
local function sizes(d)
  local n = d.n or 1
  if d.kind == "simplex" then return n - 1, n end
  if d.kind == "cholesky_corr" then return n * (n - 1) // 2, n * n end
  return n, n
end

function M.declare(decls)
  if type(decls) ~= "table" then
    error("bad argument #1 to 'params.declare' (table of declarations expected)", 2)
  end
  local m = setmetatable({decls = {}, names = {}, dim = 0}, Model)
  for i, d in ipairs(decls) do
    local name, n, kind = d[1], d[2], d[3] or "real"
    if type(n) == "string" then n, kind = nil, n end
    if type(name) ~= "string" then
      error(("bad argument #1 to 'params.declare' (declaration %d: a name expected)"):format(i), 2)
    end
    if not KINDS[kind] then
      error(("bad argument #1 to 'params.declare' (%s: unknown kind %s)"):format(name, tostring(kind)), 2)
    end
    if n ~= nil and not (math.type(n) == "integer" and n >= 1) then
      error(("bad argument #1 to 'params.declare' (%s: size must be a positive integer)"):format(name), 2)
    end
    if kind ~= "real" and (d.lower or d.upper) then
      error(("bad argument #1 to 'params.declare' (%s: bounds apply to reals only)"):format(name), 2)
    end
    if (kind == "simplex" or kind == "cholesky_corr") and (n or 1) < 2 then
      error(("bad argument #1 to 'params.declare' (%s: %s needs a size of 2 or more)"):format(name, kind), 2)
    end
    if d.lower and d.upper and not (d.lower < d.upper) then
      error(("bad argument #1 to 'params.declare' (%s: lower must be below upper)"):format(name), 2)
    end
    local e = {name = name, n = n, kind = kind, lower = d.lower, upper = d.upper}
    e.nfree, e.nval = sizes(e)
    e.first = m.dim + 1
    m.dim = m.dim + e.nfree
    m.decls[#m.decls + 1] = e
    if kind == "cholesky_corr" then
      for c = 1, n do for r = 1, n do m.names[#m.names + 1] = ("%s[%d,%d]"):format(name, r, c) end end
    elseif n then
      for k = 1, e.nval do m.names[#m.names + 1] = ("%s[%d]"):format(name, k) end
    else
      m.names[#m.names + 1] = name
    end
  end
  return m
end

-- the unconstrained slice of one declaration
local function slice(x, e)
  if not e.n then return x[e.first] end
  return x:slice(e.first, e.first + e.nfree - 1)
end

local function constrain(e, y)
  if e.kind == "real" then
    if e.lower and e.upper then return T.bounds(y, e.lower, e.upper) end
    if e.lower then return T.lower(y, e.lower) end
    if e.upper then return T.upper(y, e.upper) end
    return y, 0
  end
  if e.kind == "cholesky_corr" then return T.cholesky_corr(y, e.n) end
  return T[e.kind](y)
end

function Model:unpack(x)
  if #x ~= self.dim then
    error(("params: %d unconstrained values given, %d declared"):format(#x, self.dim), 2)
  end
  if type(x) == "table" then x = ad.add(x, 0) end -- numbers: an ad.Const, which slices
  local p, lj = {}, 0
  for _, e in ipairs(self.decls) do
    local v, l = constrain(e, slice(x, e))
    p[e.name] = v
    lj = lj + l
  end
  return p, lj
end

function Model:constrain(x)
  local p = self:unpack(x)
  local out = {}
  for _, e in ipairs(self.decls) do
    local v = p[e.name]
    if type(v) == "number" then
      out[#out + 1] = v
    else
      for k = 1, e.nval do out[#out + 1] = v[k] end
    end
  end
  return out
end

-- a copy of a multi-chain fit (hmc.sample with chains) whose draws are the
-- constrained values, named m.names (for hmc.stansummary)
function Model:constrain_fit(fit)
  local out = {}
  for k, v in pairs(fit) do out[k] = v end
  out.draws, out.names, out.dim = {}, self.names, #self.names
  for c = 1, fit.chains do
    out.draws[c] = {}
    for t, d in ipairs(fit.draws[c]) do out.draws[c][t] = self:constrain(d) end
  end
  return out
end

function Model:init(seed)
  local s = math.tointeger(seed) or 1
  local x = {}
  for i = 1, self.dim do -- a small LCG: inits do not depend on math.random
    s = (s * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
    x[i] = 4 * ((s >> 11) / (1 << 52)) - 2
  end
  return x
end

return setmetatable(M, {__call = function(_, decls) return M.declare(decls) end})
