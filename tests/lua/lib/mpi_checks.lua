-- SPDX-License-Identifier: MIT
-- What the tests of mp.mpi's communicators and topologies share (they
-- travel into tasks as upvalues): fails(pattern, f, ...) asserts that
-- f(...) raises an error matching pattern; same(a, b) compares two lists.
local M = {}

function M.fails(pattern, f, ...)
  local ok, err = pcall(f, ...)
  assert(not ok and tostring(err):find(pattern),
         "rank " .. mp.rank .. ": expected '" .. pattern .. "', got " .. tostring(err))
end

function M.same(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

return M
