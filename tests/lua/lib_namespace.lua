-- ranks: nompi 1 2  quick: nompi 1
-- SPDX-License-Identifier: MIT
-- The Lua library lives under one namespace: every lib/*.lua loads as
-- require "mplua.<name>" on every rank, adds no global (nothing named optim,
-- hmc, ... lands in _G), and no top-level module of those names is found.

local dir = assert(package.searchpath("mplua.optim", package.path), "mplua.optim not on package.path")
  :match("^(.*)/optim%.lua$")
local names = {}
local p = assert(io.popen("ls " .. dir))
for f in p:lines() do names[#names + 1] = f:match("^([%w_]+)%.lua$") end
p:close()
assert(#names >= 10, "only " .. #names .. " modules in " .. dir)

local function load_all(list)
  local before = {}
  for k in pairs(_G) do before[k] = true end
  for _, n in ipairs(list) do
    local ok, m = pcall(require, "mplua." .. n)
    assert(ok, ("require 'mplua.%s': %s"):format(n, tostring(m)))
    assert(type(m) == "table", ("mplua.%s returns a %s"):format(n, type(m)))
  end
  local added = {}
  for k in pairs(_G) do if not before[k] then added[#added + 1] = tostring(k) end end
  table.sort(added)
  assert(#added == 0, "globals added by the Lua library: " .. table.concat(added, " "))
  for _, n in ipairs(list) do
    assert(package.searchpath(n, package.path) == nil, "a top-level module " .. n .. " is on package.path")
    assert(package.loaded[n] == nil, "package.loaded." .. n .. " is set")
  end
  return #list
end

assert(load_all(names) == #names)
if mp.size > 1 then
  local counts = {mp.exec(function() return mp.gather(load_all(names)) end)}
  for r = 1, mp.size do assert(counts[1][r] == #names, "rank " .. (r - 1) .. " loaded " .. tostring(counts[1][r])) end
end
print("lib_namespace ok: " .. #names .. " modules under mplua.")
