-- SPDX-License-Identifier: MIT
print(collectgarbage("isrunning"), collectgarbage("incremental"))
print(collectgarbage("generational"))
local t = {}
for i = 1, 1e5 do t[i] = {i} end
t = nil
print(collectgarbage("step"), math.type(collectgarbage("count")))
print(collectgarbage("incremental", 100, 100, 10), collectgarbage("incremental"))
print(collectgarbage("stop"), collectgarbage("isrunning"))
print(collectgarbage("restart"), collectgarbage("isrunning"))
print(collectgarbage("setpause", 150), collectgarbage("setstepmul", 200))
print(pcall(collectgarbage, "bogus"))
print(collectgarbage())
