-- SPDX-License-Identifier: MIT
local x <close> = setmetatable({}, {__close = function() print("closed") end})
print(pcall(function() local y <close> = setmetatable({}, {__close = function() print("inner closed") end}) os.exit(5, true) end))
print("not reached")
