-- SPDX-License-Identifier: MIT
setmetatable({}, {__gc = function() error("in gc") end})
collectgarbage()
print("done")
