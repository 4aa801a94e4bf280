-- SPDX-License-Identifier: MIT
local ok, e = pcall(require, "no.such.mod")
print(ok, (e:gsub("\n.*", "")))
package.preload.pre = function(...) print("preload", ...) return {x = 1} end
print(require("pre").x, select(2, require("pre")))
print(package.searchpath("nosuch", "./?.lua;./?/x.lua"))
print(require("mymod").name, select(2, require("mymod")))
