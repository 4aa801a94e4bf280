-- SPDX-License-Identifier: MIT
-- params: declare a model's parameters as a Stan program's parameters block
-- does, unpack a flat unconstrained vector into named constrained values
-- (pure Lua over ad and lib/transforms.lua).
--
--   local params = require "mplua.params"
--   local m = params{                      -- or params.declare{...}
--     {"mu"},                              -- real mu;
--     {"tau", lower = 0},                  -- real<lower=0> tau;
--     {"theta", 8, offset = function(p) return p.mu end,
--                  multiplier = function(p) return p.tau end},
--                                          -- vector<offset=mu, multiplier=tau>[8] theta;
--     {"sigma", 2, lower = 0, upper = {5, 10}},  -- vector bounds, one per element
--     {"B", {3, 2}},                       -- matrix[3, 2] B;
--     {"w", 3, "simplex", array = 4},      -- array[4] simplex[3] w;
--     {"L", 3, "cholesky_factor_corr"},    -- K x K
--   }
--   local function logp(x)                 -- x: m.dim unconstrained values
--     local p, lj = m:unpack(x)            -- p.mu, p.tau, p.theta[i], p.w[a][k], ...; lj: log Jacobian
--     return lj + ad.normal_lpdf(p.theta, p.mu, p.tau) + ...
--   end
--   hmc.sample(function(x) return ad.grad(logp, x) end, m:init(1), opts)
--
-- Kinds: "real" (the default; a scalar, a vector [n] or a matrix [{r, c}],
-- with lower / upper bounds or offset / multiplier), "simplex",
-- "ordered", "positive_ordered", "unit_vector", "sum_to_zero_vector" (size n),
-- "cholesky_factor_corr" (alias "cholesky_corr"), "corr_matrix", "cov_matrix"
-- (size K: K x K), "cholesky_factor_cov" (size K or {M, N}, M >= N). A bound,
-- offset or multiplier is a number, a list of numbers (one per element), or a
-- function of the parameters declared before it (p) returning a number, a
-- var or a vector: a parameter-dependent bound, as Stan allows. array = J (or
-- {J1, J2}) declares an array of them: p.name[j] (p.name[j1][j2]).
--
-- m.dim: the unconstrained size; m.names: the constrained values' names in
-- CmdStan's order (column-major over array and value indices: "mu",
-- "theta[1]", ..., "B[2,1]", "w[1,1]", "w[2,1]", ...); m:unpack(x) works on
-- vars (inside ad.grad) and on numbers (tables), giving numbers, ad.Consts
-- and plain values then; m:constrain(x) is the list of constrained numbers
-- in m.names order; m:init(seed) a start point with each unconstrained value
-- uniform in (-2, 2), as Stan's default inits.

local T = require "mplua.transforms"

local M = {}
local Model = {}
Model.__index = Model
local fmt = string.format

local ALIASES = {cholesky_corr = "cholesky_factor_corr"}
local KINDS = {real = true, simplex = true, ordered = true, positive_ordered = true, unit_vector = true,
               sum_to_zero_vector = true, cholesky_factor_corr = true, cholesky_factor_cov = true,
               corr_matrix = true, cov_matrix = true}
local SQUARE = {cholesky_factor_corr = true, corr_matrix = true, cov_matrix = true}

-- value shape {} / {n} / {r, c}; unconstrained size; constrained size
local function shape(kind, size)
  if kind == "real" then
    if size == nil then return {}, 1, 1 end
    if type(size) == "table" then return {size[1], size[2]}, size[1] * size[2], size[1] * size[2] end
    return {size}, size, size
  end
  local n = type(size) == "table" and size[1] or size
  if kind == "simplex" or kind == "sum_to_zero_vector" then return {n}, n - 1, n end
  if SQUARE[kind] then
    local free = kind == "cov_matrix" and n * (n + 1) // 2 or n * (n - 1) // 2
    return {n, n}, free, n * n
  end
  if kind == "cholesky_factor_cov" then
    local r, c = n, type(size) == "table" and size[2] or n
    return {r, c}, c * (c + 1) // 2 + (r - c) * c, r * c
  end
  return {n}, n, n
end

local function isint(v, lo) return math.type(v) == "integer" and v >= lo end

-- checks one bound-like option at declaration
local function check_bound(name, key, v, nval, count, fail)
  if v == nil or type(v) == "number" or type(v) == "function" then return end
  if type(v) ~= "table" then
    fail(fmt("%s: %s must be a number, a list of numbers or a function of the parameters declared before, got %s",
      name, key, type(v)))
  end
  if #v ~= nval and not (nval == 1 and #v == count) then
    fail(fmt("%s: %s has %d values, expected %d (one per element)", name, key, #v, nval == 1 and count or nval))
  end
  for i = 1, #v do
    if type(v[i]) ~= "number" then fail(fmt("%s: %s[%d] is a %s, expected a number", name, key, i, type(v[i]))) end
  end
end

function M.declare(decls)
  local function fail(msg) error(fmt("bad argument #1 to 'params.declare' (%s)", msg), 3) end
  if type(decls) ~= "table" then fail("table of declarations expected") end
  local m = setmetatable({decls = {}, names = {}, dim = 0, nvalues = 0}, Model)
  local seen = {}
  for i, d in ipairs(decls) do
    local name, size, kind = d[1], d[2], d[3] or "real"
    if type(size) == "string" then size, kind = nil, size end
    if type(name) ~= "string" then fail(fmt("declaration %d: a name expected", i)) end
    if seen[name] then fail(fmt("%s: declared twice", name)) end
    seen[name] = true
    kind = ALIASES[kind] or kind
    if not KINDS[kind] then fail(fmt("%s: unknown kind %s", name, tostring(kind))) end
    if size ~= nil and not isint(size, 1) and not (type(size) == "table" and isint(size[1], 1) and isint(size[2], 1) and #size == 2) then
      fail(fmt("%s: size must be a positive integer or {rows, cols}", name))
    end
    if kind ~= "real" and size == nil then fail(fmt("%s: %s needs a size", name, kind)) end
    if type(size) == "table" and kind ~= "real" and kind ~= "cholesky_factor_cov" then
      fail(fmt("%s: %s takes one size", name, kind))
    end
    for _, k in ipairs{"lower", "upper", "offset", "multiplier"} do
      if kind ~= "real" and d[k] ~= nil then fail(fmt("%s: bounds apply to reals only", name)) end
    end
    if (d.lower ~= nil or d.upper ~= nil) and (d.offset ~= nil or d.multiplier ~= nil) then
      fail(fmt("%s: lower/upper and offset/multiplier cannot be combined", name))
    end
    local n = type(size) == "table" and size[1] or size or 1
    if (kind == "simplex" or kind == "sum_to_zero_vector" or SQUARE[kind]) and n < 2 then
      fail(fmt("%s: %s needs a size of 2 or more", name, kind))
    end
    if kind == "cholesky_factor_cov" and type(size) == "table" and size[1] < size[2] then
      fail(fmt("%s: cholesky_factor_cov needs rows >= cols", name))
    end
    local adims = d.array
    if type(adims) == "number" then adims = {adims} end
    if adims ~= nil and not (type(adims) == "table" and #adims >= 1 and #adims <= 2 and isint(adims[1], 1)
                            and (adims[2] == nil or isint(adims[2], 1))) then
      fail(fmt("%s: array must be a positive integer or {J1, J2}", name))
    end
    adims = adims or {}
    local vshape, nfree, nval = shape(kind, size)
    local count = 1
    for _, a in ipairs(adims) do count = count * a end
    for _, k in ipairs{"lower", "upper", "offset", "multiplier"} do check_bound(name, k, d[k], nval, count, fail) end
    if type(d.lower) == "number" and type(d.upper) == "number" and not (d.lower < d.upper) then
      fail(fmt("%s: lower must be below upper", name))
    end
    if type(d.multiplier) == "number" and not (d.multiplier > 0 and d.multiplier < math.huge) then
      fail(fmt("%s: multiplier must be positive and finite", name))
    end
    local e = {name = name, kind = kind, n = n, size = size, vshape = vshape, nfree = nfree, nval = nval,
               adims = adims, count = count, lower = d.lower, upper = d.upper, offset = d.offset,
               multiplier = d.multiplier, first = m.dim + 1, vfirst = m.nvalues + 1}
    if e.lower == -math.huge then e.lower = nil end
    if e.upper == math.huge then e.upper = nil end
    m.dim = m.dim + nfree * count
    m.nvalues = m.nvalues + nval * count
    m.decls[#m.decls + 1] = e
    -- names, column-major over (array indices, value indices)
    local dims = {}
    for _, a in ipairs(adims) do dims[#dims + 1] = a end
    for _, v in ipairs(vshape) do dims[#dims + 1] = v end
    e.order = {} -- constrained output k -> {array element number, value index}
    for t = 0, count * nval - 1 do
      local idx, r = {}, t
      for k = 1, #dims do idx[k] = r % dims[k] + 1; r = r // dims[k] end
      if #dims == 0 then m.names[#m.names + 1] = name
      else
        local s = {}
        for k = 1, #dims do s[k] = tostring(idx[k]) end
        m.names[#m.names + 1] = fmt("%s[%s]", name, table.concat(s, ","))
      end
      local a, stride = 0, 1 -- array element number, row-major over the array indices (as unpacked)
      for k = #adims, 1, -1 do a = a + (idx[k] - 1) * stride; stride = stride * adims[k] end
      local v, vs = 0, 1 -- value index, column-major
      for k = 1, #vshape do v = v + (idx[#adims + k] - 1) * vs; vs = vs * vshape[k] end
      e.order[#e.order + 1] = {a + 1, v + 1}
    end
  end
  return m
end

-- a bound's value for array element a (functions evaluated once per unpack)
local function bound(b, p, a, e)
  if type(b) == "function" then b = b(p) end
  if type(b) == "table" and e.nval == 1 and e.count > 1 and #b == e.count then return b[a] end
  return b
end

local function constrain(e, y, p, a)
  local k = e.kind
  if k == "real" then
    local lo, up = bound(e.lower, p, a, e), bound(e.upper, p, a, e)
    local off, mul = bound(e.offset, p, a, e), bound(e.multiplier, p, a, e)
    local v, lj
    if lo ~= nil and up ~= nil then v, lj = T.bounds(y, lo, up)
    elseif lo ~= nil then v, lj = T.lower(y, lo)
    elseif up ~= nil then v, lj = T.upper(y, up)
    elseif off ~= nil or mul ~= nil then v, lj = T.offset_multiplier(y, off or 0, mul or 1)
    else v, lj = y, 0 end
    if #e.vshape == 2 and not T.is_scalar(v) then v = ad.matrix(v, e.vshape[1], e.vshape[2]) end
    return v, lj
  end
  if k == "cholesky_factor_corr" then return T.cholesky_corr(y, e.n) end
  if k == "corr_matrix" then return T.corr_matrix(y, e.n) end
  if k == "cov_matrix" then return T.cov_matrix(y, e.n) end
  if k == "cholesky_factor_cov" then return T.cholesky_factor_cov(y, e.vshape[1], e.vshape[2]) end
  if k == "sum_to_zero_vector" then return T.sum_to_zero(y) end
  return T[k](y)
end

-- p, lj, and each declaration's values as a flat list (array elements in order)
local function unpack_all(self, x)
  if #x ~= self.dim then
    error(fmt("params: %d unconstrained values given, %d declared", #x, self.dim), 3)
  end
  if type(x) == "table" then x = ad.add(x, 0) end -- numbers: an ad.Const, which slices
  local p, lj, flat = {}, 0, {}
  for _, e in ipairs(self.decls) do
    local vals = {}
    for a = 1, e.count do
      local first = e.first + (a - 1) * e.nfree
      local y = #e.vshape == 0 and x[first] or x:slice(first, first + e.nfree - 1)
      local v, l = constrain(e, y, p, a)
      vals[a] = v
      lj = lj + l
    end
    if #e.adims == 0 then p[e.name] = vals[1]
    elseif #e.adims == 1 then p[e.name] = vals
    else
      local nested, a = {}, 0
      for i = 1, e.adims[1] do
        nested[i] = {}
        for j = 1, e.adims[2] do a = a + 1; nested[i][j] = vals[a] end
      end
      p[e.name] = nested
    end
    flat[e] = vals
  end
  return p, lj, flat
end

function Model:unpack(x)
  local p, lj = unpack_all(self, x)
  return p, lj
end

function Model:constrain(x)
  local _, _, flat = unpack_all(self, x)
  local out = {}
  for _, e in ipairs(self.decls) do
    for _, o in ipairs(e.order) do
      local v = flat[e][o[1]]
      out[#out + 1] = type(v) == "number" and v or ad.value(v[o[2]])
    end
  end
  return out
end

-- a copy of a multi-chain fit (hmc.sample with chains) whose draws are the
-- constrained values, named m.names (for hmc.stansummary, hmc.write_csv)
function Model:constrain_fit(fit)
  local out = {}
  for k, v in pairs(fit) do out[k] = v end
  out.draws, out.names, out.dim = {}, self.names, #self.names
  for c = 1, fit.chains do
    out.draws[c] = {}
    for t, d in ipairs(fit.draws[c]) do out.draws[c][t] = self:constrain(d) end
  end
  if fit.warmup_draws then
    out.warmup_draws = {}
    for c = 1, fit.chains do
      out.warmup_draws[c] = {}
      for t, d in ipairs(fit.warmup_draws[c]) do out.warmup_draws[c][t] = self:constrain(d) end
    end
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
