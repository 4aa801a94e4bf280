-- SPDX-License-Identifier: MIT
-- Rank 0 of one job runs the documentation's ```lua examples one after the other
-- (doc_examples.lua writes them, each padded so that its line numbers are the doc
-- file's): errors are reported as "README.md:LINE: ...", and each example starts
-- from a fresh job's globals on every rank (doc_base.lua). What an example prints
-- comes between its start and end markers.
local list = ...
for line in io.lines(list) do
  local name, file = line:match("^(%S+) (%S+)$")
  local f = assert(io.open(name, "rb"))
  local chunk, err = load(f:read("a"), "@" .. file)
  f:close()
  local ok, msg = chunk ~= nil, err
  io.write("\1DOC start ", name, "\n")
  io.stdout:flush()
  if chunk then ok, msg = xpcall(chunk, debug.traceback) end
  io.stdout:flush()
  if ok then io.write("\1DOC ok ", name, "\n")
  else io.write("\1DOC failed ", name, ": ", tostring(msg), "\n") end
  io.stdout:flush()
  __doc_reset()
end
