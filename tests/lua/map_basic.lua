-- ranks: nompi 1 2 3 4
-- SPDX-License-Identifier: MIT
-- mp.mapper / mp.map_rect / mp.map: values against f itself, gradients
-- against the same model taped inline (1e-12) and ad.check_grad (1e-6);
-- 0, 1, fewer-than-ranks and uneven job counts; ragged outputs; phi; the
-- static data shipped once (byte counters); handles freed on every rank.

local function close(a, b, tol)
  return math.abs(a - b) <= tol * math.max(1, math.abs(a), math.abs(b))
end

-- A job: theta = (a, b, c); x_r = {t_1..t_k}; x_i = {k, scale}. Ragged:
-- output length k varies by job. Nonlinear, with a constant last output.
local function f(theta, xr, xi)
  local y = {}
  for i = 1, xi[1] do
    y[i] = theta[1] * ad.exp(-theta[2] * xr[i]) + theta[3] ^ 2 * xi[2]
  end
  y[#y + 1] = 42
  return y
end
-- the same with plain numbers (math.exp): ad.exp on numbers must agree
local function data(n, k0)
  local xr, xi = {}, {}
  for j = 1, n do
    local k = (j * 5) % 4 + (k0 or 1)
    xr[j], xi[j] = {}, {k, j % 3 + 1}
    for i = 1, k do xr[j][i] = 0.1 * i + 0.01 * j end
  end
  return xr, xi
end
local function thetas(n, p)
  local th = {}
  for j = 1, n do th[j] = {p[1] + 0.01 * j, p[2], p[3] - 0.02 * j} end
  return th
end

for _, n in ipairs{0, 1, 3, 7, 16} do
  local xr, xi = data(n)
  local m = mp.mapper(f, xr, xi)
  assert(#m == n)
  -- plain numbers in, plain numbers out, equal to f evaluated here
  local th = thetas(n, {1.5, 0.7, 0.3})
  local y = m(th)
  assert(#y == n)
  for j = 1, n do
    local want = f(th[j], xr[j], xi[j])
    assert(#y[j] == #want, "ragged length")
    for i = 1, #want do assert(y[j][i] == want[i], ("job %d item %d"):format(j, i)) end
  end
  -- gradient of a weighted sum, map vs the same taped inline
  local function model(use_map)
    return function(p)
      local tt = thetas(n, p)
      local ys = use_map and m(tt) or {}
      if not use_map then for j = 1, n do ys[j] = f(tt[j], xr[j], xi[j]) end end
      local s = p[1] * 0
      for j = 1, n do for i = 1, #ys[j] do s = s + ys[j][i] * (j + i) / 10 end end
      return s
    end
  end
  local p0 = {1.5, 0.7, 0.3}
  local v1, g1 = ad.grad(model(true), p0)
  local v2, g2 = ad.grad(model(false), p0)
  assert(close(v1, v2, 1e-12), ("n=%d value %.17g vs %.17g"):format(n, v1, v2))
  for i = 1, 3 do assert(close(g1[i], g2[i], 1e-12), ("n=%d grad[%d] %.17g vs %.17g"):format(n, i, g1[i], g2[i])) end
  if n > 0 then
    local ok, r = ad.check_grad(model(true), p0, {rtol = 1e-6, atol = 1e-8})
    assert(ok, "check_grad through the map: max rel err " .. r.max_rel_err)
  end
  -- second call and a third: the same numbers (nothing cached wrongly)
  local v3, g3 = ad.grad(model(true), p0)
  assert(v3 == v1 and g3[1] == g1[1] and g3[2] == g1[2] and g3[3] == g1[3])
  m:free()
end

-- phi shared by every job; parameter kinds: table, mp.array, ad vector,
-- numbers mixed with vars (constants get no partials)
do
  local xr, xi = data(9)
  local g = function(phi, theta, r, i)
    local y = {}
    for k = 1, i[1] do y[k] = phi[1] * r[k] + phi[2] * theta[1] * theta[2] end
    return y
  end
  local m = mp.mapper(g, xr, xi)
  local function run(p)
    local phi = {p[1], p[2]}
    local th = {}
    for j = 1, 9 do
      if j % 3 == 0 then th[j] = mp.array("f64", {2.0, 2.0})  -- constants only
      elseif j % 3 == 1 then th[j] = {p[3], 0.5 * j}          -- var and number
      else th[j] = p * 0.5 end                                -- an ad vector
    end
    local ys = m(phi, th)
    local s = 0
    for j = 1, 9 do for k = 1, #ys[j] do s = s + ys[j][k] end end
    return s
  end
  local ok, r = ad.check_grad(run, {0.3, -1.2, 2.0}, {rtol = 1e-6, atol = 1e-8})
  assert(ok, "phi check_grad: " .. r.max_rel_err)
  -- plain call with phi as an mp.array
  local y = m(mp.array("f64", {1, 2}), (function() local t = {} for j = 1, 9 do t[j] = {1, 1} end return t end)())
  assert(y[1][1] == 1 * xr[1][1] + 2)
end

-- mp.map_rect (one shot) and mp.map (ragged, end indices) agree with mapper
do
  local xr, xi = data(5)
  local th = thetas(5, {1, 2, 3})
  local a = mp.map_rect(f, th, xr, xi)
  local m = mp.mapper(f, xr, xi)
  local b = m(th)
  for j = 1, 5 do for i = 1, #a[j] do assert(a[j][i] == b[j][i]) end end
  local param, param_end, flat_r, r_end, flat_i, i_end, y_end = {}, {}, {}, {}, {}, {}, {}
  local ny = 0
  for j = 1, 5 do
    for _, v in ipairs(th[j]) do param[#param + 1] = v end
    param_end[j] = #param
    for _, v in ipairs(xr[j]) do flat_r[#flat_r + 1] = v end
    r_end[j] = #flat_r
    for _, v in ipairs(xi[j]) do flat_i[#flat_i + 1] = v end
    i_end[j] = #flat_i
    ny = ny + #b[j]
    y_end[j] = ny
  end
  local y = mp.map(f, y_end, param, param_end, flat_r, r_end, flat_i, i_end)
  local k = 0
  for j = 1, 5 do for i = 1, #b[j] do k = k + 1; assert(y[k] == b[j][i]) end end
  assert(#y == ny)
  local ok, err = pcall(mp.map, f, {1, 2, 3, 4, 99}, param, param_end, flat_r, r_end, flat_i, i_end)
  assert(not ok and err:find("y_end", 1, true), err)
  ok, err = pcall(mp.map, f, y_end, param, {3, 2, 9, 12, 15}, flat_r, r_end, flat_i, i_end)
  assert(not ok and err:find("param_end[2]", 1, true), err)
end

-- a mapper without data: jobs fixed by the first call
do
  local m = mp.mapper(function(t) return {t[1] * 2, mp.rank >= 0 and 1 or 0} end)
  local y = m({{1}, {2}, {3}})
  assert(y[3][1] == 6 and #m == 3)
  local ok, err = pcall(m, {{1}})
  assert(not ok and err:find("3 jobs", 1, true), err)
end

-- static data travels once: calls send only parameters
do
  local n, k = 8, 20000
  local xr = {}
  for j = 1, n do xr[j] = mp.array("f64", k); xr[j][1] = j end
  local databytes = n * k * 8
  local s0 = mp.stats().bytes_sent
  local m = mp.mapper(function(t, r) return {t[1] * r[1]} end, xr, nil)
  local s1 = mp.stats().bytes_sent
  if mp.size > 1 then
    -- every rank but 0 got its block
    local shipped = databytes * (n - n * 1 // mp.size) // n
    assert(s1 - s0 >= shipped, ("setup sent %d bytes, data is %d"):format(s1 - s0, shipped))
  end
  local th = {}
  for j = 1, n do th[j] = {j + 0.5} end
  for call = 1, 3 do
    local a = mp.stats().bytes_sent
    local y = m(th)
    local sent = mp.stats().bytes_sent - a
    assert(y[n][1] == n * (n + 0.5))
    -- parameters (8 x 8 bytes) plus headers and commands; the data is 1.28 MB
    assert(sent < 4096, ("call %d sent %d bytes"):format(call, sent))
  end
  -- and the workers received no data either: ask them
  mp.exec(function() BYTES_IN = mp.stats().bytes_received end)
  local y = m(th)
  mp.exec(function()
    local d = mp.stats().bytes_received - BYTES_IN
    if mp.rank > 0 then mp.send(0, d) return end
    for r = 1, mp.size - 1 do
      d = mp.recv(r)
      assert(d < 4096, ("rank %d received %d bytes in a call"):format(r, d))
    end
  end)
  assert(y[1][1] == 1.5)
end

-- constants get no partials: a big constant phi costs no Jacobian columns
do
  local phi = mp.array("f64", 1000)
  phi[7] = 1.5
  local c = mp.mapper(function(ph, t) local y = {} for i = 1, 100 do y[i] = t[1] * ph[i] end return y end,
                      {{}, {}, {}, {}})
  local a = mp.stats().bytes_received
  local v, g = ad.grad(function(p)
    local ys = c(phi, {{p[1]}, {p[1]}, {p[1]}, {p[1]}})
    local s = 0
    for j = 1, 4 do s = s + ys[j][7] end
    return s
  end, {2.0})
  local got = mp.stats().bytes_received - a
  assert(v == 12 and g[1] == 6, v)
  -- 4 x 100 values and 100 partials each, against 100 x 1001 without the masks
  assert(got < 32768, ("rank 0 received %d bytes"):format(got))
end

-- handles: free, collected handles forgotten on every rank
do
  -- the number of mapper entries, the same on every rank
  local function live()
    mp.exec(function()
      local n = 0
      for _ in pairs(debug.getregistry()["mp.maps"] or {}) do n = n + 1 end
      if mp.rank > 0 then mp.send(0, n) return end
      for r = 1, mp.size - 1 do
        local w = mp.recv(r)
        assert(w == n, ("rank %d holds %d mappers, rank 0 %d"):format(r, w, n))
      end
      LIVE = n
    end)
    return LIVE
  end
  collectgarbage()
  local flush = mp.mapper(f, data(1)) -- its task frees the collected ones
  local base = live()
  local ms = {}
  for i = 1, 5 do ms[i] = mp.mapper(f, data(3)) end
  assert(live() == base + 5)
  ms[1]:free()
  local ok, err = pcall(ms[1], thetas(3, {1, 1, 1}))
  assert(not ok and err:find("freed", 1, true), err)
  ms = nil
  collectgarbage()
  collectgarbage()
  local m = mp.mapper(f, data(3)) -- this task frees the collected ones
  assert(live() == base + 1, "collected mappers still held: " .. live())
  assert(tostring(m):find("3 jobs", 1, true) and #flush == 1)
end
print("map_basic ok", mp.size)
