-- ranks: nompi 1
-- SPDX-License-Identifier: MIT
-- Bad input gives clear Lua errors (or documented NaN), never a crash.

local function fails(pattern, f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok, "expected an error matching " .. pattern)
  assert(tostring(err):find(pattern, 1, true),
         "error '" .. tostring(err) .. "' does not contain '" .. pattern .. "'")
end

-- a var from a finished tape
local kept
ad.grad(function(t) kept = t[1]; return t[1] * 2 end, {1})
fails("var from a finished tape", function() return kept + 1 end)
fails("var from a finished tape", ad.value, kept)
fails("var from a finished tape", ad.exp, kept)
assert(ad.is_var(kept) == false)
local keptv
ad.grad(function(t) keptv = t; return t[1] end, {1, 2})
fails("finished tape", ad.sum, keptv)

-- mismatched lengths
fails("bad argument #2 to 'ad.normal_lpdf' (length 4 does not match 3)",
      ad.normal_lpdf, {1, 2, 3}, {1, 2, 3, 4}, 1)
fails("bad argument #2 to 'ad.dot' (length 2 does not match 3)", ad.dot, {1, 2, 3}, {1, 2})
fails("length 3 does not match 2", ad.jvp, function(t) return t[1] end, {1, 2}, {1, 2, 3})

-- non-numbers where numbers are needed
fails("number expected, got string", ad.var, "x")
fails("element 2 is a string", ad.vars, {1, "a"})
fails("bad argument #2 to 'ad.normal_lpdf' (number, ad var, table or array expected, got boolean)",
      ad.normal_lpdf, 1, true, 1)
fails("must return a number or a scalar ad var", ad.grad, function(t) return "x" end, {1})

-- every error names the function with its module (these said 'grad', 'hessian'...)
fails("ad.grad: the function must return a number or a scalar ad var, got string",
      ad.grad, function(t) return "x" end, {1})
fails("ad.hessian: the function must return", ad.hessian, function(t) return {} end, {1})
fails("bad argument #2 to 'ad.grad' (table of numbers or typed array expected, got string)",
      ad.grad, function(t) return t[1] end, "x")
fails("bad argument #3 to 'ad.jvp' (length 3 does not match 2)", ad.jvp, function(t) return t[1] end, {1, 2}, {1, 2, 3})
fails("bad argument #1 to 'ad.exp' (number, ad var, table or array expected, got string)", ad.exp, "x")
fails("bad argument #2 to 'ad.pow'", ad.pow, {1, 2}, "x")
fails("bad argument #2 to 'ad.log_sum_exp' (length 3 does not match 2)", ad.log_sum_exp, {1, 2}, {1, 2, 3})
fails("bad argument #2 to 'ad.each.normal_lpdf' (length 3 does not match 2)",
      ad.each.normal_lpdf, {1, 2}, {1, 2, 3}, 1)

-- counts must be counts (a non-integer count used to be accepted)
fails("bad argument #1 to 'ad.poisson_log_lpmf' (element 2 is 1.5, expected a non-negative integer)",
      ad.poisson_log_lpmf, {1, 1.5, 2}, 0.3)
fails("bad argument #1 to 'ad.poisson_log_lpmf' (element 1 is -1.0, expected a non-negative integer)",
      ad.poisson_log_lpmf, -1, 0.3)
fails("(element 1 is 2.0, expected 0 or 1)", ad.bernoulli_logit_lpmf, 2, 0)
fails("nan, expected 0 or 1)", ad.bernoulli_logit_lpmf, 0 / 0, 0)
fails("bad argument #1 to 'ad.binomial_logit_lpmf' (element 2 is 5.0, expected an integer in 0..N (N = 4.0))",
      ad.binomial_logit_lpmf, {1, 5}, {4, 4}, 0.1)
fails("bad argument #2 to 'ad.binomial_logit_lpmf' (element 1 is 2.5, expected a non-negative integer)",
      ad.binomial_logit_lpmf, 1, 2.5, 0.1)
fails("bad argument #1 to 'ad.neg_binomial_2_log_lpmf' (element 1 is 0.5",
      ad.neg_binomial_2_log_lpmf, 0.5, 0.1, 2)
fails("expected 0 or 1", ad.grad, function(t) return ad.bernoulli_logit_lpmf({0, 1, 3}, t[1]) end, {0.2})
fails("expected 0 or 1", ad.each.bernoulli_logit_lpmf, {0, 1, 3}, 0.2)
-- and integer-valued floats are counts
assert(ad.poisson_log_lpmf({0, 2.0, 3}, 0) == ad.poisson_log_lpmf({0, 2, 3}, 0))
assert(ad.bernoulli_logit_lpmf(1.0, 0) == math.log(0.5))
fails("counts are data", function() return ad.grad(function(t) return ad.poisson_log_lpmf(t[1], 0) end, {1}) end)
fails("not differentiable", function() local x = ad.var(1); return x % 2 end)
fails("read-only", function() ad.grad(function(t) t[1] = 3; return 0 end, {1}) end)
fails("attempt to compare", function() return ad.var(1) < "a" end)

-- an error inside f ends the region: nothing leaks, the next call works
local nv0 = ad.tape_size()
for _ = 1, 10 do
  local ok, err = pcall(ad.grad, function(t) local y = t[1] * 2; error("boom") end, {1})
  assert(not ok and err:find("boom"))
end
local nv1, _, _, depth = ad.tape_size()
assert(nv1 == nv0 and depth == 0, "regions closed after errors")
local v, g = ad.grad(function(t) return t[1] * t[1] end, {3})
assert(v == 9 and g[1] == 6)

-- domain errors are NaN / inf, as in C's math library
local _, gl = ad.grad(function(t) return ad.log(t[1]) end, {-1})
assert(gl[1] == -1)               -- d log(x)/dx = 1/x even where log is NaN
local vl = ad.grad(function(t) return ad.log(t[1]) end, {-1})
assert(vl ~= vl, "log(-1) is NaN")
assert(ad.log(0) == -math.huge)

-- comparisons compare values; == compares handles (documented)
local a, b = ad.var(2), ad.var(2)
assert(a <= b and not (a < b) and a < 3 and 1 < a)
assert(a ~= b, "== on vars compares identity, not value")
assert(a == a)
assert(ad.value(a) == ad.value(b))
ad.reset()
fails("var from a finished tape", function() return a * 1 end)

-- nested ad.grad inside f: the inner one returns numbers
local vo, go = ad.grad(function(t)
  local vi, gi = ad.grad(function(u) return u[1] * u[1] end, {3})
  assert(vi == 9 and gi[1] == 6)
  return t[1] * vi
end, {2})
assert(vo == 18 and go[1] == 9)
print("ad_errors: ok")
