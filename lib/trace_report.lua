-- SPDX-License-Identifier: MIT
-- A report of an mplua trace: one self-contained HTML page (inline SVG, no
-- network) with a timeline per rank (spans, message arrows, marks) and the
-- communication matrix as heat maps split by kind (p2p, each collective,
-- map, pool, transpose, halo, each neighbourhood collective: a panel for
-- each kind the trace has, after "all"); the SVGs are also kept on their
-- own (for papers, READMEs and notebooks).
--   local R = require "mplua.trace_report"
--   local rep = R.report("run.json", {from = US, to = US, width = PX})
--   rep.timeline, rep.matrix, rep.html     -- the SVGs and the page
--   rep:save("run.html")                   -- run.html, run.timeline.svg, run.matrix.svg
-- (US: microseconds from the start of the trace; the range zooms the timeline.)
-- At the prompt and in a notebook, mp.trace.report() is this on what was recorded.
local TJ = require "mplua.trace_json"

local M = {}

local function esc(s)
  return (tostring(s):gsub("[&<>\"]", {["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;",
                                       ['"'] = "&quot;"}))
end
local function fmt(x) return ("%.1f"):format(x) end

local Report = {__name = "mp.TraceReport"}
Report.__index = Report

function Report.__tostring(r)
  return ("mp.TraceReport(%s: %d ranks, %d spans, %d arrows)"):format(r.name, r.ranks, r.spans,
                                                                     r.arrows)
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- Write the page at path, and beside it base.timeline.svg, base.matrix.svg.
function Report:save(path)
  local base = path:gsub("%.html?$", "")
  write(path, self.html)
  write(base .. ".timeline.svg", self.timeline)
  write(base .. ".matrix.svg", self.matrix)
  return path, base .. ".timeline.svg", base .. ".matrix.svg"
end

-- The report of a loaded trace (TJ.load); opts: name (for the title), from,
-- to (us), width (px). Its fields: timeline, matrix, html, ranks, spans,
-- arrows, and warning (what the checker found, or nil).
function M.render(tr, opts)
  opts = opts or {}
  local input, from, to, width = opts.name or "trace", opts.from, opts.to, opts.width or 1200
  local ok, why = TJ.check(tr)
  local n = math.max(tr.ranks, 1)

  -- ------------------------------------------------------------- timeline
  local spans, flows, marks = {}, {}, {}
  local tmin, tmax = math.huge, -math.huge
  for _, e in ipairs(tr.events) do
    if e.ph == "X" then
      spans[#spans + 1] = e
      tmin = math.min(tmin, e.ts)
      tmax = math.max(tmax, e.ts + e.dur)
    elseif e.ph == "s" or e.ph == "f" then
      local f = flows[e.id] or {}
      flows[e.id] = f
      f[e.ph] = e
    elseif e.ph == "i" then
      marks[#marks + 1] = e
    end
  end
  if tmin > tmax then tmin, tmax = 0, 1 end
  local t0, t1 = from or tmin, to or tmax
  if t1 <= t0 then t1 = t0 + 1 end
  local kinds = {} -- of the arrows: from the out events
  for _, e in ipairs(spans) do
    if e.name == "out" then kinds[e.pid .. "@" .. e.ts] = e.args.kind end
  end

  local LEFT, TOP, LANE, PAD = 70, 28, 46, 6
  local W = width
  local H = TOP + n * LANE + 24
  local function x(t) return LEFT + (t - t0) / (t1 - t0) * (W - LEFT - 10) end
  -- spans by category; the exchanges of layout/ have categories of their own
  -- (transpose, halo, neighbor_allgather, neighbor_alltoall)
  local colors = {task = "#d9d9d9", p2p = "#4e79a7", coll = "#f28e2b", map = "#59a14f",
                  pool = "#76b7b2", abort = "#e15759", region = "#b07aa1", msg = "#333333",
                  transpose = "#edc948", halo = "#9c755f", neighbor = "#ff9da7"}
  local function color(cat)
    return colors[cat] or (cat:find("^neighbor") and colors.neighbor) or "#999"
  end
  local kcolors = {p2p = "#1f3b5a", map = "#2d5a27", pool = "#2f5e5b", transpose = "#7a6210",
                   halo = "#4e3a2f", neighbor = "#a3414d"} -- darker than the spans
  local function kcolor(k)
    return kcolors[k] or (k:find("^neighbor") and kcolors.neighbor) or (TJ.colls[k] and "#8a4a0b")
           or "#444444"
  end

  local tl = {}
  local function add(s) tl[#tl + 1] = s end
  add(('<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="%d" height="%d" ' ..
       'viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">\n'):format(W, H, W, H))
  add('<defs><marker id="ah" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" ' ..
      'markerHeight="6" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#222"/>' ..
      '</marker></defs>\n')
  add(('<rect x="0" y="0" width="%d" height="%d" fill="white"/>\n'):format(W, H))
  add(('<text x="%d" y="16" font-size="12">timeline %s .. %s us (%s us)</text>\n')
      :format(LEFT, fmt(t0), fmt(t1), fmt(t1 - t0)))
  for r = 0, n - 1 do
    local y = TOP + r * LANE
    add(('<g class="lane" data-rank="%d"><rect x="%d" y="%d" width="%d" height="%d" ' ..
         'fill="%s"/><text x="6" y="%d">rank %d</text></g>\n')
        :format(r, LEFT, y, W - LEFT - 10, LANE - 4, r % 2 == 0 and "#f7f7f7" or "#eeeeee",
                y + LANE / 2, r))
  end
  local drawn = 0
  local order = {} -- outer spans first: inner ones are drawn over them
  for i, e in ipairs(spans) do order[i] = e end
  table.sort(order, function(a, b)
    local da, db = a.args.depth or 0, b.args.depth or 0
    if da ~= db then return da < db end
    return a.ts < b.ts
  end)
  for _, e in ipairs(order) do
    local a, b = e.ts, e.ts + e.dur
    if e.dur > 0 and b >= t0 and a <= t1 then
      local xa, xb = x(math.max(a, t0)), x(math.min(b, t1))
      if xb - xa >= 0.05 then
        local d = e.args.depth or 0
        local y = TOP + e.pid * LANE + 2 + math.min(d, 5) * PAD
        local h = math.max(LANE - 8 - math.min(d, 5) * PAD, 4)
        local tip = e.name
        if e.args.peer then tip = tip .. " peer " .. tostring(e.args.peer) end
        if e.args.peers then tip = tip .. ", " .. e.args.peers .. " peers" end
        if e.args.bytes then tip = tip .. ", " .. e.args.bytes .. " bytes" end
        if e.args.seq then tip = tip .. ", #" .. e.args.seq end
        if e.args.src then tip = tip .. ", " .. e.args.src end
        tip = tip .. (", %.3f us"):format(e.dur)
        add(('<rect class="span" data-cat="%s" x="%s" y="%s" width="%s" height="%s" fill="%s" ' ..
             'stroke="white" stroke-width="0.3"><title>%s</title></rect>\n')
            :format(esc(e.cat), fmt(xa), fmt(y), ("%.2f"):format(xb - xa), fmt(h),
                    color(e.cat or "?"), esc(tip)))
        drawn = drawn + 1
      end
    end
  end
  local arrows = {}
  for id, f in pairs(flows) do
    if f.s and f.f and f.f.ts >= t0 and f.s.ts <= t1 then arrows[#arrows + 1] = f end
  end
  table.sort(arrows, function(a, b) return a.s.ts < b.s.ts end)
  for _, f in ipairs(arrows) do
    local k = kinds[f.s.pid .. "@" .. f.s.ts] or "p2p"
    local y1 = TOP + f.s.pid * LANE + (LANE - 4) / 2
    local y2 = TOP + f.f.pid * LANE + (LANE - 4) / 2
    add(('<line class="arrow" data-kind="%s" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" ' ..
         'stroke-width="1.2" marker-end="url(#ah)"><title>%s %d to %d</title></line>\n')
        :format(esc(k), fmt(x(math.max(f.s.ts, t0))), fmt(y1), fmt(x(math.min(f.f.ts, t1))),
                fmt(y2), kcolor(k), esc(k), f.s.pid, f.f.pid))
  end
  for _, e in ipairs(marks) do
    if e.ts >= t0 and e.ts <= t1 then
      local xx, y = x(e.ts), TOP + e.pid * LANE
      add(('<path class="mark" d="M%s,%s l-4,-6 h8 z" fill="#b07aa1"><title>%s</title></path>\n')
          :format(fmt(xx), fmt(y + 6), esc(e.name)))
    end
  end
  local lx = LEFT
  for _, c in ipairs{"task", "p2p", "coll", "map", "pool", "abort", "region", "transpose", "halo",
                     "neighbor"} do
    add(('<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>\n')
        :format(lx, H - 16, colors[c], lx + 14, H - 7, c))
    lx = lx + 70
  end
  add("</svg>\n")
  local timeline = table.concat(tl)

  -- ----------------------------------------------------------------- matrix
  local mk = TJ.kinds(tr)
  table.insert(mk, 1, "all")
  local CELL = math.max(8, math.min(40, math.floor(360 / n)))
  local PW = n * CELL + 60
  local MW = math.max(#mk, 1) * (PW + 20) + 20
  local MH = n * CELL + 110
  local mx = {}
  local function madd(s) mx[#mx + 1] = s end
  madd(('<svg xmlns="http://www.w3.org/2000/svg" class="matrices" width="%d" height="%d" ' ..
        'viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">\n'):format(MW, MH, MW, MH))
  madd(('<rect x="0" y="0" width="%d" height="%d" fill="white"/>\n'):format(MW, MH))
  for p, kind in ipairs(mk) do
    local cnt, byt = TJ.matrix(tr, kind, "count"), TJ.matrix(tr, kind, "bytes")
    local max = 0
    for i = 1, n do for j = 1, n do max = math.max(max, cnt[i][j]) end end
    local ox, oy = 20 + (p - 1) * (PW + 20) + 40, 50
    madd(('<g class="matrix" data-kind="%s"><text x="%d" y="20" font-size="13">%s</text>' ..
          '<text x="%d" y="36">messages from row rank to column rank</text>\n')
         :format(esc(kind), ox - 40, esc(kind), ox - 40))
    for i = 1, n do
      for j = 1, n do
        local v = cnt[i][j]
        local a = max > 0 and v / max or 0
        local fill = v == 0 and "#ffffff" or
                     ("rgb(%d,%d,%d)"):format(255 - math.floor(200 * a), 255 - math.floor(150 * a), 255)
        madd(('<rect class="cell" x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#ccc">' ..
              '<title>%d to %d: %d messages, %d bytes</title></rect>\n')
             :format(ox + (j - 1) * CELL, oy + (i - 1) * CELL, CELL, CELL, fill, i - 1, j - 1, v,
                     byt[i][j]))
        if n <= 16 and v > 0 then
          madd(('<text x="%d" y="%d" text-anchor="middle" font-size="%d">%d</text>\n')
               :format(ox + (j - 1) * CELL + CELL // 2, oy + (i - 1) * CELL + CELL // 2 + 4,
                       math.min(11, CELL // 2), v))
        end
      end
      if n <= 16 then
        madd(('<text x="%d" y="%d" text-anchor="end">%d</text>\n')
             :format(ox - 4, oy + (i - 1) * CELL + CELL // 2 + 4, i - 1))
        madd(('<text x="%d" y="%d" text-anchor="middle">%d</text>\n')
             :format(ox + (i - 1) * CELL + CELL // 2, oy + n * CELL + 14, i - 1))
      end
    end
    madd("</g>\n")
  end
  madd("</svg>\n")
  local matrix = table.concat(mx)

  local ok_text = ok and "the trace passes the checker" or ("checker: " .. esc(why))
  local counts = {}
  for _, k in ipairs(mk) do
    local c, b = 0, 0
    local cm, bm = TJ.matrix(tr, k, "count"), TJ.matrix(tr, k, "bytes")
    for i = 1, n do for j = 1, n do c, b = c + cm[i][j], b + bm[i][j] end end
    counts[#counts + 1] = ("<tr><td>%s</td><td>%d</td><td>%d</td></tr>"):format(esc(k), c, b)
  end
  local page = ([[<!DOCTYPE html>
  <html><head><meta charset="utf-8"><title>mplua trace: %s</title>
  <style>body{font-family:sans-serif;margin:16px;color:#222}svg{display:block;margin:8px 0}
  table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}</style>
  </head><body>
  <h1>mplua trace: %s</h1>
  <p>%d ranks, %d spans (%d drawn), %d messages with arrows in range; %s.</p>
  <h2>Timeline</h2>
  %s
  <h2>Communication matrix</h2>
  %s
  <table><tr><th>kind</th><th>messages</th><th>bytes</th></tr>%s</table>
  <script>
  // counts the browser laid out (read by the tests through --dump-dom)
  var s = document.querySelector("svg.timeline"), b = s.getBBox();
  document.body.setAttribute("data-lanes", s.querySelectorAll("g.lane").length);
  document.body.setAttribute("data-arrows", s.querySelectorAll("line.arrow").length);
  document.body.setAttribute("data-laid-out", b.width > 0 && b.height > 0 ? "yes" : "no");
  </script>
  </body></html>
  ]]):format(esc(input), esc(input), n, #spans, drawn, #arrows, ok_text, timeline, matrix,
             table.concat(counts))

  return setmetatable({timeline = timeline, matrix = matrix, html = page, ranks = n,
                       spans = #spans, arrows = #arrows, name = input,
                       warning = not ok and why or nil}, Report)
end

-- The report of a trace file.
function M.report(path, opts)
  opts = opts or {}
  local o = {name = opts.name or path, from = opts.from, to = opts.to, width = opts.width}
  return M.render(TJ.load(path), o)
end

return M
