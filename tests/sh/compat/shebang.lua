#!/usr/bin/env lua
-- SPDX-License-Identifier: MIT
print("shebang line skipped", ...)
error("line numbers count the shebang")
