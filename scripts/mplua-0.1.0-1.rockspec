-- SPDX-License-Identifier: MIT
-- The mp and ad modules and the Lua library (mplua.*) for a stock lua5.4,
-- built from this checkout with CMake (MPI and Lua's headers from the
-- system; nothing is downloaded):
--   luarocks --lua-version 5.4 make --tree T scripts/mplua-0.1.0-1.rockspec
--   mpiexec -n 4 lua5.4 -l mp.auto script.lua   (LUA_PATH, LUA_CPATH: luarocks path)
rockspec_format = "3.0"
package = "mplua"
version = "0.1.0-1"
source = {
  url = "file://.", -- luarocks make builds the checkout it is run in
}
description = {
  summary = "Message Passing Lua: message passing (mp) and autodiff (ad) for Lua 5.4 over MPI",
  detailed = [[
require "mp" in lua5.4 under mpiexec: rank 0 leads, the other ranks serve the
parallel tasks it starts (mp.exec, mp.pool, mp.map), with messages,
collectives, typed and distributed arrays. require "ad": automatic
differentiation. The Lua library: require "mplua.optim", "mplua.hmc", ...]],
  license = "MIT",
}
dependencies = {
  "lua >= 5.4, < 5.5",
}
build = {
  type = "cmake",
  variables = {
    CMAKE_BUILD_TYPE = "RelWithDebInfo",
    MPLUA_LUAROCKS = "ON",
    MPLUA_LUA_CDIR = "$(LIBDIR)",
    MPLUA_LUA_DIR = "$(LUADIR)",
  },
}
