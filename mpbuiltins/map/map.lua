-- SPDX-License-Identifier: MIT
-- mp.map_rect(f, theta, x_r, x_i) and the ragged mp.map(f, y_end, param,
-- param_end, x_r, x_r_end, x_i, x_i_end), over mp.mapper (Stan's map_rect
-- and its ragged form). Compiled into mplua (chunk "=mp.map"); its checks
-- raise at the caller's line. Loaded with mp.mapper and the rank text.
local mapper, who = ...
local function job_fn(f, name, level)
  if type(f) ~= 'function' then
    error(("bad argument #1 to '%s' (" .. who .. " f must be a function, got %s)"):format(name, type(f)), level)
  end
end
local function map_rect(f, theta, x_r, x_i)
  job_fn(f, 'mp.map_rect', 3)
  local m <close> = mapper(f, x_r, x_i)
  return m(theta)
end
local function split(flat, ends, what, n)
  if flat == nil and ends == nil then return nil end
  if flat == nil then error(('mp.map: ' .. who .. ' %s is missing (%s_end is given)'):format(what, what), 3) end
  if type(ends) ~= 'table' or #ends ~= n then
    error(('mp.map: ' .. who .. ' %s_end must be a list of %d end indices'):format(what, n), 3)
  end
  local out, s, len = {}, 1, #flat
  for j = 1, n do
    local e = ends[j]
    if math.type(e) ~= 'integer' or e < s - 1 or e > len then
      error(('mp.map: ' .. who .. ' %s_end[%d] = %s is not an end index in %d..%d'):format(what, j, tostring(e), s - 1, len), 3)
    end
    local v = {}
    for k = s, e do v[k - s + 1] = flat[k] end
    out[j], s = v, e + 1
  end
  if s - 1 ~= len then
    error(('mp.map: ' .. who .. ' %s_end ends at %d but %s has %d items'):format(what, s - 1, what, len), 3)
  end
  return out
end
local function map(f, y_end, param, param_end, x_r, x_r_end, x_i, x_i_end)
  job_fn(f, 'mp.map', 3)
  if type(y_end) ~= 'table' then error('mp.map: ' .. who .. ' y_end must be a list of end indices', 2) end
  local n = #y_end
  local theta = split(param, param_end, 'param', n) or {}
  for j = #theta + 1, n do theta[j] = {} end
  local ys = map_rect(f, theta, split(x_r, x_r_end, 'x_r', n), split(x_i, x_i_end, 'x_i', n))
  local y, s = {}, 0
  for j = 1, n do
    local yj = ys[j]
    if #yj ~= y_end[j] - s then
      error(('mp.map: ' .. who .. ' job %d returned %d values, y_end says %s'):format(j, #yj, tostring(y_end[j] - s)), 2)
    end
    for i = 1, #yj do y[s + i] = yj[i] end
    s = y_end[j]
  end
  return y
end
return map_rect, map
