-- ranks: 1 2  quick: 1
-- SPDX-License-Identifier: MIT
-- The array layer's errors name what the user called (mp.array, a:reshape,
-- mp.Array.reshape, indexing a[i], a[i] = v) and the rank, caught by a pcall
-- or not (the array layer has no rank: mp registers the words). An
-- allocation too large: tests/sh/array_alloc.sh (under ASan it needs
-- allocator_may_return_null).
local function err_of(f)
  local ok, e = pcall(f)
  assert(not ok, "no error")
  return tostring(e)
end
local function has(e, s) assert(e:find(s, 1, true), e) end

local function body(n)
  local rank = ("[rank %d/%d] "):format(mp.rank, n)
  local a = mp.array("f64", 4)
  has(err_of(function() return a[10] end), "bad index in 'a[i]' (" .. rank .. "index 10 out of range 1..4)")
  has(err_of(function() a[0] = 1 end), "bad index in 'a[i] = v' (" .. rank .. "index 0 out of range 1..4)")
  has(err_of(function() return a:reshape(3) end), "bad argument #1 to 'a:reshape' (" .. rank .. "new shape has 3 elements")
  has(err_of(function() return mp.Array.reshape(a, 3) end), "bad argument #2 to 'mp.Array.reshape' (" .. rank)
  has(err_of(function() return mp.array("f99", 3) end), "bad argument #1 to 'mp.array' (" .. rank .. "invalid dtype 'f99'")
  local mk = mp.array
  has(err_of(function() return mk("f64", -1) end), "to 'mp.array' (" .. rank)
  return true
end
assert(body(mp.size))
assert(mp.exec(body, mp.size) == true)
-- uncaught in a task: the report says the same
local ok, e = pcall(mp.exec, function() return mp.array("f64", 4):reshape(3) end)
assert(not ok)
has(tostring(e), "bad argument #1 to 'a:reshape' ([rank 0/" .. mp.size .. "] new shape has 3")
print("ok")
