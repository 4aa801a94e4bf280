-- SPDX-License-Identifier: MIT
local x <close> = setmetatable({}, {__close = function() error("close error") end})
print("bye")
