-- SPDX-License-Identifier: MIT
for l in io.lines() do print("line", l) end
print(io.read("a") == "", io.read("l"))
