-- SPDX-License-Identifier: MIT
io.write("partial line")
io.stderr:write("to stderr\n")
os.exit(3)
