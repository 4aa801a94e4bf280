-- SPDX-License-Identifier: MIT
-- A report of an mplua trace (lib/trace_report.lua, mplua.trace_report): one
-- HTML page with the timeline and the communication matrix, and the two SVGs.
--   mplua scripts/trace_report.lua run.json -o run.html [--from US] [--to US]
--     [--width PX]
-- writes run.html, run.timeline.svg and run.matrix.svg (US: microseconds
-- from the start of the trace; the range zooms the timeline).
local R = require "mplua.trace_report"

local input, out, from, to, width
do
  local i = 1
  while arg[i] do
    local a = arg[i]
    if a == "-o" then out = arg[i + 1] i = i + 1
    elseif a == "--from" then from = tonumber(arg[i + 1]) i = i + 1
    elseif a == "--to" then to = tonumber(arg[i + 1]) i = i + 1
    elseif a == "--width" then width = tonumber(arg[i + 1]) i = i + 1
    elseif not input then input = a
    else error("trace_report: unexpected argument " .. a, 0) end
    i = i + 1
  end
end
if not input then
  io.stderr:write("usage: mplua scripts/trace_report.lua run.json -o run.html [--from US] [--to US]\n")
  os.exit(2)
end
out = out or (input:gsub("%.json$", "") .. ".html")

local rep = R.report(input, {from = from, to = to, width = width})
if rep.warning then io.stderr:write("trace_report: warning: ", rep.warning, "\n") end
local _, tl, mx = rep:save(out)
print(("trace_report: %s, %s, %s (%d ranks, %d arrows)"):format(out, tl, mx, rep.ranks, rep.arrows))
