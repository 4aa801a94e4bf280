-- ranks: nompi 1
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
fails("bad argument #2 to 'normal_lpdf' (length 4 does not match 3)",
      ad.normal_lpdf, {1, 2, 3}, {1, 2, 3, 4}, 1)
fails("bad argument #2 to 'dot' (length 2 does not match 3)", ad.dot, {1, 2, 3}, {1, 2})
fails("length 3 does not match 2", ad.jvp, function(t) return t[1] end, {1, 2}, {1, 2, 3})

-- non-numbers where numbers are needed
fails("number expected, got string", ad.var, "x")
fails("element 2 is a string", ad.vars, {1, "a"})
fails("bad argument #2 to 'normal_lpdf' (number, ad var, table or array expected, got boolean)",
      ad.normal_lpdf, 1, true, 1)
fails("must return a number or a scalar ad var", ad.grad, function(t) return "x" end, {1})
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
