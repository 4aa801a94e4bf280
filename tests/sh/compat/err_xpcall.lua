-- SPDX-License-Identifier: MIT
print(xpcall(function() error("first") end, function() error("in handler") end))
print(xpcall(function() error("e") end, function(m) return "handled: " .. m end))
print(xpcall(function(...) return ... end, print, 1, 2))
print(pcall(error))
print(select("#", pcall(error, nil)))
print(pcall(pcall))
