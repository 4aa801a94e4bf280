-- SPDX-License-Identifier: MIT
print(os.execute())
print(os.execute("exit 3"))
print(os.execute("kill -9 $$"))
print(io.popen("echo hi"):read("a"))
print(io.popen("exit 2"):close())
print(os.setlocale(), os.setlocale("C"), os.difftime(10, 5), math.type(os.clock()))
