-- SPDX-License-Identifier: MIT
-- Lua scalar path: ad.grad time / plain-Lua evaluation time of the same
-- scalar loop (a hand-written normal log density with a log-scale parameter
-- and a scalar pure-arithmetic loop), interleaved, repeated, medians.
local N, REPS = 20000, 15
local y = {}
for i = 1, N do y[i] = math.sin(i) * 3 + 1 end
local log, exp = math.log, math.exp

-- the model, written once against a math table (math or ad)
local function make(M)
  return function(t)
    local mu, sigma = t[1], M.exp(t[2])
    local lp = 0
    for i = 1, N do
      local z = (y[i] - mu) / sigma
      lp = lp - 0.5 * z * z - M.log(sigma)
    end
    return lp
  end, function(t)
    local a, b = t[1], t[2]
    local s = 0
    for i = 1, N do s = s + (y[i] - a) * b end
    return s
  end
end
local plain_f, plain_g = make(math)
local ad_f, ad_g = make(ad)

local function median(x) table.sort(x); return x[(#x + 1) // 2] end
local function time(f, ...) local t0 = os.clock(); f(...); return os.clock() - t0 end

for _, case in ipairs({{"normal density loop", plain_f, ad_f}, {"arithmetic loop", plain_g, ad_g}}) do
  local name, pf, af = case[1], case[2], case[3]
  local tp, tg = {}, {}
  af({0.5, 0.3}); ad.grad(af, {0.5, 0.3})
  for r = 1, REPS do
    tp[r] = time(pf, {0.5, 0.3})
    tg[r] = time(ad.grad, af, {0.5, 0.3})
  end
  local mp_, mg = median(tp), median(tg)
  print(string.format("lua scalar %s (%d iterations): plain %.3f ms, ad.grad %.3f ms, ratio %.1fx",
    name, N, mp_ * 1e3, mg * 1e3, mg / mp_))
end

-- vectorized from Lua: normal_lpdf over 1e6 points of a typed array
if mp and mp.array then
  local M = 1000000
  local ya = mp.array("f64", M)
  for i = 1, M do ya[i] = math.sin(i) * 3 + 1 end
  local function f(t) return ad.normal_lpdf(ya, t[1], t[2]) end
  local tg = {}
  for r = 1, 7 do tg[r] = time(ad.grad, f, {0.5, 2.0}) end
  print(string.format("lua ad.grad of normal_lpdf over 1e6 typed-array points: %.3f ms", median(tg) * 1e3))
end
