-- SPDX-License-Identifier: MIT
do local x <close> = setmetatable({}, {__close = function() print("closing") os.exit(7) end}) print("body") end
print("not reached")
