-- SPDX-License-Identifier: MIT
-- What the mplua program adds to rank 0's `mp` for the prompt and the
-- notebook (the module itself knows neither):
--   mp.display(v [, mime])   show v's rich forms (display.lua) in the notebook,
--                            or its text at the prompt; with mime, only that form
--                            (a string v is then the form itself:
--                            mp.display("<b>hi</b>", "text/html"))
--   mp.trace.report([file | info] [, opts])
--                            the report of a trace (mplua.trace_report): the file
--                            mp.trace.stop wrote (or its result); with neither,
--                            what is being recorded (tracing stops). A notebook
--                            shows its timeline and matrix; :save(path) writes them.
local lib, sink = ...
local mp, forms, type, error, pcall = lib.G.mp, lib.forms, lib.type, lib.error, lib.pcall
local os, require = lib.os, lib.require

function mp.display(v, mime)
  if mime ~= nil and type(mime) ~= "string" then
    error("bad argument #2 to 'mp.display' (a mime type expected, got " .. type(mime) .. ")", 2)
  end
  local f
  if mime ~= nil and type(v) == "string" then
    f = {[mime] = v}
    if mime ~= "text/plain" then f["text/plain"] = "<" .. mime .. ">" end
  else
    f = forms(v)
    if mime ~= nil then
      if f[mime] == nil then
        error("bad argument #2 to 'mp.display' (no " .. mime .. " form for this value)", 2)
      end
      f = {[mime] = f[mime], ["text/plain"] = f["text/plain"]}
    end
  end
  sink(f)
end

if type(mp.trace) == "table" then
  function mp.trace.report(what, opts)
    local file, tmp = what, nil
    if type(what) == "table" then file = what.file end
    if file == nil then
      if not mp.trace.on() then
        error("mp.trace.report: nothing recorded (mp.trace.start first, or give the file)", 2)
      end
      tmp = os.tmpname()
      mp.trace.stop(tmp)
      file = tmp
    end
    if type(file) ~= "string" then
      error("bad argument #1 to 'mp.trace.report' (a file or mp.trace.stop's result expected)", 2)
    end
    local o = {name = tmp and "mp.trace" or file}
    for k, v in lib.pairs(opts or {}) do o[k] = v end
    local ok, rep = pcall(function() return require("mplua.trace_report").report(file, o) end)
    if tmp then os.remove(tmp) end
    if not ok then error(rep, 2) end
    return rep
  end
end
