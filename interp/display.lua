-- SPDX-License-Identifier: MIT
-- A value's rich forms for a notebook: a table mime type -> text, always
-- with "text/plain". mp.Array: its shape, dtype and a preview (an HTML
-- table); a layout, a Cartesian topology or a graph: a small SVG of the
-- process grid or the graph; a trace report: its timeline and matrix;
-- a table: the prompt's rendering; a value whose metatable has
-- __display(v) (returning such a table, or a string of HTML): what it says.
-- Compiled into the program (show.c), loaded on rank 0 of a notebook.
local lib = ...
local string, table, math = lib.string, lib.table, lib.math
local getmetatable = lib.debug.getmetatable
local type, tostring, rawget, pcall, ipairs, select =
  lib.type, lib.tostring, lib.rawget, lib.pcall, lib.ipairs, lib.select
local pretty = lib.pretty
local fmt, concat = string.format, table.concat

local function esc(s)
  return (tostring(s):gsub("[&<>\"]", {["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;",
                                       ['"'] = "&quot;"}))
end

local function typename(v)
  local mt = getmetatable(v)
  return mt and rawget(mt, "__name"), mt
end

local function num(x)
  if math.type(x) == "float" then return fmt("%.6g", x) end
  return tostring(x)
end

local palette = {"#cfe2f3", "#d9ead3", "#fff2cc", "#f4cccc", "#d9d2e9", "#fce5cd", "#d0e0e3",
                 "#ead1dc"}

-- ------------------------------------------------------------ arrays
local ROWS, COLS = 8, 8

-- indices to show of n: all, or the first and last few with a gap (0)
local function pick(n, k)
  local out = {}
  if n <= k then for i = 1, n do out[#out + 1] = i end return out end
  for i = 1, k - 2 do out[#out + 1] = i end
  out[#out + 1] = 0
  out[#out + 1] = n
  return out
end

local function array_forms(a)
  local dims = {a:dims()}
  local head = tostring(a):match("^[^{]*"):gsub("%s+$", "")
  local rows, cols, get
  if #dims == 2 then
    rows, cols = pick(dims[1], ROWS), pick(dims[2], COLS)
    get = function(i, j) return a:get(i, j) end
  else -- one row of the flat elements
    rows, cols = {1}, pick(#a, 2 * COLS)
    get = function(_, j) return a[j] end
  end
  local lines, html = {head}, {"<table><caption>" .. esc(head) .. "</caption>"}
  for _, i in ipairs(rows) do
    local cells, tds = {}, {}
    for _, j in ipairs(cols) do
      local s = (i == 0 or j == 0) and "..." or num(get(i, j))
      cells[#cells + 1] = fmt("%10s", s)
      tds[#tds + 1] = "<td>" .. esc(s) .. "</td>"
    end
    if #cols > 0 then
      lines[#lines + 1] = concat(cells, " ")
      html[#html + 1] = "<tr>" .. concat(tds) .. "</tr>"
    end
  end
  html[#html + 1] = "</table>"
  return {["text/plain"] = concat(lines, "\n"), ["text/html"] = concat(html)}
end

-- ------------------------------------------------------------ grids
local CW, CH = 72, 44

-- An SVG of a grid of ranks: cell(r) -> x, y (grid cells), label lines.
local function grid_svg(title, nx, ny, nranks, cell, label, notes)
  local w, h = nx * CW + 20, ny * CH + 40
  local out = {fmt('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" ' ..
                   'font-family="sans-serif" font-size="11">', w, h),
               fmt('<text x="10" y="14" font-size="12">%s</text>', esc(title))}
  for r = 0, nranks - 1 do
    local x, y = cell(r)
    local px, py = 10 + x * CW, 22 + y * CH
    out[#out + 1] = fmt('<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#555"/>',
                        px, py, CW - 4, CH - 4, palette[r % #palette + 1])
    for k, line in ipairs(label(r)) do
      out[#out + 1] = fmt('<text x="%d" y="%d">%s</text>', px + 4, py + 13 * k, esc(line))
    end
  end
  for _, n in ipairs(notes or {}) do out[#out + 1] = n end
  out[#out + 1] = "</svg>"
  return concat(out, "\n")
end

local function layout_forms(l)
  local g = l.grid
  local nx, ny = g[1] or 1, g[2] or 1
  local svg = grid_svg(l.spec, nx, ny, math.min(l.nranks, nx * ny), function(r)
    local c = l:coords(r)
    return c[1] or 0, c[2] or 0
  end, function(r)
    return {"rank " .. r, concat(l:local_shape(r), "x")}
  end)
  return {["text/plain"] = l.spec, ["image/svg+xml"] = svg}
end

local function cart_forms(t)
  local d = t.dims
  local nx, ny = d[1] or 1, d[2] or 1
  local per = t.periodic
  local notes = {}
  local w, h = nx * CW + 20, ny * CH + 40
  if per[1] then notes[#notes + 1] = fmt('<text x="%d" y="%d">&#8635; x</text>', w - 40, h - 4) end
  if per[2] then notes[#notes + 1] = fmt('<text x="10" y="%d">&#8635; y</text>', h - 4) end
  local svg = grid_svg(tostring(t), nx, ny, math.min(t.nranks, nx * ny), function(r)
    local c = t:coords(r)
    return c[1] or 0, c[2] or 0
  end, function(r)
    return {"rank " .. r, "(" .. concat(t:coords(r), ",") .. ")"}
  end, notes)
  return {["text/plain"] = tostring(t), ["image/svg+xml"] = svg}
end

local function graph_forms(t)
  local n = t.nranks
  local forms = {["text/plain"] = tostring(t)}
  if t.distributed or n > 64 then return forms end
  local R, cx, cy = 30 + 8 * n, 0, 0
  local size = 2 * R + 60
  cx, cy = size / 2, size / 2
  local function at(r)
    local a = 2 * math.pi * r / n - math.pi / 2
    return cx + R * math.cos(a), cy + R * math.sin(a)
  end
  local out = {fmt('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" ' ..
                   'font-family="sans-serif" font-size="11">', size, size),
               '<defs><marker id="a" viewBox="0 0 10 10" refX="18" refY="5" markerWidth="6" ' ..
               'markerHeight="6" orient="auto"><path d="M0,0L10,5L0,10z" fill="#555"/></marker></defs>'}
  for r = 0, n - 1 do
    local x1, y1 = at(r)
    for _, d in ipairs(t:neighbors(r)) do
      local x2, y2 = at(d)
      out[#out + 1] = fmt('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555" ' ..
                          'marker-end="url(#a)"/>', x1, y1, x2, y2)
    end
  end
  for r = 0, n - 1 do
    local x, y = at(r)
    out[#out + 1] = fmt('<circle cx="%.1f" cy="%.1f" r="11" fill="%s" stroke="#555"/>' ..
                        '<text x="%.1f" y="%.1f" text-anchor="middle">%d</text>',
                        x, y, palette[r % #palette + 1], x, y + 4, r)
  end
  out[#out + 1] = "</svg>"
  forms["image/svg+xml"] = concat(out, "\n")
  return forms
end

local function report_forms(rep)
  return {["text/plain"] = tostring(rep),
          ["text/html"] = "<div>" .. rep.timeline .. "</div><div>" .. rep.matrix .. "</div>"}
end

local byname = {["mp.Array"] = array_forms, ["mp.Layout"] = layout_forms,
                ["mp.Cart"] = cart_forms, ["mp.Graph"] = graph_forms,
                ["mp.TraceReport"] = report_forms}

-- forms(v) -> {mime = text}
return function(v)
  local name, mt = typename(v)
  local own = mt and rawget(mt, "__display")
  local ok, forms
  if type(own) == "function" then
    ok, forms = pcall(own, v)
    if ok and type(forms) == "string" then forms = {["text/html"] = forms} end
  elseif byname[name] then
    ok, forms = pcall(byname[name], v)
  end
  if not ok or type(forms) ~= "table" then forms = {} end
  if type(forms["text/plain"]) ~= "string" then forms["text/plain"] = pretty(v) end
  return forms
end
