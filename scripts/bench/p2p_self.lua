-- SPDX-License-Identifier: MIT
-- The CPU time of a send and a receive of one number to this very rank
-- (mp.send(me, 1.5); mp.recv(me): no MPI), beside the floor of any two calls
-- from Lua into C (two math.abs calls), interleaved; CPU time (os.clock),
-- the best of the rounds, so that a loaded machine moves it little.
-- Run: mpiexec -n 1 build/mpbench scripts/bench/p2p_self.lua [rounds]
local rounds = tonumber(arg and arg[1]) or 7
local N = 200000

local function self_loop(n)
  local send, recv, me = mp.send, mp.recv, mp.rank
  local t = os.clock()
  for _ = 1, n do send(me, 1.5); recv(me) end
  return os.clock() - t
end

local function floor_loop(n)
  local abs = math.abs
  local t = os.clock()
  for _ = 1, n do abs(1.5); abs(1.5) end
  return os.clock() - t
end

local best_mp, best_c = math.huge, math.huge
for _ = 1, rounds do
  best_mp = math.min(best_mp, mp.exec(self_loop, N))
  best_c = math.min(best_c, floor_loop(N))
end
local ns = 1e9 / N
print(string.format("send + recv to itself: mp %.0f ns of CPU  two C calls %.0f ns  ratio %.2f",
  best_mp * ns, best_c * ns, best_mp / best_c))
