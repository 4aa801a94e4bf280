-- ranks: 1 2 3 4 5 8
-- SPDX-License-Identifier: MIT
-- Communicator ids are unique by construction: two communicators a rank
-- belongs to never share an id, and every member agrees on it. The first
-- task makes the two splits whose ids collided under the former scheme (a
-- 32-bit hash of parent, count, task and color: split #1 with color 143956
-- and split #2 with color 25509 in task 1 both hashed to 2663635812), so a
-- message on one was taken for the other's.
mp.exec(function()
  local a = mp.world:split(143956)
  local b = mp.world:split(25509)
  assert(a.id ~= b.id, "two communicators share id " .. a.id)
  local n, me = a.size, a.rank
  a:send((me + 1) % n, "on a")
  b:send((me + 1) % n, "on b")
  assert(b:recv((me - 1) % n) == "on b", "b received a's message")
  assert(a:recv((me - 1) % n) == "on a", "a received b's message")
end)

-- many communicators in one task, nested, with colors and dups: on every
-- rank all ids differ, members agree, and messages never cross
mp.exec(function()
  local me, size = mp.rank, mp.size
  local comms = {mp.world}
  for k = 1, 60 do
    local parent = comms[(k * 7) % #comms + 1]
    local c
    if k % 3 == 0 then c = parent:dup()
    else c = parent:split((parent.rank * k) % 3, (parent.size - parent.rank) % 4) end
    comms[#comms + 1] = c
  end
  local seen = {}
  for i, c in ipairs(comms) do
    assert(not seen[c.id], ("rank %d: communicators %d and %d share id %d"):format(me, seen[c.id] or 0, i, c.id))
    seen[c.id] = i
    local ids = c:allgather(c.id)
    for r = 1, c.size do assert(ids[r] == c.id, "members disagree on an id") end
  end
  for i, c in ipairs(comms) do c:send((c.rank + 1) % c.size, i) end
  for i = #comms, 1, -1 do
    local c = comms[i]
    assert(c:recv((c.rank - 1) % c.size) == i, "a message crossed communicators")
  end
end)
print("comm_ids ok")
