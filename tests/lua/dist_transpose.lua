-- ranks: 1 2 3 4 5 8
-- SPDX-License-Identifier: MIT
-- Transposes between layouts of 1 to 5 dimensions, every dtype, even and balanced
-- splits (empty blocks included), other grids and memory orders: the forward result
-- is checked element by element against the global array and the way back bitwise;
-- nonblocking plans, given outputs, plan reports, and argument errors.
mp.exec(function()
  local P = mp.size
  local dtypes = {"f64", "f32", "i64", "i32", "u8"}
  local extents = {7, 6, 5, 4, 3}
  -- the global array: a value per canonical (d1, d2, ...) flat index, exact in every dtype
  local function val(dt, g)
    if dt == "u8" then return g % 251
    elseif dt == "i32" then return g * 7919 - 100000
    elseif dt == "i64" then return g * (1 << 40) + g
    elseif dt == "f32" then return g + 0.5
    else return g * 1.1 + 1 / 3 end
  end
  local function walk(lay, a, check)
    local rg, names, shape = lay:range(), lay.names, lay:local_shape()
    local dims, bad = lay.dims, 0
    local pos = {}
    for k = 1, #names do pos[names[k]] = k end
    for i = 1, #a do
      local rem, g = i - 1, {}
      for k = 1, #shape do
        g[names[k]] = rg[k][1] - 1 + rem % shape[k]
        rem = rem // shape[k]
      end
      local flat, m = 0, 1
      for k = 1, #names do
        local name = "d" .. k
        flat = flat + g[name] * m
        m = m * dims[pos[name]]
      end
      local v = val(lay.dtype, flat)
      if check then
        if a[i] ~= v then bad = bad + 1 end
      else
        a[i] = v
      end
    end
    return bad
  end
  local function spec(dt, nd, split, order)
    local parts = {}
    for _, k in ipairs(order) do
      parts[#parts + 1] = string.format("d%d=%d%s", k, extents[k], split[k] and "@" .. split[k] or "")
    end
    return dt .. "[" .. table.concat(parts, ", ") .. "]"
  end
  local function make(s, balanced)
    if not balanced then
      local ok, l = pcall(mp.layout, s)
      if ok then return l end
    end
    return mp.layout(s, {balanced = true})
  end
  local plans, bad = 0, 0
  for nd = 1, 5 do
    local fwd, rev = {}, {}
    for k = 1, nd do fwd[k] = k; rev[k] = nd + 1 - k end
    for _, dt in ipairs(dtypes) do
      for _, balanced in ipairs({false, true}) do
        -- from: the first dims split, global order; to: the last dims split, reversed order
        local sa, sb = {}, {}
        sa[1] = 1
        if nd >= 3 then sa[2] = 2 end
        sb[nd] = 1
        if nd >= 4 then sb[nd - 1] = 2 end
        local A = make(spec(dt, nd, sa, fwd), balanced)
        local B = make(spec(dt, nd, sb, rev), balanced)
        local plan = mp.transpose(A, B)
        plans = plans + 1
        local a = A:alloc()
        walk(A, a)
        local b = plan:forward(a)
        bad = bad + walk(B, b, true)
        -- info: what leaves and stays is this rank's block
        local info = plan:info()
        local es = ({f64 = 8, f32 = 4, i64 = 8, i32 = 4, u8 = 1})[dt]
        assert(info.send_bytes + info.self_bytes == #a * es, "info bytes")
        assert(info.recv_bytes + info.self_bytes == #b * es, "info recv bytes")
        local sent = mp.world:allreduce(info.send_bytes, "sum")
        local recvd = mp.world:allreduce(info.recv_bytes, "sum")
        assert(sent == recvd, "bytes sent and received differ over the ranks")
        assert(info.peers <= P - 1 and info.peak_extra <= info.send_bytes + info.recv_bytes)
        -- back, into a given output, nonblocking: bitwise the original
        local back = A:alloc()
        local req = plan:iback(b, back)
        local r = req:wait()
        assert(r == back)
        for i = 1, #a do if back[i] ~= a[i] then bad = bad + 1 end end
        -- a chain through a third layout (balanced, split on the middle dim) lands right
        if nd >= 2 then
          local sc = {}
          sc[(nd + 1) // 2] = 1
          local C = mp.layout(spec(dt, nd, sc, fwd), {balanced = true})
          local c = mp.transpose(B, C):forward(b)
          bad = bad + walk(C, c, true)
          local a2 = mp.transpose(C, A):forward(c)
          for i = 1, #a do if a2[i] ~= a[i] then bad = bad + 1 end end
        end
      end
    end
  end
  -- the seed's case through iforward and test()
  local pol = mp.layout("f64[sp=2, vpar=8@1, mu=4@2, r=4, theta=16]", {balanced = true})
  local col = mp.layout("f64[sp=2, r=4@1, theta=16@2, vpar=8, mu=4]", {balanced = true})
  local plan = mp.transpose(pol, col)
  local a = pol:alloc()
  for i = 1, #a do a[i] = mp.rank * 1e4 + i end
  local req = plan:iforward(a)
  local done, b = req:test()
  while not done do done, b = req:test() end
  local a2 = plan:back(b)
  for i = 1, #a do if a2[i] ~= a[i] then bad = bad + 1 end end
  assert(not pcall(req.wait, req), "a used request must refuse to wait again")

  -- two exchanges in flight with ordinary collectives between them
  local r1 = plan:iforward(a)
  local B2 = pol:with{order = {"theta", "mu", "r", "vpar", "sp"}}
  local plan2 = mp.transpose(pol, B2)
  local r2 = plan2:iforward(a)
  assert(mp.allreduce(1, "sum") == P)
  local b2 = r2:wait()
  local b1 = r1:wait()
  local back1, back2 = plan:back(b1), plan2:back(b2)
  for i = 1, #a do if back1[i] ~= a[i] or back2[i] ~= a[i] then bad = bad + 1 end end

  -- a plan's memory is for the peers it exchanges with, not for every rank
  local same = mp.transpose(pol, pol):info()
  local ata = plan:info()
  assert(same.peers == 0 and same.plan_bytes and ata.plan_bytes)
  local box = P > 1 and (ata.plan_bytes - same.plan_bytes) / (4 * ata.peers) or 0
  assert(P == 1 or (box > 0 and box == math.floor(box)), "one box per peer and direction")
  assert(same.plan_bytes < 2048, "a plan that keeps its block holds no box for the others")

  -- errors name the function, the argument and the rank
  local function err(pat, f, ...)
    local ok, e = pcall(f, ...)
    assert(not ok and e:find(pat, 1, true) and e:find("rank " .. mp.rank, 1, true),
           "expected an error with '" .. pat .. "', got: " .. tostring(e))
  end
  local X = mp.layout("f64[sp=3, vpar=8@1, mu=4, r=4, theta=16]", {balanced = true})
  err("bad argument #2 to 'mp.transpose'", mp.transpose, pol, X)
  err("bad argument #2 to 'mp.Transpose.forward'", plan.forward, plan, mp.array("f64", 3))
  err("bad argument #2 to 'mp.Transpose.forward'", plan.forward, plan, mp.array("f32", table.unpack(pol:local_shape())))
  err("bad argument #1 to 'mp.transpose'", mp.transpose, 5, pol)
  err("bad argument #1 to 'mp.layout'", mp.layout, "f64[x=10@1, y=3")
  err("does not divide", mp.layout, "f64[x=7@1]", {grid = {2}})

  local all = mp.world:allreduce(bad, "sum")
  assert(all == 0, all .. " wrong elements")
  if mp.rank == 0 then print(plans .. " plans at " .. P .. " ranks: every element right") end
end)
