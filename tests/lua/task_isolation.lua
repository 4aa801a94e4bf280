-- ranks: 1 2 3 4
-- A message nobody received in one task is never delivered in the next.
local n = mp.size
mp.exec(function()
  if mp.rank == n - 1 then
    mp.send(0, "stale")
    mp.send(0, string.rep("s", 200000)) -- large: may still be in flight at task end
  end
end)
local got = mp.exec(function()
  if mp.rank == n - 1 then mp.send(0, "fresh") end
  if mp.rank == 0 then return mp.recv(n - 1) end
end)
assert(got == "fresh", "expected the fresh message, got " .. tostring(got))
local dropped = mp.exec(function()
  if mp.rank == 0 then return #mp.probe(0) end
end)
assert(dropped == 0, "stale messages still queued")
print("task_isolation ok")
