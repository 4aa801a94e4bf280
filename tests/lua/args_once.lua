-- ranks: 1 2 3 4
-- SPDX-License-Identifier: MIT
-- The lists and options the builtins take are read once, into storage of
-- their own: a proxy table whose length and items answer truly the first
-- time and lie afterwards (a length of 2^40, items of 10^9), and garbage
-- whose finalizer spoils a list while a call runs, change nothing: every
-- call gives what the first answers say (or a clean argument error when
-- the spoiling came first), never a read out of bounds (the ASan build
-- runs this too) or another rank's traffic.
local n = mp.size

-- a list that answers each question truly once
local function liar(items, len)
  local asked = {}
  return setmetatable({}, {
    __len = function()
      if asked.len then return 1 << 40 end
      asked.len = true
      return len or #items
    end,
    __index = function(_, k)
      if asked[k] then return 1e9 end
      asked[k] = true
      return items[k]
    end,
  })
end

local function same(a, b) return table.concat(a, " ") == table.concat(b, " ") end

-- Rounds of call(t, payload) on a fresh list t (and payload) from make(),
-- with garbage whose finalizers set t[k] = bad made just before: in
-- generational mode with the smallest minor step, a young collection (and
-- so the finalizers) comes at one of the call's own allocations about as
-- often as before it or after it.
local function spoiled(rounds, make, k, bad, call)
  collectgarbage("generational", 1, 100)
  for round = 1, rounds do
    local t, payload = make()
    for _ = 1, round % 7 do setmetatable({}, {__gc = function() t[k] = bad end}) end
    call(t, payload, round)
  end
  collectgarbage("incremental")
  collectgarbage()
end

local function payload()
  local v = {}
  for i = 1, 50 do v[i] = {i} end
  return v
end

local function others()
  local t = {}
  for r = 0, n - 1 do if r ~= mp.rank then t[#t + 1] = r end end
  return t
end

------------------------------------------------------------------ send
-- send and isend to a list: the first answers name the ranks
local got = mp.exec(function()
  local total = 0
  if mp.rank == 0 then
    if mp.size > 1 then
      mp.send(liar(others()), "to each")
      mp.isend(liar(others()), "again"):wait()
      local many = {}
      for i = 1, 20 do many[i] = 1 + i % (mp.size - 1) end -- past the on-stack room
      mp.send(liar(many), "many")
    end
  else
    assert(mp.recv(0) == "to each" and mp.recv(0) == "again")
    local want = 0
    for i = 1, 20 do if 1 + i % (mp.size - 1) == mp.rank then want = want + 1 end end
    for _ = 1, want do assert(mp.recv(0) == "many") end
    total = want
  end
  return mp.handin(total)
end)
assert(got == (n > 1 and 20 or 0), got)

-- a finalizer turns the list's first rank into 10^9 at any moment: the send
-- goes where the list said when it was read, or is refused before any message
local sent = mp.exec(function()
  local ok_count = 0
  if mp.rank == 0 and mp.size > 1 then
    spoiled(300, function() return {1}, payload() end, 1, 1e9, function(t, v, round)
      local ok, e = pcall(round % 2 == 0 and mp.send or mp.isend, t, v)
      if ok then ok_count = ok_count + 1
      else assert(tostring(e):find("out of range 0..", 1, true), e) end
    end)
    mp.send(1, "end", ok_count)
  elseif mp.rank == 1 then
    local k = 0
    while true do
      local v, c = mp.recv(0)
      if v == "end" then assert(k == c, k .. " received, " .. tostring(c) .. " sent"); break end
      assert(#v == 50 and v[50][1] == 50)
      k = k + 1
    end
  end
  return mp.handin(ok_count)
end)
assert(n == 1 or sent > 0)

------------------------------------------------------------ collectives
mp.exec(function()
  local vals = {}
  for i = 1, mp.size do vals[i] = 100 + i end
  assert(mp.scatter(mp.rank == 0 and liar(vals) or nil) == 101 + mp.rank)
  local mine = {}
  for i = 1, mp.size do mine[i] = mp.rank * 1000 + i end
  local t = mp.alltoall(liar(mine))
  for j = 1, mp.size do assert(t[j] == (j - 1) * 1000 + mp.rank + 1) end
  local reqs = {mp.isend(mp.rank, "self")}
  assert(mp.recv(mp.rank) == "self")
  mp.waitall(liar(reqs))
  -- a periodic ring: the slots' values as the list first said
  local ring = mp.cart(liar({mp.size}), {periodic = liar({true})})
  local back = ring:neighbor_alltoall(liar({"down" .. mp.rank, "up" .. mp.rank}))
  local down, up = (mp.rank - 1) % mp.size, (mp.rank + 1) % mp.size
  assert(back[1] == "up" .. down and back[2] == "down" .. up, back[1] .. " " .. back[2])
end)

------------------------------------------------------------ topologies
local function ring_edges()
  local e = {}
  for r = 0, n - 1 do e[#e + 1] = {r, (r + 1) % n}; e[#e + 1] = {r, r, 2} end
  return e
end

local plain = mp.graph(n, ring_edges())
local lied = {}
for k, e in ipairs(ring_edges()) do lied[k] = liar(e) end
local g1 = mp.graph(n, liar(lied))
local adj = {}
for r = 0, n - 1 do adj[r] = liar({(r + 1) % n, liar({to = r, w = 2})}) end
local g2 = mp.graph(setmetatable({}, {__index = adj, __pairs = nil}), {nranks = n})
for r = 0, n - 1 do
  assert(same(g1:neighbors(r), plain:neighbors(r)) and same(g2:neighbors(r), plain:neighbors(r)))
  assert(same(g1:sources(r), plain:sources(r)) and same(g2:sources(r), plain:sources(r)))
  local _, wi = plain:weights(r)
  local _, w1 = g1:weights(r)
  local _, w2 = g2:weights(r)
  assert(same(w1, wi) and same(w2, wi))
end

-- spoiled while parsed: the graph is the list's or a clean error
spoiled(200, function() return ring_edges() end, 1, {1e9, 0}, function(e)
  local ok, g = pcall(mp.graph, n, e)
  if ok then assert(g.nedges == 2 * n) else assert(tostring(g):find("out of range", 1, true), g) end
end)
spoiled(200, function()
  local a = {}
  for r = 0, n - 1 do a[r] = {(r + 1) % n, r} end
  return a[0]
end, 3, 0, function(list) -- a third destination appears while the list is read
  local g = mp.graph({[0] = list}, {nranks = n})
  assert(g.nedges == 2 or g.nedges == 3)
end)

mp.exec(function()
  local me = mp.rank
  local d = mp.dist_graph(liar({(me + 1) % mp.size, liar({to = me, w = 3})}))
  assert(same(d:neighbors(), {(me + 1) % mp.size, me}))
  local src = d:sources()
  table.sort(src)
  local want = {(me - 1) % mp.size, me}
  table.sort(want)
  assert(same(src, want))
  -- every rank's list grows while it is read (any list is a valid one here)
  spoiled(100, function() return {(me + 1) % mp.size, me} end, 3, me, function(t)
    local k = #mp.dist_graph(t):neighbors()
    assert(k == 2 or k == 3)
  end)
end)

local P = mp.dims(n, liar({8, 8}), liar({0, 1}))
assert(P[2] == 1 and P[1] == n)
local lay = mp.layout({dims = liar({liar({"x", 4 * n}), liar({"y", 6})}), split = {x = 1},
                       grid = liar({n})})
assert(lay.grid[1] == n)
local lt = lay:with({order = liar({"y", "x"})})
assert(lt.names[1] == "y" and lt.names[2] == "x")
assert(lay:rank(liar({0})) == 0)
mp.exec(function(spec)
  local h = mp.halo(mp.layout(spec), liar({1, 0}), {periodic = liar({true, false})})
  assert(h.width[1] == 1 and h.width[2] == 0 and h.periodic[1] == true and h.periodic[2] == false)
end, tostring(lay))
local rows = {}
for i = 1, n do
  local row = {}
  for j = 1, n do row[j] = i == j and 0 or 1 end
  rows[i] = liar(row)
end
local m = mp.reorder(liar(rows))
assert(#m.ranks == n)
mp.exec(function(ranks)
  local c = mp.world:reorder(liar(ranks))
  assert(c.size == mp.size)
end, m.ranks)

------------------------------------------------------------------- map
-- a parameter vector that grows while the call reads it: the call reads the
-- length it measured (or says the vector changed), never past its buffers
local mapper = mp.mapper(function(t) return {t[1] + t[2]} end)
spoiled(150, function()
  local th = {}
  for j = 1, 8 do th[j] = {j, 1} end
  return th[1 + 7 % 8], th
end, 3, 99, function(_, th)
  local ok, y = pcall(mapper, th)
  if ok then
    for j = 1, 8 do assert(y[j][1] == j + 1, "job " .. j) end
  else
    assert(tostring(y):find("changed while the call read it", 1, true), y)
  end
end)

------------------------------------------------------------------ pool
-- the options are read once: the leader keeps what they first said
local function opts_liar(o)
  local asked = {}
  return setmetatable({}, {__index = function(_, k)
    if asked[k] then return 1e9 end
    asked[k] = true
    return o[k]
  end})
end
local out = {}
mp.pool(opts_liar({
  sow = function(i) if i <= 20 then return i end end,
  work = function(x) return x * x end,
  reap = function(i, r) out[i] = r end,
  ranks = liar(others()),
  progress = false,
}))
for i = 1, 20 do assert(out[i] == i * i) end

print("args_once ok", n)
