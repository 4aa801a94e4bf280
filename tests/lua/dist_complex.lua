-- ranks: 1 2 3 4
-- SPDX-License-Identifier: MIT
-- Complex arrays through the distributed machinery: transposes (blocking and
-- nonblocking, views on both sides) and halo exchanges of c64 and c128 blocks, every
-- element checked against the global array; reductions of complex values and arrays
-- with sum and prod (and the ops they have not, refused on every rank before any
-- message); and the trace of a c128 transpose, whose bytes are 16 per element.
local n = mp.size
local C = mp.complex

mp.exec(function()
  local C = mp.complex
  -- the global element at 1-based global indices (x, y, z): exact in c64 too
  local function f(x, y, z) return C(x + 10 * y + 100 * z, -(z + 10 * x)) end
  for _, dt in ipairs({"c128", "c64"}) do
    local A = mp.layout(dt .. "[x=6, y=5@1, z=4]", {balanced = true})
    local B = mp.layout(dt .. "[x=6@1, y=5, z=4]", {balanced = true})
    local T = mp.transpose(A, B)
    local a = A:alloc()
    local ra = A:range()
    local sa = A:local_shape()
    for k = 1, sa[3] do
      for j = 1, sa[2] do
        for i = 1, sa[1] do a:set(i, j, k, f(ra[1][1] + i - 1, ra[2][1] + j - 1, ra[3][1] + k - 1)) end
      end
    end
    local function check(lay, b, what)
      local rg, sh = lay:range(), lay:local_shape()
      for k = 1, sh[3] do
        for j = 1, sh[2] do
          for i = 1, sh[1] do
            assert(b:get(i, j, k) == f(rg[1][1] + i - 1, rg[2][1] + j - 1, rg[3][1] + k - 1),
                   what .. ": wrong element")
          end
        end
      end
    end
    local b = T:forward(a)
    assert(b.dtype == dt)
    check(B, b, dt .. " forward")
    local back = T:back(b)
    for i = 1, #a do assert(back[i] == a[i], dt .. " back") end
    -- nonblocking into a strided output view
    local big = mp.array(dt, table.unpack(B:local_shape()))
    local big2 = mp.array(dt, B:local_shape()[1] + 1, B:local_shape()[2], B:local_shape()[3])
    local out = big2:view({2, -1}, ":", ":")
    assert(not out.contiguous)
    T:iforward(a, out):wait()
    check(B, out, dt .. " into a view")
    big:copy_from(out)
    -- a periodic halo of width 1 along y (the split dimension)
    local h = mp.halo(A, {0, 1, 0}, {periodic = true})
    local u = A:alloc({0, 1, 0})
    u:view(":", {2, -2}, ":"):copy_from(a)
    h:exchange(u)
    local Y = 5
    for k = 1, sa[3] do
      for i = 1, sa[1] do
        local lo = (ra[2][1] - 2) % Y + 1        -- the global y below this block (periodic)
        local hi = ra[2][2] % Y + 1               -- and above
        assert(u:get(i, 1, k) == f(i, lo, k) and u:get(i, sa[2] + 2, k) == f(i, hi, k), dt .. " halo")
      end
    end
  end
  -- reductions: values, arrays; sum and prod only
  local z = C(mp.rank + 1, -1)
  local s = mp.allreduce(z, "sum")
  assert(s == C(mp.size * (mp.size + 1) / 2, -mp.size))
  local p, want = mp.allreduce(C(0, 1), "prod"), C(1, 0)
  for _ = 1, mp.size do want = want * C(0, 1) end
  assert(p.re == want.re and p.im == want.im, tostring(p))
  for _, dt in ipairs({"c64", "c128"}) do
    for _, len in ipairs({3, 20000}) do
      local a = mp.array(dt, len):fill({mp.rank, 1})
      local r = mp.allreduce(a, "sum")
      assert(r[len] == C(mp.size * (mp.size - 1) / 2, mp.size) and r[1] == r[len])
      local q = mp.reduce(mp.array(dt, len):fill({0, 1}), "prod", mp.size - 1)
      if mp.rank == mp.size - 1 then assert(q[1] == want and q[len] == want) end
    end
    local ok, e = pcall(mp.allreduce, mp.array(dt, 2), "max")
    assert(not ok and e:find("'max' is not defined on " .. dt .. " arrays", 1, true), e)
  end
  assert(mp.scan(C(1, 1), "sum") == C(mp.rank + 1, mp.rank + 1))
end)

-- the trace of a c128 transpose: 16 bytes an element
local file = os.tmpname()
mp.trace.start{file = file}
mp.exec(function()
  local A = mp.layout("c128[x=8@1, y=12]", {balanced = true})
  local B = mp.layout("c128[x=8, y=12@1]", {balanced = true})
  mp.transpose(A, B):forward(A:alloc())
end)
mp.trace.stop()
os.remove(file)
local m = mp.trace.matrix{kind = "transpose", by = "bytes"}
local A = mp.layout("c128[x=8@1, y=12]", {balanced = true})
local B = mp.layout("c128[x=8, y=12@1]", {balanced = true})
for i = 1, n do
  for j = 1, n do
    local want = A:local_shape(i - 1)[1] * B:local_shape(j - 1)[2] * 16
    assert(m:get(i, j) == (i == j and 0 or want), "trace bytes")
  end
end
print("dist_complex ok")
