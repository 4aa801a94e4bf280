-- ranks: 4
-- SPDX-License-Identifier: MIT
-- The chaos test: a few hundred rounds of random message patterns with a
-- fault injected at a random rank and point (or none). After each round the
-- next message each rank receives is a fresh one, nothing stale is queued, and
-- all ranks agree on the round number.
-- Replay a failure with MPLUA_CHAOS_SEED=<seed printed below>.
package.path = "lib/?.lua;" .. package.path
local chaos = require("mpchaos")
local seed = tonumber(os.getenv("MPLUA_CHAOS_SEED")) or 20261121
local rounds = tonumber(os.getenv("MPLUA_CHAOS_ROUNDS")) or 300
print(("abort_chaos: seed %d, %d rounds, %d ranks"):format(seed, rounds, mp.size))
local c = chaos.new(seed)
local faults = 0
for k = 1, rounds do
  if c:round(k) then faults = faults + 1 end
end
assert(faults > rounds // 4, "too few faults were injected: " .. faults)
print(("abort_chaos ok: %d rounds, %d aborted"):format(rounds, faults))
