-- ranks: 1 2 3 4 5 8 20  quick: 1 2
-- SPDX-License-Identifier: MIT
-- The transport harness, the pool and the map: tasks of every value kind and
-- size go out through mp.pool (and mp.pmap) and come back through reap; the
-- map ships data of every kind to its owners and returns what each job saw.
-- Every value is checked bit for bit against a copy made where it is
-- compared (tests/lua/lib/xfer.lua).
package.path = "lib/?.lua;" .. package.path
local X = mp.require("xfer")
local seed = tonumber(os.getenv("MPLUA_XFER_SEED")) or 20261123
local n = mp.size
local limit = n <= 5 and (1 << 20) or 65544
print(("xfer_pool: seed %d, %d ranks"):format(seed, n))

local kinds = X.kind_names()
local tasks = {}
for _, kind in ipairs(kinds) do
  for _, size in ipairs(X.sizes(kind, limit)) do
    tasks[#tasks + 1] = {kind = kind, size = size, seed = X.seed(seed, #tasks)}
  end
end

-- the pool: work regenerates the value from the task, checks the task's own
-- copy of it, and sends back both the value and who computed it
local seen = 0
mp.pool{
  sow = function(i)
    local t = tasks[i]
    if t then return {t, X.gen(t.kind, t.size, t.seed)} end
  end,
  work = function(job)
    local X = require("xfer")
    local t = job[1]
    X.check(X.gen(t.kind, t.size, t.seed), job[2], "pool task " .. t.kind .. " " .. t.size)
    return {job[2], mp.rank}
  end,
  reap = function(i, res)
    local t = tasks[i]
    X.check(X.gen(t.kind, t.size, t.seed), res[1], "pool result " .. t.kind .. " " .. t.size)
    seen = seen + 1
  end,
  self = true,
}
assert(seen == #tasks, "reap ran " .. seen .. " times for " .. #tasks .. " tasks")

-- pmap keeps the input order
local out = mp.pmap(function(t) local X = require("xfer"); return X.gen(t.kind, t.size, t.seed) end,
                    tasks)
for i, t in ipairs(tasks) do X.check(X.gen(t.kind, t.size, t.seed), out[i], "pmap " .. i) end

-- the map: each job's static data is a value of some kind; a job returns a
-- digest of what it found (so the data that reached its owner is checked
-- there) and its parameters back
local xr, xi, want = {}, {}, {}
for j, t in ipairs(tasks) do
  xr[j] = X.gen(t.kind, t.size, t.seed)
  xi[j] = t
end
local m = mp.mapper(function(theta, x_r, x_i)
  local X = require("xfer")
  X.check(X.gen(x_i.kind, x_i.size, x_i.seed), x_r, "map data of job " .. theta[1])
  return {theta[1], theta[2] * 2}
end, xr, xi)
local theta = {}
for j = 1, #tasks do theta[j] = {j, j + 0.25} end
local ys = m(theta)
for j = 1, #tasks do
  assert(ys[j][1] == j and ys[j][2] == 2 * (j + 0.25), "map result of job " .. j)
end
m:free()
print(("xfer_pool ok: %d tasks, %d map jobs"):format(#tasks, #tasks))
