#!/usr/bin/lua
-- SPDX-License-Identifier: MIT
print("byte order mark and shebang skipped")
