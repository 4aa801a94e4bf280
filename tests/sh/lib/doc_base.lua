-- SPDX-License-Identifier: MIT
-- Run on every rank (-j) before the documentation's examples (doc_examples.lua):
-- remembers the globals, so that __doc_reset() gives every example the globals a
-- fresh job has on every rank (a name an example forgot to define stays undefined);
-- on rank 0 each prompt becomes a marker line that splits the session's output.
local base = {}
for k, v in pairs(_G) do base[k] = v end
function __doc_restore()
  for k in pairs(_G) do
    if base[k] == nil and k ~= "arg" then _G[k] = nil end
  end
  for k, v in pairs(base) do _G[k] = v end
end
base.__doc_restore = __doc_restore
if mp.rank == 0 then
  _PROMPT, _PROMPT2 = "\1P\1\n", "\1C\1\n"
  function __doc_reset()
    if mp.trace.on() then mp.trace.stop("/dev/null") end -- an example that failed mid-trace
    mp.exec(function() __doc_restore() end)
  end
  base._PROMPT, base._PROMPT2, base.__doc_reset = _PROMPT, _PROMPT2, __doc_reset
end
