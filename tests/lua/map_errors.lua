-- ranks: nompi 1 2 3 4
-- SPDX-License-Identifier: MIT
-- mp.mapper errors: f failing on the first call and on a later one (the
-- report names the rank, the job and the message; the next call works), a
-- job spinning while another fails, output lengths that change, bad
-- arguments, data that changed under check_data.

local function fails(pat, f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok, "expected an error matching " .. pat)
  err = tostring(err)
  assert(err:find(pat, 1, true), ("error %q lacks %q"):format(err, pat))
  return err
end

local N = 10
local xr, xi = {}, {}
for j = 1, N do xr[j], xi[j] = {j}, {j} end
-- the owner of job j (blocks: rank r gets jobs N*r//P+1 .. N*(r+1)//P)
local function owner(j)
  for r = 0, mp.size - 1 do
    if j >= N * r // mp.size + 1 and j <= N * (r + 1) // mp.size then return r end
  end
end
local function f(theta, r, i)
  local b = ad.value(theta[2]) -- theta is an ad vector in differentiated calls
  if b == i[1] then error("boom in job " .. i[1]) end
  if b == -i[1] then while true do end end
  local y = {theta[1] * r[1]}
  if #theta >= 3 and theta[3] == i[1] then y[2] = 1 end -- changes its length
  return y
end
local m = mp.mapper(f, xr, xi)
local function th(bad, spin, grow)
  local t = {}
  for j = 1, N do
    t[j] = {2.0, 0}
    if j == bad then t[j][2] = j end
    if j == spin then t[j][2] = -j end
    if j == grow then t[j][3] = j end
  end
  return t
end
local function good()
  local y = m(th())
  for j = 1, N do assert(y[j][1] == 2.0 * j and #y[j] == 1) end
  local v, g = ad.grad(function(p)
    local t = th()
    for j = 1, N do t[j][1] = p[1] end
    local s = 0
    for j, yj in ipairs(m(t)) do s = s + yj[1] end
    return s
  end, {2.0})
  assert(v == 2.0 * N * (N + 1) / 2 and g[1] == N * (N + 1) / 2)
end

-- errors on the first call, last job (owned by the last rank)
local err = fails("job " .. N .. ": ", m, th(N))
assert(err:find(("rank %d/%d faulted"):format(owner(N), mp.size), 1, true), err)
assert(err:find("boom in job " .. N, 1, true), err)
good()
-- a later call, first job (rank 0), through ad.grad: the tape is left clean
local nvar = select(1, ad.tape_size())
fails("boom in job 1", function()
  return ad.grad(function(p) local t = th(1); t[1][1] = p[1]; return m(t)[1][1] end, {1})
end)
assert(select(1, ad.tape_size()) == nvar, "tape grew after a failed call")
assert(select(4, ad.tape_size()) == 0, "a region was left open")
good()
-- one job spins forever while another fails: the spinner is interrupted
if mp.size > 1 then
  err = fails("boom in job " .. N, m, th(N, 1))
  good()
end
-- a job whose output length changes after the first call
err = fails("job 4 returned 2 values, 1 on earlier calls", m, th(nil, nil, 4))
assert(err:find(("rank %d/%d"):format(owner(4), mp.size), 1, true), err)
good()
-- f returning something that is not a vector, or a vector of junk
local bad = mp.mapper(function(t, r, i)
  if i[1] == 2 then return "nope" end
  if i[1] == 3 then return {1, "x"} end
  return {1}
end, xr, {{1}, {1}, {1}, {1}, {1}, {1}, {1}, {1}, {1}, {2}})
fails("job 10: f returned a string (expected a table, an mp.array or an ad vector)", bad, th())
local bad3 = mp.mapper(function(t, r, i) return i[1] == 3 and {1, "x"} or {1} end, {{1}, {1}, {1}}, {{1}, {1}, {3}})
fails("job 3: f returned a string as item 2", bad3, {{1}, {1}, {1}})
-- bad arguments
fails("bad argument #1 to 'mp.mapper'", m, "theta")
fails("theta has 3 vectors, the mapper has 10 jobs", m, {{1}, {2}, {3}})
fails("theta[2] is a string", m, {{1}, "x", {3}, {1}, {1}, {1}, {1}, {1}, {1}, {1}})
fails("theta[1][2] is a boolean", m, {{1, true}, {1}, {3}, {1}, {1}, {1}, {1}, {1}, {1}, {1}})
fails("phi[1] is a string", m, {"a"}, th())
fails("x_i has 2 jobs, x_r has 3", mp.mapper, f, {{1}, {2}, {3}}, {{1}, {2}})
fails("bad argument #2 to 'mp.mapper' ([rank 0/" .. mp.size .. "] x_r must be a table", mp.mapper, f, 5)
fails("bad argument #1 to 'mp.mapper' ([rank 0/" .. mp.size .. "] f must be a function", mp.mapper, "f")
fails("cannot send", mp.mapper, function() return {io.stdout} end, {{io.stdout}})
if mp.size > 1 then fails("only rank 0", function() mp.exec(function() if mp.rank > 0 then mp.mapper(f, xr, xi) end end) end) end
fails("cannot start a task inside a task", function() mp.exec(function() if mp.rank == 0 then mp.mapper(f, xr, xi) end end) end)
-- a var from rank 0's tape captured by f cannot travel
fails("cannot send", function()
  return ad.grad(function(p) return mp.mapper(function() return {p[1]} end, {{1}})({{1}})[1][1] end, {1})
end)
good()
-- data changed under a mapper: ignored (it computes with what it shipped),
-- or an error with check_data
local data = {{1}, {2}}
local plain = mp.mapper(function(t, r) return {r[1]} end, data)
local checked = mp.mapper(function(t, r) return {r[1]} end, data, nil, {check_data = true})
assert(checked({{0}, {0}})[2][1] == 2)
data[2][1] = 7
assert(plain({{0}, {0}})[2][1] == 2)
fails("x_r changed since the mapper was made", checked, {{0}, {0}})
data[2][1] = 2
assert(checked({{0}, {0}})[2][1] == 2)
-- check_data compares values, not the order a table keeps its keys in
do
  local d = {{a = 1, b = 2, c = 3}}
  local c = mp.mapper(function(t, r) return {r.a} end, d, nil, {check_data = true})
  for i = 1, 40 do d[1]["t" .. i] = 0 end
  for i = 1, 40 do d[1]["t" .. i] = nil end
  d[1].z = 0; d[1].z = nil
  assert(c({{0}})[1][1] == 1)
  local xi = {{1}, {mp.array("f64", {1, 2})}}
  local c2 = mp.mapper(function(t, r, i) return {1} end, {{1}, {2}}, xi, {check_data = true})
  c2({{0}, {0}})
  xi[2][1][2] = 3
  fails("x_i changed", c2, {{0}, {0}})
end
-- a failed call fixes no output length
do
  local g = mp.mapper(function(t, r) if r[1] == 2 and t[1] == 0 then error("boom") end return t end, {{1}, {2}})
  fails("boom", g, {{0, 0}, {0}})
  local y = g({{1, 1, 1}, {1}})
  assert(#y[1] == 3 and #y[2] == 1)
  fails("job 1 returned 2 values, 3 on earlier calls", g, {{1, 1}, {1}})
end
-- what cannot be shipped is named by argument and job
fails("bad argument #3 to 'mp.mapper' ([rank 0/" .. mp.size .. "] cannot send a userdata (at value #1 [2][1])",
      mp.mapper, f, {{1}, {2}}, {{1}, {io.stdout}}, {check_data = true})
fails("bad argument #2 to 'mp.mapper' ([rank 0/" .. mp.size .. "] cannot send a userdata (at value #1 [4][1])",
      mp.mapper, f, {{1}, {2}, {3}, {io.stdout}})
fails("x_r is missing", mp.map, f, {1}, nil, nil, nil, {0})
-- the internal tasks cannot be misused into a crash
fails("mp.mapper's own task", mp._map_run, 1, 1)
fails("mp.mapper's own task", mp._map_setup, 1, 3)
-- a var reaching f other than through its arguments is refused (job 1 is rank 0's)
do
  local d, th = {}, {}
  for j = 1, mp.size do d[j] = {j} end
  local c = mp.mapper(function(t) return {t[1] * (G or 1)} end, d)
  fails("f used an ad var that is not one of its arguments", ad.grad, function(p)
    G = p[1]
    for j = 1, mp.size do th[j] = {p[2]} end
    return c(th)[1][1]
  end, {3, 5})
  G = nil
end
-- freed handles are forgotten on every rank even when map tasks fail
do
  local b = mp.mapper(function(t) if t[1] == 0 then error("x") end return {t[1]} end, {{1}, {2}, {3}, {4}})
  for _ = 1, 30 do
    local a = mp.mapper(function(t) return {t[1]} end, {{1}, {2}, {3}})
    a:free()
    pcall(b, {{0}, {1}, {1}, {1}})
    pcall(b, {{1}, {1}, {1}, {0}})
  end
  collectgarbage()
  b({{1}, {1}, {1}, {1}}) -- a call that succeeds carries the dead list
  mp.exec(function()
    local n = 0
    for _ in pairs(debug.getregistry()["mp.maps"]) do n = n + 1 end
    if mp.rank > 0 then mp.send(0, n) return end
    for r = 1, mp.size - 1 do
      local w = mp.recv(r)
      assert(w == n, ("rank %d holds %d mappers, rank 0 %d"):format(r, w, n))
    end
  end)
end
print("map_errors ok", mp.size)
