-- SPDX-License-Identifier: MIT
local function f() error("level two", 2) end
local function g() f() end
g()
