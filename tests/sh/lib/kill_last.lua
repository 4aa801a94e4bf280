-- SPDX-License-Identifier: MIT
-- A task in which the last rank kills itself with SIGKILL (no Lua error,
-- no message: the process is gone); the others wait in a collective.
mp.exec(function()
  if mp.rank == mp.size - 1 then
    local pid = io.open("/proc/self/stat"):read("a"):match("^(%d+)")
    os.execute("kill -9 " .. pid)
  end
  mp.handin(1)
end)
print("not reached")
