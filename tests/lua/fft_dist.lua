-- ranks: 1 2 3 4 6 8
-- SPDX-License-Identifier: MIT
-- Distributed FFTs against a serial DFT of the whole array (a naive one in Lua, exact
-- twiddles, computed by every rank for itself): 3-D arrays of odd and even sizes, slab
-- and pencil decompositions (even and balanced splits, empty blocks), c2c in c128 and
-- c64, r2c from f64 and f32 with the halved dimension whole or split in the input,
-- transforms along a subset of the dimensions, forward and backward (unnormalised:
-- backward(forward(a)) = N a), blocking and nonblocking. Tolerance: 1e-12 of the
-- largest |coefficient| in double precision, 2e-5 in single.
local function job(spec, opts, grid, rtol)
  return mp.exec(function(spec, opts, grid, rtol)
    local C = mp.complex
    local lay = mp.layout(spec, {balanced = true, grid = grid})
    local names, ext = lay.names, lay.dims
    local nd = #names
    local r2c = opts.kind == "r2c"
    local plan = mp.fft(lay, opts)
    -- the global input: a fixed function of the 0-based global indices
    local function f(g)
      local x = 0.0
      for k = 1, nd do x = x + math.sin(1.3 * k + g[k] * (0.7 + 0.2 * k)) end
      local y = 0.0
      for k = 1, nd do y = y + math.cos(0.9 * k + g[k] * g[k] * 0.11) end
      return x, r2c and 0 or y
    end
    -- the whole array, serially: re/im tables indexed by the flat 0-based index
    local total = 1
    for k = 1, nd do total = total * ext[k] end
    local re, im = {}, {}
    local function unflat(i)
      local g = {}
      for k = 1, nd do g[k] = i % ext[k]; i = i // ext[k] end
      return g
    end
    for i = 0, total - 1 do re[i], im[i] = f(unflat(i)) end
    -- naive DFT along dimension k of (re, im), sign -1
    local function dft(k)
      local n, stride = ext[k], 1
      for j = 1, k - 1 do stride = stride * ext[j] end
      local c, s = {}, {}
      for m = 0, n - 1 do c[m], s[m] = math.cos(2 * math.pi * m / n), -math.sin(2 * math.pi * m / n) end
      local nr, ni = {}, {}
      for i = 0, total - 1 do
        local g = (i // stride) % n
        local base = i - g * stride
        local sr, si = 0.0, 0.0
        for j = 0, n - 1 do
          local t = (g * j) % n
          local xr, xi = re[base + j * stride], im[base + j * stride]
          sr = sr + xr * c[t] - xi * s[t]
          si = si + xr * s[t] + xi * c[t]
        end
        nr[i], ni[i] = sr, si
      end
      re, im = nr, ni
    end
    local tdims = opts.dims or names
    local function index_of(name)
      if type(name) == "number" then return name end
      for k = 1, nd do if names[k] == name then return k end end
    end
    for _, d in ipairs(tdims) do dft(index_of(d)) end
    local big = 0
    for i = 0, total - 1 do big = math.max(big, math.abs(re[i]), math.abs(im[i])) end
    -- this rank's input block
    local a = lay:alloc()
    local rg = lay:range()
    local shape = lay:local_shape()
    local function each(sh, rng, fn) -- fn(local flat index, 0-based global indices)
      local n = 1
      for k = 1, nd do n = n * sh[k] end
      for i = 1, n do
        local g, rem = {}, i - 1
        for k = 1, nd do g[k] = rng[k][1] - 1 + rem % sh[k]; rem = rem // sh[k] end
        fn(i, g)
      end
    end
    each(shape, rg, function(i, g)
      local x, y = f(g)
      a[i] = r2c and x or C(x, y)
    end)
    local out = plan.output
    local worst = 0
    local function check(b)
      each(out:local_shape(), out:range(), function(i, g)
        local flat, mul = 0, 1
        for k = 1, nd do flat = flat + g[k] * mul; mul = mul * ext[k] end
        local z = b[i]
        worst = math.max(worst, math.abs(z.re - re[flat]), math.abs(z.im - im[flat]))
      end)
    end
    local b = plan:forward(a)
    assert(b.dtype == out.dtype)
    check(b)
    -- nonblocking, into a given output, tested to the end
    local b2 = out:alloc()
    local req = plan:iforward(a, b2)
    local got
    repeat local done, r = req:test(); got = done and r until done
    assert(got == b2)
    check(b2)
    -- backward: N times the input
    local N = 1
    for _, d in ipairs(tdims) do N = N * ext[index_of(d)] end
    local back = plan:ibackward(b):wait()
    local bw = 0
    for i = 1, #a do
      local z, w = back[i], a[i]
      if r2c then bw = math.max(bw, math.abs(z - N * w))
      else bw = math.max(bw, math.abs(z.re - N * w.re), math.abs(z.im - N * w.im)) end
    end
    worst = mp.allreduce(worst, "max")
    bw = mp.allreduce(bw, "max")
    local info = plan:info()
    return worst / big, bw / (N * big), info.messages, #info.stages, #info.transposes
  end, spec, opts, grid, rtol)
end

local n = mp.size
local pencil = mp.dims(n, 2)
local cases = {
  -- spec, options, grid (nil: chosen), tolerance
  {"c128[x=8, y=6@1, z=4@2]", {}, pencil, 1e-12},                  -- pencil, even
  {"c128[x=9, y=7@1, z=5@2]", {}, pencil, 1e-12},                  -- pencil, odd
  {"c128[x=6, y=5, z=7@1]", {}, nil, 1e-12},                       -- slab
  {"c64[x=7, y=6@1, z=5@2]", {}, pencil, 2e-5},                    -- single precision
  {"f64[x=8, y=5@1, z=6@2]", {kind = "r2c"}, pencil, 1e-12},       -- halved z: split first
  {"f64[x=7, y=6@1, z=4@2]", {kind = "r2c", dims = {"y", "z", "x"}}, pencil, 1e-12}, -- halved x: whole
  {"f32[x=9, y=4, z=6@1]", {kind = "r2c", half = "x"}, nil, 2e-5},
  {"c128[x=5, y=8@1, z=3]", {dims = {"z", "y"}}, nil, 1e-12},      -- a subset
  {"f64[x=6, y=7@1, z=5]", {kind = "r2c", dims = {2}}, nil, 1e-12}, -- r2c along the split one alone
}
for _, c in ipairs(cases) do
  local err, berr, msgs, stages, nt = job(c[1], c[2], c[3], c[4])
  assert(err <= c[4], ("%s %s: forward error %g"):format(c[1], c[2].kind or "c2c", err))
  assert(berr <= c[4], ("%s %s: backward error %g"):format(c[1], c[2].kind or "c2c", berr))
  if n == 1 then assert(msgs == 0) end
  print(("%-30s %-4s stages %d, transposes %d: forward %.1e, backward %.1e"):format(c[1],
        c[2].kind or "c2c", stages, nt, err, berr))
end
print("fft_dist ok")
