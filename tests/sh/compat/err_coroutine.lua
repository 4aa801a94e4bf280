-- SPDX-License-Identifier: MIT
local co = coroutine.create(function() local x = nil; return x + 1 end)
print(coroutine.resume(co))
print(coroutine.status(co), coroutine.close(co))
local w = coroutine.wrap(function() error("in wrap") end)
w()
