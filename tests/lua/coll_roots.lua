-- ranks: 2 3 4 5
-- SPDX-License-Identifier: MIT
-- Rooted collectives whose ranks name different roots are an error naming
-- both roots, at every root and for every pattern of disagreement (one rank
-- off, all but one off, everyone its own root, nobody its own root), never
-- a result or a dropped message; the same calls with one root are right,
-- and a task after each error works.
local n = mp.size
assert(n >= 2, "needs 2 ranks or more")

local function rooted(name, root)
  if name == "bcast" then
    return mp.bcast(mp.rank == root and {v = 42} or nil, root)
  elseif name == "scatter" then
    local t
    if mp.rank == root then t = {} for i = 1, n do t[i] = 10 * i end end
    return mp.scatter(t, root)
  elseif name == "gather" then
    return mp.gather(mp.rank + 1, root)
  else
    return mp.reduce(mp.rank + 1, "sum", root)
  end
end

local function right(name, root, v)
  if name == "bcast" then return type(v) == "table" and v.v == 42 end
  if name == "scatter" then return v == 10 * (mp.rank + 1) end
  if name == "gather" then
    if mp.rank ~= root then return v == nil end
    for i = 1, n do if v[i] ~= i then return false end end
    return #v == n
  end
  if mp.rank ~= root then return v == nil end
  return v == n * (n + 1) // 2
end

-- patterns: the root each rank names when the agreed one is r
local patterns = {
  {"rank 0 off", function(r, k) return k == 0 and (r + 1) % n or r end},
  {"the last rank off", function(r, k) return k == n - 1 and (r + 1) % n or r end},
  {"all but rank 0 off", function(r, k) return k == 0 and r or (r + 1) % n end},
  {"each its own root", function(_, k) return k end},
  {"each the next rank", function(_, k) return (k + 1) % n end},
}

local names = {"bcast", "scatter", "gather", "reduce"}
local cases = 0
for _, name in ipairs(names) do
  for r = 0, n - 1 do
    -- agreed: right on every rank
    local ok = mp.exec(function(nm, root)
      return mp.handin(right(nm, root, rooted(nm, root)) and 1 or 0)
    end, name, r)
    assert(ok == n, ("%s root %d: %d of %d ranks right"):format(name, r, ok, n))
    for _, p in ipairs(patterns) do
      local roots = {}
      for k = 0, n - 1 do roots[k + 1] = p[2](r, k) end
      local same = true
      for k = 2, n do same = same and roots[k] == roots[1] end
      if not same then
        cases = cases + 1
        local okk, e = pcall(mp.exec, function(nm, rs)
          rooted(nm, rs[mp.rank + 1])
        end, name, roots)
        local text = tostring(e)
        assert(not okk, ("%s, %s, root %d: accepted"):format(name, p[1], r))
        assert(text:find("mp." .. name .. ": [rank ", 1, true) and
               text:find("mismatched collectives: rank %d+ called it with root %d+ %(here %d+%)"),
               ("%s, %s, root %d: %q"):format(name, p[1], r, text))
        local a, b = text:match("with root (%d+) %(here (%d+)%)")
        assert(a ~= b, text)
        assert(not text:find("dropped"), text)
        -- the job goes on
        assert(mp.exec(function() return mp.handin(1) end) == n)
      end
    end
  end
end
assert(n == 2 or cases > 0)
print("coll_roots ok", n, cases)
