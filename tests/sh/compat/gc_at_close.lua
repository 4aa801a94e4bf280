-- SPDX-License-Identifier: MIT
setmetatable({}, {__gc = function() print("collected at close") end})
local x <close> = setmetatable({}, {__close = function() print("closed at end") end})
print("end of script")
