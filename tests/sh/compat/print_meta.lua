-- SPDX-License-Identifier: MIT
local ts = tostring
tostring = function() return "X" end
print(1, nil, "a")
tostring = ts
print(setmetatable({}, {__tostring = function() return 42 end}))
print((tostring(setmetatable({}, {__name = "MyType"})):gsub("0x%x+", "ADDR")))
print(pcall(print, setmetatable({}, {__tostring = function() return {} end})))
_G.print = function(...) io.write("P:", select("#", ...), "\n") end
print("overridden", nil)
