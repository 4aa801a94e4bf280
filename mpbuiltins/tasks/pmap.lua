-- SPDX-License-Identifier: MIT
-- mp.pmap(f, list [, opts]): f over a list on the pool, results in list
-- order. The glue over mp.pool, compiled into mplua (chunk "=mp.pmap"); its
-- checks raise at the caller's line. Loaded with mp.pool and the rank text.
local pool, who = ...
local function bad(n, what)
  error(("bad argument #%d to 'mp.pmap' (%s %s)"):format(n, who, what), 3)
end
return function(f, list, opts)
  if type(f) ~= "function" then bad(1, "function expected, got " .. type(f)) end
  if type(list) ~= "table" then bad(2, "table expected, got " .. type(list)) end
  if opts ~= nil and type(opts) ~= "table" then bad(3, "table expected, got " .. type(opts)) end
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  local res, n = {}, #list
  o.work, o.total = f, n
  o.sow = function(i) if i <= n then return list[i] end end
  o.reap = function(i, r) res[i] = r end
  pool(o)
  return res
end
