-- SPDX-License-Identifier: MIT
local function f() error("boom") end
f()
