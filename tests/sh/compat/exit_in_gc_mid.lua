-- SPDX-License-Identifier: MIT
setmetatable({}, {__gc = function() print("gc exits") os.exit(10) end})
collectgarbage() collectgarbage()
print("not reached")
