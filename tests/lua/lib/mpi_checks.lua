-- SPDX-License-Identifier: MIT
-- What the tests of mp.mpi's communicators and topologies share (they
-- travel into tasks as upvalues): fails(pattern, f, ...) asserts that
-- f(...) raises an error matching pattern; same(a, b) compares two lists;
-- bad(k, fname, what) is the pattern of "bad argument #k to 'mp.mpi.fname'
-- ([rank r/n] what" (fname and what patterns); slurp(path) a file's bytes.
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

function M.bad(k, fname, what)
  return "bad argument #" .. k .. " to 'mp%.mpi%." .. fname .. "' %(%[rank " .. mp.rank .. "/" ..
         mp.size .. "%] " .. what
end

function M.slurp(path)
  local h = assert(io.open(path, "rb"))
  local s = h:read("a")
  h:close()
  return s
end

return M
