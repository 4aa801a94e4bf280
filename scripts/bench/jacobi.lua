-- SPDX-License-Identifier: MIT
-- The 2-D 5-point Jacobi step on a local block (n x n f64, halo of width 1),
-- written with array math, against the same step as a plain C loop in the
-- same process (bench.jacobi), interleaved; medians and ratios.
--   build/arraybench scripts/bench/jacobi.lua [n=256] [rounds=15]
-- Goal: array math (fused lincomb over shifted views) <= 1.5x the C loop.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "?.lua;" .. package.path
local common = require "common"
local n = tonumber(arg[1]) or 256
local rounds = tonumber(arg[2]) or 15

local u, v = mp.array("f64", n, n), mp.array("f64", n, n)
for i = 1, #u do u[i] = math.sin(i) end
local cells = (n - 2) * (n - 2)
-- enough steps for ~20 ms of C work per sample
local steps = math.max(1, math.floor(2e7 / (cells * 8)))

-- array math: the views are made once, as a user would
local c = v:interior(1)
local N, S = u:interior(1, -1, 0), u:interior(1, 1, 0)
local W, E = u:interior(1, 0, -1), u:interior(1, 0, 1)
local function lincomb(k)
  local t = bench.now()
  for _ = 1, k do c:lincomb(0.25, N, 0.25, S, 0.25, W, 0.25, E) end
  return (bench.now() - t) / k
end
-- the same with the views made inside the step
local function lincomb_views(k)
  local t = bench.now()
  for _ = 1, k do
    v:interior(1):lincomb(0.25, u:interior(1, -1, 0), 0.25, u:interior(1, 1, 0),
                          0.25, u:interior(1, 0, -1), 0.25, u:interior(1, 0, 1))
  end
  return (bench.now() - t) / k
end
-- eager operators, one pass each (NumPy style): for contrast
local function eager(k)
  local t = bench.now()
  for _ = 1, k do c:copy_from(N):add_(S):add_(W):add_(E):mul_(0.25) end
  return (bench.now() - t) / k
end
-- the element loop in Lua: for contrast (fewer steps, it is slow)
local function lua_loop(k)
  local t = bench.now()
  for _ = 1, k do
    for j = 2, n - 1 do
      local o = (j - 1) * n
      for i = 2, n - 1 do
        v[i + o] = 0.25 * (u[i - 1 + o] + u[i + 1 + o] + u[i + o - n] + u[i + o + n])
      end
    end
  end
  return (bench.now() - t) / k
end

-- same result, bit for bit
local ref = mp.array("f64", n, n)
bench.jacobi(u, ref, 1)
lincomb(1)
assert(mp.Array.sub(v, ref):norm(math.huge) == 0, "lincomb differs from the C loop")
eager(1)
assert(mp.Array.sub(v, ref):norm(math.huge) == 0, "eager ops differ from the C loop")

local lsteps = math.max(1, steps // 20)
local med = common.interleave(rounds, {
  {"c", function() return bench.jacobi(u, v, steps) end},
  {"lincomb", function() return lincomb(steps) end},
  {"lincomb_views", function() return lincomb_views(steps) end},
  {"eager", function() return eager(steps) end},
  {"lua", function() return lua_loop(lsteps) end},
})
local function row(name, what)
  print(string.format("%-34s %10.1f us  %6.2f ns/cell  %5.2fx C", what, med[name] * 1e6,
                      med[name] / cells * 1e9, med[name] / med.c))
end
print(string.format("Jacobi step, %dx%d f64 block, medians of %d interleaved rounds", n, n, rounds))
row("c", "plain C loop (bench.jacobi)")
row("lincomb", "array math: lincomb, views made once")
row("lincomb_views", "array math: lincomb, views each step")
row("eager", "array math: copy_from + add_ x3 + mul_")
row("lua", "element loop in Lua (a[i])")
