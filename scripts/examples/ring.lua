-- SPDX-License-Identifier: MIT
-- A token goes once round the ring of ranks; each rank adds its number.
-- The file runs on every rank as one task:
--   > mp.include("scripts/examples/ring.lua")      -- at rank 0's prompt
--   mpiexec -n 4 build/mplua -j scripts/examples/ring.lua -e ""
-- Rank 0 prints the token's journey and returns it (mp.include's result).
local right, left = (mp.rank + 1) % mp.size, (mp.rank - 1) % mp.size
if mp.rank == 0 then
  mp.send(right, {0})                -- to itself when alone: it is queued
  local token = mp.recv(left)
  print(("ring of %d: %s -> 0"):format(mp.size, table.concat(token, " -> ")))
  return token
end
local token = mp.recv(left)
token[#token + 1] = mp.rank
mp.send(right, token)
