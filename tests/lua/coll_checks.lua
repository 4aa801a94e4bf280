-- ranks: 2 3 4
-- SPDX-License-Identifier: MIT
-- Collectives compare more than their name: an op, a root or a count that
-- differs between ranks is an error naming both sides, never a wrong
-- result; handin and allreduce agree on keyed fields.
local n = mp.size
local function fails(f, ...)
  local ok, e = pcall(mp.exec, f)
  assert(not ok, "no error")
  local text = tostring(e)
  for _, want in ipairs({...}) do
    assert(text:find(want, 1, true), ("%q lacks %q"):format(text, want))
  end
  return e
end

fails(function() return mp.allreduce(1, mp.rank == 1 and "max" or "sum") end,
      "mismatched collectives: rank", "op 'max'")
fails(function() return mp.scatter(mp.rank == 0 and {1, 2, 3, 4, 5} or nil) end,
      "bad argument #1 to 'mp.scatter'", ("a list of %d values (one per rank) expected, got 5"):format(n))
fails(function() return mp.alltoall({1}) end,
      "bad argument #1 to 'mp.alltoall'", ("a list of %d values (one per rank) expected, got 1"):format(n))
fails(function() if mp.rank == 1 then return mp.allreduce(1, "sum") else return mp.bcast(1) end end,
      "mismatched collectives:")

-- keyed fields: handin sums them like allreduce does
local h, a = mp.exec(function()
  local v = {x = 1, y = mp.rank, 10}
  local s = mp.allreduce(v, "sum")
  return mp.handin(v), s
end)
local want_y = n * (n - 1) // 2
assert(h.x == n and h.y == want_y and h[1] == 10 * n, "handin drops keyed fields")
assert(a.x == n and a.y == want_y and a[1] == 10 * n)

-- the job goes on
assert(mp.exec(function() return mp.handin(1) end) == n)
print("coll_checks ok")
