-- SPDX-License-Identifier: MIT
-- Runs the Lua examples of the documentation as shown (tests/README.md, "Examples in
-- the docs", has the convention). Run by tests/sh/doc_examples.sh under
-- `mplua --nompi`:  doc_examples.lua ROOT MPLUA MPIEXEC COUNT [HEADER_COUNTS...]
-- For one rank count COUNT ("nompi" or a number) it extracts every ```lua block and
-- every prompt transcript of that count from README.md and the reference files, runs
-- the scripts in one job (doc_run.lua) and the transcripts in another (one session,
-- globals reset between blocks), and compares each transcript's output with the
-- docs; each example session ("$ mpiexec -n N build/mplua scripts/examples/...")
-- runs in a job of its own, its output compared too. Every block must ask for a
-- count the test's header lists; with COUNT "nompi" the relative links of the docs
-- are checked too.
local root, mplua, mpiexec, count = arg[1], arg[2], arg[3], arg[4]
local header = {}
for i = 5, #arg do header[arg[i]] = true end
local here = arg[0]:match("^(.*)/[^/]*$") or "."
local failures = 0
local function fail(where, msg)
  failures = failures + 1
  io.stderr:write(("FAIL (%s): %s: %s\n"):format(count, where, msg))
end
local function sh(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function readfile(p)
  local f = assert(io.open(p, "rb")); local s = f:read("a"); f:close(); return s
end
local function writefile(p, s)
  local f = assert(io.open(p, "wb")); f:write(s); f:close()
end

-- The documentation: README.md and every .md file of the parts (not the build trees).
local docs = {"README.md"}
do
  local p = io.popen("cd " .. sh(root) .. " && find interp mpbuiltins ad lib scripts tests"
                     .. " -name '*.md' 2>/dev/null | sort")
  for f in p:lines() do docs[#docs + 1] = f end
  p:close()
end

-- What the docs show a script prints, or nil: the text after "--> " on its lines
-- (one printed line each), or the output block that follows it, either run as
-- "$ mpiexec -n N build/mplua NAME.lua" on its first line or introduced by a line
-- "prints..." (tests/README.md, "Examples in the docs").
local function shown_output(doc, lines, n, i, j, body, count)
  local arrows = {}
  for _, l in ipairs(body) do
    local out = l:match("%-%->%s(.*)$")
    if out then arrows[#arrows + 1] = out end
  end
  if #arrows > 0 then return arrows end
  local k, intro = j + 1, nil
  while k <= n and lines[k]:match("^%s*$") do k = k + 1 end
  if k <= n and not lines[k]:match("^```") then intro = lines[k]; k = k + 1 end
  if k > n or not (lines[k] == "```" or lines[k] == "```text") then return nil end
  local out = {}
  for m = k + 1, n do
    if lines[m]:match("^```") then break end
    out[#out + 1] = lines[m]
  end
  local ran = out[1] and out[1]:match("^%$ mpiexec %-n (%d+) build/mplua [%w_]+%.lua%s*$")
  if ran then
    if ran ~= count then
      fail(doc .. ":" .. (k + 1), "the output shown is at " .. ran .. " ranks, the block runs at " .. count)
    end
    table.remove(out, 1)
    return out
  end
  if intro and intro:match("^prints") and not (out[1] or ""):match("^[$>] ") then return out end
  return nil
end

-- Blocks: {file, line (of the fence), kind = "lua" | "prompt", count, lines = {...},
-- expect = what a script's output must be, when the docs show it}
local blocks = {}
for _, doc in ipairs(docs) do
  local lines, n = {}, 0
  for l in (readfile(root .. "/" .. doc) .. "\n"):gmatch("(.-)\r?\n") do n = n + 1; lines[n] = l end
  local i = 1
  while i <= n do
    local info = lines[i]:match("^```(.*)$")
    if info then
      local body, j = {}, i + 1
      while j <= n and not lines[j]:match("^```%s*$") do body[#body + 1] = lines[j]; j = j + 1 end
      local words = {}
      for w in info:gmatch("%S+") do words[#words + 1] = w end
      local lang, opts = words[1], {}
      if lang and (lang:find("=") or lang == "nompi") then table.insert(words, 1, ""); lang = "" end
      for k = 2, #words do opts[#opts + 1] = words[k] end
      local kind
      if lang == "lua" then kind = "lua"
      elseif (lang == nil or lang == "" or lang == "text") and body[1] and body[1]:match("^> ") then
        kind = "prompt"
      elseif (lang == nil or lang == "" or lang == "text") and body[1]
             and body[1]:match("^%$ mpiexec %-n %d+ build/mplua scripts/examples/") then
        kind = "session"
      end
      if kind then
        local b = {file = doc, line = i, kind = kind, count = "4", lines = body}
        for _, o in ipairs(opts) do
          local r = o:match("^ranks=(%d+)$")
          if r then b.count = r
          elseif o == "nompi" then b.count = "nompi"
          else fail(doc .. ":" .. i, "unknown option '" .. o .. "' after the fence") end
        end
        if kind == "lua" then b.expect = shown_output(doc, lines, n, i, j, body, b.count) end
        if kind == "session" then
          b.count, b.args = body[1]:match("^%$ mpiexec %-n (%d+) build/mplua (.-)%s*$")
          b.expect = table.move(body, 2, #body, 1, {})
        end
        if not header[b.count] then
          if count == "nompi" then
            fail(doc .. ":" .. i, "the block runs at " .. b.count
                 .. ", which tests/sh/doc_examples.sh's first line does not list")
          end
        elseif b.count == count then
          blocks[#blocks + 1] = b
        end
      end
      i = j
    end
    i = i + 1
  end
end

local tmp = os.getenv("DOC_TMP") or "."
local function launch(args)
  if count == "nompi" then return sh(mplua) .. " --nompi " .. args end
  return sh(mpiexec) .. " -n " .. count .. " " .. sh(mplua) .. " " .. args
end
local base = sh(here .. "/doc_base.lua")

-- Lines compared with runs of blanks as one space; "..." in the docs stands for any
-- lines; the lines under "where the others were:" depend on timing and are skipped.
local function normalize(lines)
  local out, skipping = {}, false
  for _, l in ipairs(lines) do
    if not (skipping and l:match("^%s+%S")) then
      skipping = l:match("^%s*where the others were:%s*$") ~= nil
      l = l:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")
      if l ~= "" or #out > 0 then out[#out + 1] = l end
    end
  end
  while out[#out] == "" do out[#out] = nil end
  return out
end
local function match(want, got, i, j)
  if i > #want then return j > #got end
  if want[i] == "..." then
    for k = j, #got + 1 do if match(want, got, i + 1, k) then return true end end
    return false
  end
  return j <= #got and want[i] == got[j] and match(want, got, i + 1, j + 1)
end
-- Scripts: one job runs them all, each from a file whose line numbers are the doc's.
local scripts = {}
for _, b in ipairs(blocks) do
  if b.kind == "lua" then
    local name = ("ex%d.lua"):format(#scripts + 1)
    writefile(tmp .. "/" .. name, ("\n"):rep(b.line) .. table.concat(b.lines, "\n") .. "\n")
    scripts[#scripts + 1] = {name = name, where = b.file .. ":" .. b.line, file = b.file,
                             expect = b.expect}
  end
end
if #scripts > 0 then
  local list = {}
  for _, s in ipairs(scripts) do list[#list + 1] = s.name .. " " .. s.file end
  writefile(tmp .. "/scripts.txt", table.concat(list, "\n") .. "\n")
  local p = io.popen(launch("-j " .. base .. " " .. sh(here .. "/doc_run.lua") .. " scripts.txt")
                     .. " </dev/null 2>&1")
  local out = p:read("a")
  local ok, _, status = p:close()
  local passed = {}
  for name in out:gmatch("\1DOC ok (%S+)\n") do passed[name] = true end
  for _, s in ipairs(scripts) do
    if not passed[s.name] then fail(s.where, "the example did not run to its end")
    elseif s.expect then
      local from = select(2, out:find("\1DOC start " .. s.name .. "\n", 1, true))
      local to = out:find("\1DOC ok " .. s.name .. "\n", 1, true)
      local got = {}
      for l in (out:sub(from + 1, to - 1)):gmatch("(.-)\n") do got[#got + 1] = l end
      local w, g = normalize(s.expect), normalize(got)
      if not match(w, g, 1, 1) then
        fail(s.where, ("the example printed:\n  %s\nthe docs show:\n  %s"):format(
          table.concat(g, "\n  "), table.concat(w, "\n  ")))
      end
    end
  end
  if not ok or failures > 0 then
    io.stderr:write(("--- the job's output (exit status %s):\n%s\n"):format(status, out))
  end
  io.write(("%d scripts at %s\n"):format(#scripts, count))
end

-- Transcripts: one session for all of them. Every prompt is a marker line, so the
-- output after the k-th line read is what the docs show after the k-th input line.
local input, expect, reset = {}, {}, "__doc_reset()"
local nprompts = 0
for _, b in ipairs(blocks) do
  if b.kind == "prompt" then
    nprompts = nprompts + 1
    local cur
    for k, l in ipairs(b.lines) do
      local code = l:match("^>>? (.*)$") or l:match("^>>?$") and ""
      if code then
        input[#input + 1] = code
        cur = {where = b.file .. ":" .. (b.line + k), lines = {}}
        expect[#expect + 1] = cur
      else
        table.insert(cur.lines, l)
      end
    end
    input[#input + 1] = reset
    expect[#expect + 1] = false
  end
end

-- Sessions: an example of scripts/examples run as the docs show it
-- ("$ mpiexec -n N build/mplua scripts/examples/NAME.lua ARGS", then its output),
-- each in a job of its own, compared with times and speedups masked: they are
-- the one thing that may differ from run to run.
local function untimed(lines)
  local out = {}
  for k, l in ipairs(lines) do
    out[k] = l:gsub("took %b() seconds, [%d.]+ seconds total", "took <t>")
              :gsub("%d+%.?%d*%s*m?s%f[^%w]", "<t>"):gsub("speedup %d+%.?%d*", "speedup <x>")
  end
  return out
end
local nsessions = 0
for _, b in ipairs(blocks) do
  if b.kind == "session" then
    nsessions = nsessions + 1
    local p = io.popen(sh(mpiexec) .. " -n " .. b.count .. " " .. sh(mplua) .. " " .. b.args
                       .. " </dev/null 2>&1")
    local got = {}
    for l in p:lines() do got[#got + 1] = l end
    local ok, _, status = p:close()
    local where = b.file .. ":" .. b.line
    if not ok then
      fail(where, ("`%s` ended with status %s:\n  %s"):format(b.args, tostring(status),
                                                               table.concat(got, "\n  ")))
    else
      local w, g = untimed(normalize(b.expect)), untimed(normalize(got))
      if not match(w, g, 1, 1) then
        fail(where, ("`%s` printed:\n  %s\nthe docs show:\n  %s"):format(
          b.args, table.concat(normalize(got), "\n  "), table.concat(normalize(b.expect), "\n  ")))
      end
    end
  end
end
if nsessions > 0 then io.write(("%d example sessions at %s\n"):format(nsessions, count)) end

if nprompts > 0 then
  writefile(tmp .. "/session.lua", table.concat(input, "\n") .. "\n")
  local p = io.popen(launch("-j " .. base) .. " <session.lua 2>&1")
  local out = p:read("a")
  local ok, _, status = p:close()
  if not ok then fail("transcripts", "the session ended with status " .. tostring(status)) end
  -- segments: what came after each prompt (a "> " or ">> " marker line)
  local segs, pos = {}, 1
  out = out:gsub("\1[PC]\1\n", "\0")
  local first = out:find("\0", 1, true)
  if not first then fail("transcripts", "no prompt in the output:\n" .. out); first = #out + 1 end
  pos = first + 1
  while pos <= #out + 1 do
    local e = out:find("\0", pos, true) or #out + 1
    segs[#segs + 1] = out:sub(pos, e - 1)
    pos = e + 1
  end
  for k, e in ipairs(expect) do
    if e then
      local got = {}
      for l in ((segs[k] or "") .. "\n"):gmatch("(.-)\n") do got[#got + 1] = l end
      local w, g = normalize(e.lines), normalize(got)
      if not match(w, g, 1, 1) then
        fail(e.where, ("`%s` printed:\n  %s\nthe docs show:\n  %s"):format(
          input[k], table.concat(g, "\n  "), table.concat(w, "\n  ")))
      end
    end
  end
  io.write(("%d transcripts (%d lines) at %s\n"):format(nprompts, #input - nprompts, count))
end

-- Links: every relative link of the docs names a file that exists, and an anchor that
-- one of its headings makes (GitHub's rule: lower case, punctuation dropped, blanks
-- to hyphens, repeats numbered).
if count == "nompi" then
  local anchors = {}
  local function anchors_of(path)
    if anchors[path] then return anchors[path] end
    local set, seen, fence = {}, {}, false
    for l in io.lines(path) do
      if l:match("^```") then fence = not fence end
      local h = not fence and l:match("^#+ (.*)$")
      if h then
        local s = h:lower():gsub("[^%w%-_ \128-\255]", ""):gsub(" ", "-")
        local n = seen[s] or 0
        seen[s] = n + 1
        set[n == 0 and s or (s .. "-" .. n)] = true
      end
    end
    anchors[path] = set
    return set
  end
  local nlinks = 0
  for _, doc in ipairs(docs) do
    local text = readfile(root .. "/" .. doc):gsub("\n```.-\n```", "")
    local dir = doc:match("^(.*)/") or "."
    for target in text:gmatch("%]%(([^)%s]+)%)") do
      if not target:match("^%a+:") then
        nlinks = nlinks + 1
        local path, anchor = target:match("^([^#]*)#?(.*)$")
        local full = path == "" and root .. "/" .. doc or root .. "/" .. dir .. "/" .. path
        local f = io.open(full, "r")
        if not f then fail(doc, "link to a missing file: " .. target)
        else
          f:close()
          if anchor ~= "" and full:match("%.md$") and not anchors_of(full)[anchor] then
            fail(doc, "link to a missing heading: " .. target)
          end
        end
      end
    end
  end
  io.write(("%d links\n"):format(nlinks))
end

if failures > 0 then
  io.stderr:write(("%d failure(s)\n"):format(failures))
  os.exit(1)
end
