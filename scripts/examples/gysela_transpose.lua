-- SPDX-License-Identifier: MIT
-- Gysela's 5-D transpose (seed 002): the domain (sp=2, r=4, theta=16, vpar=8, mu=4),
-- from the poloidal layout (split in vpar and mu) to the collisional layout (split in
-- r and theta) and back, checked element by element against the global array; then
-- the FFTs each layout is for: along vpar where the transpose made it whole (the
-- collisional layout), along theta where it is whole (the poloidal one), both local
-- (no message), checked against a direct sum on one line.
--   mpiexec -n 4 build/mplua scripts/examples/gysela_transpose.lua
--   mpiexec -n 16 build/mplua scripts/examples/gysela_transpose.lua
-- At 16 ranks the grids are the seed's (8x2 and 4x4, local shapes 2x1x2x4x16 and
-- 2x1x4x8x4); at other counts mp.layout chooses them (even splits).
mp.exec(function()
  local grids = mp.size == 16 and {{8, 2}, {4, 4}} or {}
  local pol = mp.layout("f64[sp=2, vpar=8@1, mu=4@2, r=4, theta=16]", {grid = grids[1]})
  local col = mp.layout("f64[sp=2, r=4@1, theta=16@2, vpar=8, mu=4]", {grid = grids[2]})
  -- the global array's element at 1-based global indices, by name
  local function f(g) return g.sp + 10 * g.r + 100 * g.theta + 10000 * g.vpar + 1e6 * g.mu end

  -- fill this rank's block of a layout from f, or check it against f
  local function walk(lay, a, check)
    local rg, names = lay:range(), lay.names
    local shape = lay:local_shape()
    local g, bad = {}, 0
    for i = 1, #a do
      local rem = i - 1
      for k = 1, #shape do
        g[names[k]] = rg[k][1] + rem % shape[k]
        rem = rem // shape[k]
      end
      if check then
        if a[i] ~= f(g) then bad = bad + 1 end
      else
        a[i] = f(g)
      end
    end
    return bad
  end

  local a = pol:alloc()
  walk(pol, a)
  local plan = mp.transpose(pol, col)
  local b = plan:forward(a)
  local bad = walk(col, b, true)
  local back = plan:back(b)
  for i = 1, #a do if back[i] ~= a[i] then bad = bad + 1 end end
  -- the FFT along vpar, whole in the collisional layout: local, one stage, no transpose
  local fv = mp.fft(col, {kind = "r2c", dims = {"vpar"}})
  local bv = fv:forward(b)
  -- and along theta in the poloidal layout
  local ft = mp.fft(pol, {kind = "r2c", dims = {"theta"}})
  local bt = ft:forward(a)
  -- check one coefficient line of each against a direct sum over the global function
  local function dft_err(lay, coef, dim, n)
    local rg, names = lay:range(), lay.names
    local shp = {coef:dims()}
    local worst = 0
    if #coef == 0 then return 0 end
    local pos = {} -- the first local point, the coefficient index along dim
    for k = 1, #names do pos[k] = 1 end
    for m = 0, shp[dim] - 1 do
      pos[dim] = m + 1
      local g = {}
      for k = 1, #names do g[names[k]] = rg[k][1] + pos[k] - 1 end
      local re, im = 0, 0
      for j = 0, n - 1 do
        g[names[dim]] = j + 1
        local x = f(g)
        re = re + x * math.cos(2 * math.pi * j * m / n)
        im = im - x * math.sin(2 * math.pi * j * m / n)
      end
      local z = coef:get(table.unpack(pos))
      worst = math.max(worst, math.abs(z.re - re), math.abs(z.im - im))
    end
    return worst
  end
  local ferr = math.max(dft_err(col, bv, 4, 8), dft_err(pol, bt, 5, 16))
  ferr = mp.world:allreduce(ferr, "max")
  local all = mp.world:allreduce(bad, "sum")
  local info = plan:info()
  local finfo = {fv:info(), ft:info()}
  local shapes = mp.world:gather({table.concat(pol:local_shape(), "x"),
                                  table.concat(col:local_shape(), "x"), info.peers,
                                  info.send_bytes, info.peak_extra}, 0)
  if mp.rank == 0 then
    print("poloidal:    " .. pol.spec)
    print("collisional: " .. col.spec)
    print(string.format("%-5s %-14s %-14s %6s %11s %11s", "rank", "poloidal", "collisional",
                        "peers", "sent bytes", "peak extra"))
    for r = 0, mp.size - 1 do
      local s = shapes[r + 1]
      print(string.format("%-5d %-14s %-14s %6d %11d %11d", r, s[1], s[2], s[3], s[4], s[5]))
    end
    print("method: " .. info.method)
    print(all == 0 and "checked: every element of the forward and back transposes is right"
          or ("WRONG ELEMENTS: " .. all))
    for _, fi in ipairs(finfo) do
      print(("FFT (r2c) along %s in %s: %d stage, %d transposes, %d messages -> %s"):format(
        fi.dims[1], fi.input, #fi.stages, #fi.transposes, fi.messages, fi.output))
    end
    print(("checked: the FFTs against direct sums, largest error %.1e"):format(ferr))
  end
  assert(all == 0, "wrong elements")
  assert(ferr < 1e-12 * 1e8, "wrong FFT coefficients") -- the sums reach 1e8
end)
