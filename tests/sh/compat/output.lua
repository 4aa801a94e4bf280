-- SPDX-License-Identifier: MIT
-- bytes pass unchanged: every byte value, a long line, no final newline
local t = {}
for i = 0, 255 do t[#t + 1] = string.char(i) end
local s = table.concat(t)
io.write(s, s:rep(300), "\r\n")
io.write(("z"):rep(100000))
print()
io.stdout:setvbuf("full")
io.write("a")
io.stderr:write("err without newline")
io.write("b\n")
print(io.stdout:setvbuf("line"))
print(pcall(io.close))
print(io.stdout:close())
io.write("no newline at the end")
