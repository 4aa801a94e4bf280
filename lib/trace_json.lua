-- SPDX-License-Identifier: MIT
-- Reading an mplua trace (trace-event JSON, DESIGN.md section 9) in plain Lua:
-- a JSON decoder, a checker of the trace-event rules mplua promises, and the
-- communication matrix. Used by mplua.trace_report and by the tests.
--   local TJ = require "mplua.trace_json"
--   local tr = TJ.load("run.json")      -- {events = {...}, ranks = n}
--   assert(TJ.check(tr))                -- or nil, "what is wrong"
--   TJ.matrix(tr, "p2p", "count")       -- m[i][j]: from rank i-1 to rank j-1
local M = {}

-- ------------------------------------------------------------------ JSON
local byte, sub, find, tonumber = string.byte, string.sub, string.find, tonumber
local escapes = {['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n",
                 r = "\r", t = "\t"}

function M.decode(s)
  local pos = 1
  local function fail(what) error(("JSON: %s at byte %d"):format(what, pos), 0) end
  local function ws()
    pos = find(s, "[^ \t\r\n]", pos) or #s + 1
  end
  local value
  local function str()
    local out, i = {}, pos + 1
    while true do
      local j = find(s, '["\\]', i)
      if not j then fail("unterminated string") end
      out[#out + 1] = sub(s, i, j - 1)
      if byte(s, j) == 34 then pos = j + 1 return table.concat(out) end
      local e = sub(s, j + 1, j + 1)
      if e == "u" then
        local cp = tonumber(sub(s, j + 2, j + 5), 16) or fail("bad \\u escape")
        out[#out + 1] = utf8.char(cp)
        i = j + 6
      else
        out[#out + 1] = escapes[e] or fail("bad escape")
        i = j + 2
      end
    end
  end
  function value()
    ws()
    local c = byte(s, pos)
    if c == 123 then -- {
      local t = {}
      pos = pos + 1
      ws()
      if byte(s, pos) == 125 then pos = pos + 1 return t end
      while true do
        ws()
        if byte(s, pos) ~= 34 then fail("expected a key") end
        local k = str()
        ws()
        if byte(s, pos) ~= 58 then fail("expected ':'") end
        pos = pos + 1
        t[k] = value()
        ws()
        c = byte(s, pos)
        pos = pos + 1
        if c == 125 then return t end
        if c ~= 44 then fail("expected ',' or '}'") end
      end
    elseif c == 91 then -- [
      local t, n = {}, 0
      pos = pos + 1
      ws()
      if byte(s, pos) == 93 then pos = pos + 1 return t end
      while true do
        n = n + 1
        t[n] = value()
        ws()
        c = byte(s, pos)
        pos = pos + 1
        if c == 93 then return t end
        if c ~= 44 then fail("expected ',' or ']'") end
      end
    elseif c == 34 then
      return str()
    elseif find(s, "^true", pos) then pos = pos + 4 return true
    elseif find(s, "^false", pos) then pos = pos + 5 return false
    elseif find(s, "^null", pos) then pos = pos + 4 return nil
    else
      local a, b = find(s, "^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
      if not a then fail("unexpected character") end
      pos = b + 1
      return math.tointeger(tonumber(sub(s, a, b))) or tonumber(sub(s, a, b))
    end
  end
  local v = value()
  ws()
  if pos <= #s then fail("trailing text") end
  return v
end

function M.load(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  local doc = M.decode(text)
  assert(type(doc) == "table" and type(doc.traceEvents) == "table", "not a trace-event file")
  local tr = {events = doc.traceEvents, ranks = 0, lines = 0}
  for _ in text:gmatch("\n") do tr.lines = tr.lines + 1 end
  for _, e in ipairs(tr.events) do
    if e.ph == "M" and e.name == "mplua_job" then tr.ranks = e.args.ranks end
  end
  return tr
end

-- --------------------------------------------------------------- checker
local EPS = 0.002 -- microseconds: the file's rounding

-- nil, why (the first problem) or true, stats. Rules: every event has ph and
-- an integer pid; every pid is named "rank N"; X events have ts and dur >= 0
-- and nest per (pid, tid) (each inside the one it claims as its parent: its
-- args.depth is the number of X around it); flow ids pair one "s" with one
-- "f", each at a zero-length X named out / in on the same rank and time.
function M.check(tr)
  local named, xs, zero, flows = {}, {}, {}, {}
  local st = {x = 0, flows = 0, marks = 0, by_name = {}, by_cat = {}}
  for i, e in ipairs(tr.events) do
    if type(e.ph) ~= "string" or math.type(e.pid) ~= "integer" then
      return nil, ("event %d: no ph or integer pid"):format(i)
    end
    if e.ph == "M" then
      if e.name == "process_name" then
        if e.args.name ~= "rank " .. e.pid then return nil, "pid " .. e.pid .. " is named " .. tostring(e.args.name) end
        named[e.pid] = true
      end
    elseif e.ph == "X" then
      if type(e.ts) ~= "number" or type(e.dur) ~= "number" or e.dur < 0 then
        return nil, ("event %d: X without ts or with negative dur"):format(i)
      end
      local key = e.pid .. ":" .. (e.tid or 0)
      xs[key] = xs[key] or {}
      table.insert(xs[key], e)
      st.x = st.x + 1
      st.by_name[e.name] = (st.by_name[e.name] or 0) + 1
      st.by_cat[e.cat] = (st.by_cat[e.cat] or 0) + 1
      if e.dur == 0 and (e.name == "out" or e.name == "in") then
        zero[e.pid .. "@" .. e.ts .. e.name] = true
      end
    elseif e.ph == "s" or e.ph == "f" then
      local f = flows[e.id] or {}
      flows[e.id] = f
      if f[e.ph] then return nil, "flow id " .. tostring(e.id) .. " has two '" .. e.ph .. "'" end
      f[e.ph] = e
    elseif e.ph == "i" then
      st.marks = st.marks + 1
    end
  end
  for key, list in pairs(xs) do
    local pid = tonumber(key:match("^(%d+)"))
    if not named[pid] then return nil, "pid " .. pid .. " has no process_name" end
    table.sort(list, function(a, b)
      if a.ts ~= b.ts then return a.ts < b.ts end
      if a.dur ~= b.dur then return a.dur > b.dur end
      return (a.args.depth or 0) < (b.args.depth or 0)
    end)
    local stack = {}
    for _, e in ipairs(list) do
      while #stack > 0 and stack[#stack].ts + stack[#stack].dur < e.ts - EPS do
        stack[#stack] = nil
      end
      -- a zero-length event at its parent's very end belongs to the parent
      while #stack > 0 and (e.args.depth or #stack) < #stack do stack[#stack] = nil end
      local top = stack[#stack]
      if top and e.ts + e.dur > top.ts + top.dur + EPS then
        return nil, ("rank %s: %s at %.3f (%.3f us) overlaps %s at %.3f (%.3f us) without nesting")
                    :format(key, e.name, e.ts, e.dur, top.name, top.ts, top.dur)
      end
      if e.args.depth and e.args.depth ~= #stack then
        return nil, ("rank %s: %s at %.3f claims depth %d inside %d spans"):format(key, e.name,
                     e.ts, e.args.depth, #stack)
      end
      stack[#stack + 1] = e
    end
  end
  for id, f in pairs(flows) do
    if not (f.s and f.f) then return nil, "flow id " .. tostring(id) .. " is not matched" end
    if f.f.bp ~= "e" then return nil, "flow id " .. tostring(id) .. ": 'f' without bp e" end
    if not zero[f.s.pid .. "@" .. f.s.ts .. "out"] or not zero[f.f.pid .. "@" .. f.f.ts .. "in"] then
      return nil, "flow id " .. tostring(id) .. " is not attached to zero-length out/in events"
    end
    st.flows = st.flows + 1
  end
  return true, st
end

-- ---------------------------------------------------------------- matrix
-- m[i][j] for kind ("all", "coll" for every collective, or one kind) and by
-- ("count" or "bytes"), from the exact rows in the file.
local colls = {bcast = 1, reduce = 1, allreduce = 1, scan = 1, gather = 1, allgather = 1,
               scatter = 1, alltoall = 1, barrier = 1, split = 1, dup = 1, coll = 1}
M.colls = colls

function M.matrix(tr, kind, by)
  kind, by = kind or "all", by or "count"
  local n, m = tr.ranks, {}
  for i = 1, n do m[i] = {} for j = 1, n do m[i][j] = 0 end end
  for _, e in ipairs(tr.events) do
    if e.ph == "M" and e.name == "mplua_row" then
      local k = e.args.kind
      if kind == "all" or k == kind or (kind == "coll" and colls[k]) then
        for j, v in ipairs(e.args[by]) do m[e.pid + 1][j] = m[e.pid + 1][j] + v end
      end
    end
  end
  return m
end

-- The kinds present in the file, p2p first, then collectives by name.
function M.kinds(tr)
  local seen, out = {}, {}
  for _, e in ipairs(tr.events) do
    if e.ph == "M" and e.name == "mplua_row" and not seen[e.args.kind] then
      seen[e.args.kind] = true
      out[#out + 1] = e.args.kind
    end
  end
  table.sort(out, function(a, b)
    if (a == "p2p") ~= (b == "p2p") then return a == "p2p" end
    return a < b
  end)
  return out
end

return M
