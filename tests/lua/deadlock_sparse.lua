-- ranks: 2 4 8  quick: 2
-- SPDX-License-Identifier: MIT
-- A deadlock among ranks that each talked to one or two peers is reported
-- exactly (who waits for whom), and the answers of rank 0's whereabouts rounds
-- carry counts only for those peers: their bytes (mp.stats().where_answer_bytes,
-- the last complete round's) grow with the peers each rank talked to, not with
-- the size of the job.
local P = mp.size
local ENTRY = 24 -- a peer's counts in an answer (where_answer.h)

-- a ring in which every rank waits for its right neighbour, after sending
-- `sends` messages to it (receiving as many from the left): the report and
-- the answers' bytes
local function ring(sends)
  local ok, err = pcall(mp.exec, function(k)
    local right, left = (mp.rank + 1) % mp.size, (mp.rank - 1) % mp.size
    for i = 1, k do mp.send(right, i) end
    for i = 1, k do assert(mp.recv(left) == i) end
    mp.recv(right)
  end, sends)
  assert(not ok and type(err) == "table" and err.deadlock, tostring(err))
  return tostring(err), mp.stats().where_answer_bytes
end

local text, bytes0 = ring(0)
local text1, bytes1 = ring(3)
for _, t in ipairs{text, text1} do
  assert(t:find("deadlock: ", 1, true), t)
  for r = 0, P - 1 do
    local want = ("rank %d waits in mp.recv from rank %d at "):format(r, (r + 1) % P)
    assert(t:find(want, 1, true), want .. " not in: " .. t)
  end
end
-- no counts: a head per rank, whatever the size of the job
assert(bytes0 > 0 and bytes0 % P == 0 and bytes0 // P <= 256, bytes0)
-- one or two peers a rank: as many entries, not one per rank of the job
local peers = P == 2 and 1 or 2
assert(bytes1 - bytes0 == P * peers * ENTRY,
       ("answers of %d bytes, %d without counts: want %d entries of %d bytes a rank")
         :format(bytes1, bytes0, peers, ENTRY))
print(("%d ranks: answers %d bytes, %d a rank (%d with no counts)"):format(P, bytes1, bytes1 // P, bytes0 // P))
assert(mp.exec(function() return mp.handin(1) end) == P) -- the job goes on
print("deadlock_sparse ok")
