-- SPDX-License-Identifier: MIT
setmetatable({}, {__gc = function() print("gc exits") os.exit(11) end})
os.exit(0, true)
