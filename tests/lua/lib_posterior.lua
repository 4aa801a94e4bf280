-- ranks: nompi
-- SPDX-License-Identifier: MIT
-- lib/posterior.lua: rank-normalized split R-hat, bulk/tail ESS, ESS of the
-- mean, against reference values for fixed sequences, and their behaviour
-- on sequences with known answers (iid, AR(1), shifted chains, constants).
--
-- References: a transcription of posterior 1.x's R/convergence.R (.ess,
-- .rhat, z_scale with Blom's 3/8, .split_chains, fold_draws, ess_tail, type-7
-- quantiles) in Python 3 with qnorm = statistics.NormalDist().inv_cdf, run
-- on the same sequences (made with exact arithmetic, so Lua and Python see
-- the same bits), with R's NA (nan) propagating through min and max as in
-- R (case C: the 95% quantile is the largest value, its indicator is
-- constant); qnorm values from mpmath 1.3.0 (sqrt(2) erfinv(2p - 1) at
-- the double nearest p).

local P = require "mplua.posterior"
local fmt = string.format
local function rel(a, b) return math.abs(a - b) / math.max(math.abs(b), 1e-300) end

-- m chains of n draws: AR(1) with coefficient phi on uniform noise from an
-- LCG (only + and *: the same in any language), optional shifts, or
-- discrete values floor(5 u)
local function lcg_chains(seed, m, n, phi, shift, discrete)
  local s, out = seed, {}
  for c = 1, m do
    local x, ch = 0.0, {}
    for t = 1, n do
      s = (s * 1103515245 + 12345) % 2147483648
      local u = s / 2147483648
      if discrete then ch[t] = math.floor(u * 5) + 0.0
      else x = phi * x + (u - 0.5); ch[t] = x + (shift and shift[c] or 0.0) end
    end
    out[c] = ch
  end
  return out
end

local cases = {
  A = {lcg_chains(11, 4, 200, 0.7),
       {rhat = 1.00910648606, ess_bulk = 170.83192488, ess_tail = 343.403935766, ess_mean = 174.251459012, rhat_basic = 1.00834951087}},
  B = {lcg_chains(12, 4, 101, 0.0, {0, 0.3, 0, 0}),
       {rhat = 1.12818952015, ess_bulk = 22.9307214113, ess_tail = 39.1054343939, ess_mean = 24.1685054547, rhat_basic = 1.12138017843}},
  C = {lcg_chains(13, 2, 50, 0.0, nil, true),
       {rhat = 0.995198988705, ess_bulk = 106.305211853, ess_tail = 0 / 0, ess_mean = 115.932768517, rhat_basic = 0.988872244403}},
  D = {lcg_chains(14, 1, 300, -0.5),
       {rhat = 0.999896735922, ess_bulk = 624.627759297, ess_tail = 241.148562227, ess_mean = 602.26530951, rhat_basic = 0.996932103817}},
}
for name, c in pairs(cases) do
  local x, want = c[1], c[2]
  for k, v in pairs(want) do
    local got = P[k](x)
    assert(rel(got, v) < 1e-9 or (v ~= v and got ~= got), fmt("%s %s: %.12g, reference %.12g", name, k, got, v))
  end
end

-- qnorm (for the rank normalization) to full precision, tails included
for _, r in ipairs{{0.975, 1.9599639845400538}, {1e-10, -6.3613409024040566},
                   {0.3, -0.52440051270804078}, {0.999999, 4.7534243088170873}, {0.5, 0}} do
  local got = P.qnorm(r[1])
  assert(math.abs(got - r[2]) <= 2e-15 * math.max(1, math.abs(r[2])), fmt("qnorm(%g) = %.17g", r[1], got))
end

-- known answers: iid normal chains (ESS about S, R-hat about 1), AR(1) with
-- coefficient 0.8 (ESS about S 0.2 / 1.8), chains around different means
local seed = 5
local function u() seed = (seed * 1103515245 + 12345) % 2147483648; return (seed + 0.5) / 2147483648 end
local function normal() return math.sqrt(-2 * math.log(u())) * math.cos(2 * math.pi * u()) end
local iid, ar, off = {}, {}, {}
for c = 1, 4 do
  iid[c], ar[c], off[c] = {}, {}, {}
  local prev = 0
  for t = 1, 1000 do
    iid[c][t] = normal()
    prev = 0.8 * prev + normal()
    ar[c][t] = prev
    off[c][t] = normal() + (c == 3 and 1 or 0)
  end
end
local S = 4000
for _, k in ipairs{"ess_bulk", "ess_mean", "ess_tail"} do
  local e = P[k](iid)
  assert(e > 0.8 * S and e < 1.25 * S, fmt("iid %s %g", k, e))
end
assert(math.abs(P.rhat(iid) - 1) < 0.01, "iid rhat " .. P.rhat(iid))
local e_ar, want = P.ess_mean(ar), S * 0.2 / 1.8
assert(e_ar > want / 1.3 and e_ar < want * 1.3, fmt("AR(1) ess %g, expected about %g", e_ar, want))
assert(P.rhat(off) > 1.1, "shifted chain: rhat " .. P.rhat(off))
assert(P.rhat(ar) < 1.05)
-- rank-based: invariant under a monotone transformation
local ex = {}
for c = 1, 4 do ex[c] = {} for t = 1, 1000 do ex[c][t] = math.exp(ar[c][t]) end end
assert(P.ess_bulk(ex) == P.ess_bulk(ar) and P.ess_tail(ex) == P.ess_tail(ar), "rank invariance")
-- nan (R's NA) for constants and non-finite draws
local const = {{1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}}
assert(P.rhat(const) ~= P.rhat(const) and P.ess_bulk(const) ~= P.ess_bulk(const))
local inf = {{1, 2, 3, 4, 5, 6, 7, math.huge}, {1, 2, 5, 4, 3, 6, 8, 7}}
-- (ranks do not mind an infinity: R-hat and bulk ESS stay numbers, as in posterior)
assert(P.ess_tail(inf) ~= P.ess_tail(inf) and P.ess_mean(inf) ~= P.ess_mean(inf))
assert(P.rhat(inf) == P.rhat(inf) and P.ess_bulk(inf) == P.ess_bulk(inf))
-- quantiles are R's type 7
assert(P.quantile({4, 1, 3, 2}, 0.5) == 2.5 and P.quantile({1, 2, 3, 4, 5}, 0.05) == 1.2)
-- a summary row
local row = P.summarize(ar)
assert(row.q5 < row.q50 and row.q50 < row.q95 and row.mcse > 0 and row.mad > 0 and row.ess_bulk > 100)
print("lib_posterior: ok")
