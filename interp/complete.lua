-- SPDX-License-Identifier: MIT
-- Names at the cursor, for Tab at the prompt and a notebook's complete and
-- inspect requests: what can follow `mp.ex`, `a:` or `pri`, and what the
-- reference says of `mp.send`. A name is resolved by reading fields only
-- (rawget, and __index when it is a table or a method table kept as the
-- first upvalue of a C __index, as mp.Array, layouts, topologies and
-- communicators have): completing never runs user code.
-- Compiled into the program (show.c); lib.refs is the reference tables'
-- rows (the `mp`, array, layout and `ad` READMEs), one per line.
local lib = ...
local string, table = lib.string, lib.table
local getmetatable, getupvalue = lib.debug.getmetatable, lib.debug.getupvalue
local type, next, rawget, pairs, ipairs =
  lib.type, lib.next, lib.rawget, lib.pairs, lib.ipairs
local G, refs = lib.G, lib.refs
local sort, concat = table.sort, table.concat

local keywords = {}
for w in ("and break do else elseif end false for function goto if in local nil not or " ..
          "repeat return then true until while"):gmatch("%a+") do keywords[#keywords + 1] = w end

-- Fields computed by a C __index (not in any table), and the name the
-- reference gives a value of each type, by the metatable's __name.
local fields = {
  ["mp.Array"] = {"dtype", "ndim", "contiguous"},
  ["mp.Layout"] = {"ndim", "nranks", "dtype", "balanced", "spec", "grid", "dims", "names", "split"},
  ["mp.Cart"] = {"dims", "periodic", "ndim", "nranks"},
  ["mp.Graph"] = {"nranks", "nedges", "weighted", "distributed", "rank"},
  ["mp.Comm"] = {"rank", "size"},
}
local docname = {["mp.Array"] = "a", ["mp.Layout"] = "l", ["mp.Cart"] = "t", ["mp.Graph"] = "t",
                 ["mp.Comm"] = "comm", ["mp.Transpose"] = "T", ["mp.Halo"] = "h",
                 ["mp.Request"] = "req"}

local function typename(v)
  local mt = getmetatable(v)
  return mt and type(rawget(mt, "__name")) == "string" and rawget(mt, "__name") or nil
end

-- The table of methods behind v's __index, if one can be read.
local function methods(v)
  local mt = getmetatable(v)
  local ix = mt and rawget(mt, "__index")
  if type(ix) == "table" then return ix end
  if type(ix) == "function" then
    local _, up = getupvalue(ix, 1)
    if type(up) == "table" then return up end
  end
  return nil
end

-- v.k without running code; nil when it cannot be read.
local function field(v, k)
  local seen = 0
  while v ~= nil and seen < 16 do
    if type(v) == "table" then
      local x = rawget(v, k)
      if x ~= nil then return x end
    end
    v = methods(v)
    seen = seen + 1
  end
  return nil
end

-- The value a dotted path names (`mp.trace`), or nil.
local function resolve(path)
  local v = G
  for part in path:gmatch("[^%.]+") do
    v = field(v, part)
    if v == nil then return nil end
  end
  return v
end

-- Every name reachable as v.<name> (or v:<name>, functions only).
local function names(v, calls)
  local out, seen = {}, {}
  local function add(k, x)
    if type(k) == "string" and k:match("^[%a_][%w_]*$") and not seen[k]
       and (not calls or type(x) == "function") then
      seen[k] = true
      out[#out + 1] = k
    end
  end
  local t, hops = v, 0
  while t ~= nil and hops < 16 do
    if type(t) == "table" then
      for k, x in next, t do add(k, x) end
    end
    t = methods(t)
    hops = hops + 1
  end
  if not calls then
    for _, f in ipairs(fields[typename(v)] or {}) do add(f, true) end
  end
  return out
end

local M = {}

-- complete(line) -> start, matches: the completions of the identifier that
-- ends `line` (the text before the cursor), which starts at byte `start`.
function M.complete(line)
  local tail = line:match("[%w_%.:]*$")
  local start = #line - #tail + 1
  if tail:match("^%d") then return start, {} end
  local base, sep, part = tail:match("^(.-)([%.:])([%w_]*)$")
  local list
  if base == nil then
    part = tail
    list = names(G, false)
    for _, w in ipairs(keywords) do list[#list + 1] = w end
  else
    if not base:match("^[%a_][%w_]*$") and not base:match("^[%a_][%w_]*[%.%w_]*[%w_]$") then
      return #line - #part + 1, {}
    end
    local v = resolve(base)
    if v == nil then return #line - #part + 1, {} end
    list = names(v, sep == ":")
  end
  local out, seen = {}, {}
  for _, k in ipairs(list) do
    if k:sub(1, #part) == part and not seen[k]
       and (part:sub(1, 2) == "__" or k:sub(1, 2) ~= "__") then
      seen[k] = true
      out[#out + 1] = k
    end
  end
  sort(out)
  return #line - #part + 1, out
end

-- The reference rows that document `name` (`mp.send`, `a:get`, `ad.grad`).
local function rows(name)
  local out = {}
  local pat = "`" .. name:gsub("%p", "%%%0")
  for row in refs:gmatch("[^\n]+") do
    local cell = row:match("^| (.-) |") or ""
    local i = cell:find(pat, 1)
    local after = i and cell:sub(i + #name + 1, i + #name + 1)
    if after == "(" or after == "`" or after == "[" or after == " " then
      local what = row:match("^| .- | (.*) |%s*$") or ""
      out[#out + 1] = cell:gsub("`", "") .. (what ~= "" and "\n    " .. what:gsub("`", "") or "")
    end
  end
  return out
end

-- inspect(text, cursor) -> string or nil: what the reference says of the
-- name around byte `cursor` (and what the value is when it has no row).
function M.inspect(text, cursor)
  local left = text:sub(1, cursor):match("[%w_%.:]*$")
  local right = text:sub(cursor + 1):match("^[%w_]*")
  local name = (left .. right):gsub("^[%.:]+", "")
  if name == "" or name:match("^%d") then return nil end
  local base, sep, last = name:match("^(.-)([%.:])([%w_]+)$")
  local found = rows(name)
  if #found == 0 and base then
    local v = resolve(base)
    local doc = docname[typename(v) or ""]
    if doc then found = rows(doc .. sep .. last) end
    if #found == 0 and doc and sep == ":" then found = rows(doc .. "." .. last) end
  end
  if #found > 0 then return concat(found, "\n") end
  local v = resolve((name:gsub(":", ".")))
  if v == nil then return nil end
  if type(v) == "function" then
    local info = lib.debug.getinfo(v, "S")
    return name .. ": function" .. (info.what == "C" and " (C)" or
      (" defined at " .. info.short_src .. ":" .. info.linedefined))
  end
  return name .. ": " .. (typename(v) or type(v)) .. "\n" .. lib.pretty(v)
end

return M
