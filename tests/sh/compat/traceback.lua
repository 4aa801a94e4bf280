-- SPDX-License-Identifier: MIT
print(debug.traceback("msg"))
print(debug.traceback("level 2", 2))
local function f() print(debug.traceback()) end
f()
local info = debug.getinfo(1, "S")
print(info.source, info.short_src, info.what)
local lvl = 0
while debug.getinfo(lvl + 1) do lvl = lvl + 1 end
print("levels", lvl, debug.getinfo(lvl, "S").what)
