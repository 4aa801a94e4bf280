-- ranks: 2  quick: 2  sanitize: none
-- SPDX-License-Identifier: MIT
-- A stream of 1 MiB strings lands in the few blocks its dead predecessors
-- left (chan/arrive.c runs a collector step before a large message's place
-- is chosen), not in fresh memory each time: a receiver whose heap holds a
-- large value (here a live 64 MiB string, which spaces Lua's own
-- collections by tens of MiB) would otherwise write every message into
-- memory the cache has lost. Counted by the blocks' addresses; every byte
-- is checked.
local MiB = 1 << 20
local N = 60

local function stream()
  local function msg(k) return string.rep(string.char(65 + k % 26), MiB - 7) .. ("%07d"):format(k) end
  if mp.rank == 0 then
    for k = 1, N do mp.send(1, msg(k)); mp.recv(1) end
    return mp.recv(1)
  end
  local ballast = string.rep("b", 64 * MiB) -- lives through the stream
  local blocks, distinct = {}, 0
  for k = 1, N do
    local s = mp.recv(0)
    assert(s == msg(k), "message " .. k .. " arrived changed")
    local p = string.format("%p", s)
    if not blocks[p] then blocks[p], distinct = true, distinct + 1 end
    s = nil
    mp.send(0, true)
  end
  mp.send(0, {distinct, #ballast})
end

local r = mp.exec(stream)
assert(r[2] == 64 * MiB)
assert(r[1] <= 8, ("%d strings of 1 MiB received into %d distinct blocks"):format(N, r[1]))
print(("ok: %d strings in %d blocks"):format(N, r[1]))
