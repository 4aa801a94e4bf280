-- SPDX-License-Identifier: MIT
local x <close> = setmetatable({}, {__close = function() print("closed") end})
setmetatable({}, {__gc = function() print("collected") end})
io.stdout:setvbuf("full")
io.write("buffered ")
os.exit(0, true)
