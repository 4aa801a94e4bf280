-- ranks: 1 2 3
-- SPDX-License-Identifier: MIT
-- Region and mark names come out whole in a trace file that stays valid
-- JSON (python3's json module reads it strictly): a NUL as \u0000 (the name
-- is not cut there), control characters as \u00XX, each byte that is not
-- UTF-8 as the text \xHH, valid UTF-8 as it is; on every rank.
local names = { -- {name, what the trace's JSON string decodes to}
  {"plain", "plain"},
  {"a\0b", "a\0b"},
  {"\0\0lead", "\0\0lead"},
  {"trail\0", "trail\0"},
  {"caf\xe9", "caf\\xe9"},
  {"ok \xc3\xa9", "ok \xc3\xa9"},
  {"\xc0\x80 lit", "\\xc0\\x80 lit"},
  {"\xc0\xc0\0", "\\xc0\\xc0\0"},
  {"tab\tq\"b\\", "tab\tq\"b\\"},
  {"cut \xe2\x82", "cut \\xe2\\x82"},
  {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
  {"sur \xed\xa0\x80", "sur \\xed\\xa0\\x80"},
  {"over \xc1\xbf \xf8", "over \\xc1\\xbf \\xf8"},
  {"\xff", "\\xff"},
}
local file = os.tmpname()
mp.trace.start{file = file}
mp.exec(function(list)
  for _, p in ipairs(list) do
    mp.trace.mark(p[1])
    mp.trace.region(p[1], function() end)
  end
end, names)
mp.trace.stop()

-- every region's and mark's name, per rank, as the hex of its UTF-8 bytes
local py = os.tmpname()
local f = assert(io.open(py, "w"))
f:write([[
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))
for e in d["traceEvents"]:
    if e.get("cat") in ("region", "mark"):
        print(e["pid"], e["cat"], e["name"].encode("utf-8").hex())
]])
f:close()
local p = assert(io.popen("python3 " .. py .. " " .. file .. " 2>&1"))
local seen = {}
for line in p:lines() do
  local pid, cat, hex = line:match("^(%d+) (%a+) (%x*)$")
  assert(pid, "python3: " .. line)
  local key = pid .. " " .. cat .. " " .. hex
  seen[key] = (seen[key] or 0) + 1
end
assert(p:close(), "python3 could not read the trace as JSON")
os.remove(py)
os.remove(file)

local function hex(s) return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end)) end
for r = 0, mp.size - 1 do
  for _, pair in ipairs(names) do
    for _, cat in ipairs({"mark", "region"}) do
      local key = r .. " " .. cat .. " " .. hex(pair[2])
      assert(seen[key] == 1, ("rank %d, %s %q: written as %q? (%s)"):format(r, cat, pair[1],
             pair[2], tostring(seen[key])))
    end
  end
end
print("trace_names ok", mp.size)
