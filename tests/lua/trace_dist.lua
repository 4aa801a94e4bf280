-- ranks: 1 2 4
-- SPDX-License-Identifier: MIT
-- mp.trace and the exchanges of distributed arrays: a transpose (blocking and
-- nonblocking, forward and back), a halo exchange and the neighbourhood
-- collectives of a Cartesian topology are each a kind of their own. Their
-- matrices (mp.trace.matrix and the file's rows) are the exact ones of the
-- layouts and the grid, p2p and "coll" see none of their messages, every
-- application is one span of its kind on every rank with its messages (and
-- their flows) inside, and the file passes the checker.
local TJ = require "mplua.trace_json"
local n = mp.size
local file = os.tmpname()

-- the layouts, the grid and the plans of the job (the same on every rank)
local job = [[
  local A = mp.layout("f64[x=8@1, y=12]")             -- rows split over the ranks
  local B = mp.layout("f64[x=8, y=12@1]")             -- columns split
  local T = mp.transpose(A, B)
  local t = mp.cart(mp.size, {periodic = {true, false}})
  local lay = t:layout("f64[x=8@1, y=6@2]")
  local h = mp.halo(lay, 1, t)
  return A, B, T, t, lay, h
]]

mp.trace.start{file = file}
mp.exec(function(src)
  local A, B, T, t, lay, h = load(src)()
  local a = A:alloc()
  local b = T:forward(a)                  -- 1: blocking
  local q = T:iforward(a, b)              -- 2: nonblocking, waited
  assert(q:wait() == b)
  T:back(b, a)                            -- 3: blocking, back
  q = T:iback(b, a)                       -- 4: nonblocking, tested to the end
  repeat local done = q:test() until done
  local u = lay:alloc(1)
  h:exchange(u)                           -- halo: blocking
  h:iexchange(u):wait()                   -- and nonblocking
  t:neighbor_allgather(mp.world.rank)
  t:neighbor_alltoall({1, 2, 3, 4})
end, job)
mp.trace.stop()
local width, sent0 = mp.exec(function(src) -- rank 0's plans, outside the recording
  local _, _, T, _, _, h = load(src)()
  return h.width, T:info().send_bytes
end, job)
local t = mp.cart(n, {periodic = {true, false}})      -- values: no task needed
local lay = t:layout("f64[x=8@1, y=6@2]")

-- ---------------------------------------------------- expected matrices
local function zeros()
  local m = {}
  for i = 1, n do m[i] = {} for j = 1, n do m[i][j] = 0 end end
  return m
end
-- a transpose: rank i's block of A meets rank j's of B in 8/n x 12/n doubles
local tc, tb = zeros(), zeros()
for i = 1, n do
  for j = 1, n do
    if i ~= j then tc[i][j], tb[i][j] = 4, 4 * (8 // n) * (12 // n) * 8 end
  end
end
-- a halo exchange: a slab of width 1 to each neighbour that is not the rank
-- itself, spanning the whole array (halos included) along the other dimension;
-- the slabs of one dimension that go to one neighbour share a message
local hc, hb, nc = zeros(), zeros(), zeros()
for r = 0, n - 1 do
  local nb, shape, w = t:neighbors(r), lay:local_shape(r), width
  local sent = {}                                   -- [dimension][peer]
  for s = 1, 4 do
    local p, d = nb[s], s <= 2 and 1 or 2
    if p and p ~= r then
      local other = d == 1 and shape[2] + 2 * w[2] or shape[1] + 2 * w[1]
      sent[d] = sent[d] or {}
      if not sent[d][p] then                        -- exchange + iexchange
        sent[d][p] = true
        hc[r + 1][p + 1] = hc[r + 1][p + 1] + 2
      end
      hb[r + 1][p + 1] = hb[r + 1][p + 1] + 2 * other * 8
      nc[r + 1][p + 1] = nc[r + 1][p + 1] + 1
    end
  end
end
if n == 4 then -- the 2x2 grid by hand: x periodic (two ranks: one neighbour), y not
  assert(t.dims[1] == 2 and t.dims[2] == 2)
  assert(hc[1][2] == 2 and hc[1][3] == 2 and hc[1][4] == 0, "x: both sides in one message, y: one")
  assert(hb[1][2] == 4 * 5 * 8 and hb[1][3] == 2 * 6 * 8)
end

local tr = TJ.load(file)
local function expect(kind, by, want)
  local a = mp.trace.matrix{kind = kind, by = by}
  local f = TJ.matrix(tr, kind, by)
  for i = 1, n do
    for j = 1, n do
      local w = type(want) == "table" and want[i][j] or want
      assert(a:get(i, j) == w and f[i][j] == w,
             ("%s %s [%d][%d]: %s and %s, want %s"):format(kind, by, i, j, a:get(i, j), f[i][j], w))
    end
  end
end
expect("transpose", "count", tc)
expect("transpose", "bytes", tb)
expect("halo", "count", hc)
expect("halo", "bytes", hb)
expect("neighbor_allgather", "count", nc)
expect("neighbor_alltoall", "count", nc)
expect("p2p", "count", 0)
expect("coll", "count", 0)
expect("other", "count", 0)
-- "all" is the sum of the kinds
local all = mp.trace.matrix{kind = "all"}
for i = 1, n do
  for j = 1, n do
    assert(all:get(i, j) == tc[i][j] + hc[i][j] + 2 * nc[i][j], "all = the kinds' sum")
  end
end
-- a plan's own report agrees with the trace (forward, this rank = 0)
assert(sent0 == (n - 1) * (8 // n) * (12 // n) * 8)

-- ---------------------------------------------------------------- events
local good, st = TJ.check(tr)
assert(good, st)
local bn = st.by_name
local function count(name) return bn[name] or 0 end
assert(count("transpose") == 2 * n and count("itranspose") == 2 * n and
       count("transpose wait") == n, ("%d transpose, %d itranspose, %d transpose wait")
       :format(count("transpose"), count("itranspose"), count("transpose wait")))
assert(count("halo") == n and count("ihalo") == n and count("halo wait") == n)
assert(count("neighbor_allgather") == n and count("neighbor_alltoall") == n)
assert(count("send") == 0 and count("recv") == 0, "no p2p spans")

-- every message of an exchange is inside a span of its kind (the test()
-- loop's receives excepted: a test records no span), and has its flow
local spans, flows = {}, {}
for _, e in ipairs(tr.events) do
  if e.ph == "X" and e.dur > 0 then
    spans[e.pid] = spans[e.pid] or {}
    table.insert(spans[e.pid], e)
  elseif e.ph == "s" or e.ph == "f" then
    flows[e.pid .. "@" .. e.ts .. e.ph] = true
  end
end
local function around(e) -- the span just outside e (by depth and time)
  for _, s in ipairs(spans[e.pid] or {}) do
    if s.args.depth == e.args.depth - 1 and s.ts <= e.ts + 0.002 and
       e.ts <= s.ts + s.dur + 0.002 then
      return s
    end
  end
end
local msgs, outside = {}, {}
for _, e in ipairs(tr.events) do
  if e.ph == "X" and (e.name == "out" or e.name == "in") then
    local k = e.args.kind
    assert(k == "transpose" or k == "halo" or k:find("^neighbor_") or
           (k == "p2p" or TJ.colls[k]), "a message of kind " .. k)
    local key = k .. " " .. e.name
    msgs[key] = (msgs[key] or 0) + 1
    local s = around(e)
    if k == "transpose" or k == "halo" or k:find("^neighbor_") then
      if s and s.cat == k and s.args.kind == k then
        assert(s.args.peers >= 1 and s.args.bytes >= e.args.bytes and s.args.seq >= 1)
        assert(s.args.method and s.args.src and s.args.src:match("trace_dist%.lua:%d+$"))
      else
        outside[key] = (outside[key] or 0) + 1
      end
      if n > 1 then
        assert(flows[e.pid .. "@" .. e.ts .. (e.name == "out" and "s" or "f")],
               key .. " without its flow")
      end
    end
  end
end
local off = n * (n - 1) -- a transpose's messages
for _, dir in ipairs{"out", "in"} do
  assert((msgs["transpose " .. dir] or 0) == 4 * off, dir)
  local h2 = 0
  for i = 1, n do for j = 1, n do h2 = h2 + hc[i][j] end end
  assert((msgs["halo " .. dir] or 0) == h2 and not outside["halo " .. dir], "halo " .. dir)
end
assert(not outside["transpose out"], "every send of a transpose is inside its span")
-- only the receives the test() loop took may be outside: at most one application's
assert((outside["transpose in"] or 0) <= off, outside["transpose in"])
for _, e in ipairs(tr.events) do
  if e.ph == "X" and e.cat == "transpose" then
    assert(e.args.peers == (n > 1 and n - 1 or 0), "a transpose talks to every other rank")
    assert(e.name ~= "transpose" or e.args.bytes == 2 * (n - 1) * (8 // n) * (12 // n) * 8,
           "a blocking transpose's span holds what it sent and received")
  end
end
os.remove(file)

-- the report draws a panel per kind, the transpose among them
if n > 1 then
  mp.trace.start{file = file}
  mp.exec(function(src) local A, _, T = load(src)() T:forward(A:alloc()) end, job)
  mp.trace.stop()
  local html = os.tmpname()
  require("mplua.trace_report").report(file):save(html .. ".html")
  local svg = assert(io.open(html .. ".matrix.svg")):read("a")
  assert(svg:find('data%-kind="transpose"') and not svg:find('data%-kind="p2p"'))
  local tl = assert(io.open(html .. ".timeline.svg")):read("a")
  local _, arrows = tl:gsub('<line class="arrow" data%-kind="transpose"', "")
  assert(arrows == off, arrows)
  for _, f in ipairs{html, html .. ".html", html .. ".matrix.svg", html .. ".timeline.svg", file} do
    os.remove(f)
  end
end
print("trace_dist ok", n)
