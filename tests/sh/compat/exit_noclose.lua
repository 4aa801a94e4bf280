-- SPDX-License-Identifier: MIT
local x <close> = setmetatable({}, {__close = function() print("closed") end})
setmetatable({}, {__gc = function() print("collected") end})
os.exit(5)
