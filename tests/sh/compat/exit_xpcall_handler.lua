-- SPDX-License-Identifier: MIT
print(xpcall(error, function(m) print("handler", m) os.exit(12, true) end, "oops"))
