-- SPDX-License-Identifier: MIT
coroutine.wrap(function() print("in coroutine") os.exit(6) end)()
