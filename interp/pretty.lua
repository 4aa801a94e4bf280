-- SPDX-License-Identifier: MIT
-- How the prompt and the notebook show a value: a table as its contents,
-- readable (one line when it fits, else one entry per line), limited in
-- depth, in entries per table and in entries overall, with cycles marked
-- (`<1>{self = <1>}`); any other value as tostring shows it. Strings inside
-- tables are quoted; a value whose metatable has __tostring shows that.
-- Compiled into the program (show.c); the functions it uses are taken when
-- it loads, so a session that changes the globals does not change it.
local lib = ...
local string, table, math = lib.string, lib.table, lib.math
local getmetatable = lib.debug.getmetatable
local type, tostring, next, rawget, pcall, ipairs =
  lib.type, lib.tostring, lib.next, lib.rawget, lib.pcall, lib.ipairs
local fmt, concat, sort = string.format, table.concat, table.sort

local DEPTH, ITEMS, TOTAL, WIDTH, KEYS = 4, 50, 1000, 80, 10000

local keywords = {}
for w in ("and break do else elseif end false for function goto if in local nil not or " ..
          "repeat return then true until while"):gmatch("%a+") do keywords[w] = true end

local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    local named = {["\n"] = "\\n", ["\t"] = "\\t", ["\r"] = "\\r", ['"'] = '\\"', ["\\"] = "\\\\"}
    return named[c] or fmt("\\%03d", c:byte())
  end) .. '"'
end

-- tostring, protected (a failing __tostring shows as such)
local function text(v)
  local ok, s = pcall(tostring, v)
  if ok and type(s) == "string" then return s end
  return "<" .. type(v) .. ": __tostring failed>"
end

local function plain(v) -- a table shown through its contents
  if type(v) ~= "table" then return false end
  local mt = getmetatable(v)
  return not (mt and rawget(mt, "__tostring"))
end

local typeorder = {number = 1, string = 2, boolean = 3}
local function keyless(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return (typeorder[ta] or 4) < (typeorder[tb] or 4) end
  if ta == "number" or ta == "string" then return a < b end
  if ta == "boolean" then return (a and 1 or 0) < (b and 1 or 0) end
  return text(a) < text(b)
end

local function keytext(k)
  if type(k) == "string" and k:match("^[%a_][%w_]*$") and not keywords[k] then return k end
  if type(k) == "string" then return "[" .. quote(k) .. "]" end
  return "[" .. text(k) .. "]"
end

-- The entries of t in order: 1..n first, then the other keys sorted (all
-- of them up to KEYS, else the first KEYS met). Returns keys, seqlen, count.
local function entries(t)
  local n = 0
  while rawget(t, n + 1) ~= nil do n = n + 1 end
  local keys, count = {}, n
  for k in next, t do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then
      count = count + 1
      if #keys < KEYS then keys[#keys + 1] = k end
    end
  end
  sort(keys, keyless)
  return keys, n, count
end

-- render(v, opts) -> string. opts: depth, items, width (all optional).
return function(v, opts)
  opts = opts or {}
  local depth, items, width = opts.depth or DEPTH, opts.items or ITEMS, opts.width or WIDTH
  local budget = TOTAL
  local onpath, ids, nextid = {}, {}, 0

  local function value(x, level, indent)
    local tx = type(x)
    if tx == "string" then return level == 0 and x or quote(x) end
    if not plain(x) then return text(x) end
    if onpath[x] then
      if not ids[x] then nextid = nextid + 1; ids[x] = nextid end
      return "<" .. ids[x] .. ">"
    end
    if level >= depth then return next(x) == nil and "{}" or "{...}" end
    onpath[x] = true
    local keys, n, count = entries(x)
    local parts, shown = {}, 0
    local inner = indent .. "  "
    local function add(s)
      shown = shown + 1
      budget = budget - 1
      parts[#parts + 1] = s
    end
    for i = 1, n do
      if shown >= items or budget <= 0 then break end
      add(value(rawget(x, i), level + 1, inner))
    end
    for _, k in ipairs(keys) do
      if shown >= items or budget <= 0 then break end
      add(keytext(k) .. " = " .. value(rawget(x, k), level + 1, inner))
    end
    if count > shown then parts[#parts + 1] = fmt("... (%d more)", count - shown) end
    onpath[x] = nil
    local label = ids[x] and ("<" .. ids[x] .. ">") or ""
    local one = label .. "{" .. concat(parts, ", ") .. "}"
    if #one + #indent <= width and not one:find("\n", 1, true) then return one end
    return label .. "{\n" .. inner .. concat(parts, ",\n" .. inner) .. "\n" .. indent .. "}"
  end

  return value(v, 0, "")
end
