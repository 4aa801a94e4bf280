-- SPDX-License-Identifier: MIT
setmetatable({}, {__gc = function() print("gc exits") os.exit(4) end})
print("bye")
