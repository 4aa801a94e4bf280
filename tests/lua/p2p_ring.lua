-- ranks: 1 2 3 4
-- SPDX-License-Identifier: MIT
-- A ring at every distance d: gcd(d, size) disjoint sub-rings; positions with
-- odd index in their sub-ring receive first, even ones send first.
local results = mp.exec(function()
  local n, me = mp.size, mp.rank
  local function gcd(a, b) while b ~= 0 do a, b = b, a % b end return a end
  local total = 0
  for d = 1, n - 1 do
    local g = gcd(d, n)
    local len = n // g
    -- index of this rank within its sub-ring: me = start + i*d (mod n)
    local start, i = me % g, 0
    while (start + i * d) % n ~= me do i = i + 1 end
    local to, from = (me + d) % n, (me - d) % n
    local token = {from = me, d = d, payload = string.rep("r", me + d)}
    local got
    if i % 2 == 1 then
      got = mp.recv(from); mp.send(to, token)
    else
      mp.send(to, token); got = mp.recv(from)
    end
    assert(got.from == from and got.d == d and got.payload == string.rep("r", from + d),
           "ring d=" .. d .. " got a token from " .. tostring(got.from))
    total = total + got.from
  end
  return total
end)
local n = mp.size
-- rank 0 receives from (0 - d) % n for d = 1..n-1: every other rank once
local expect = 0
for r = 1, n - 1 do expect = expect + r end
assert(results == expect, "rank 0 ring sum " .. tostring(results) .. " ~= " .. expect)
print("p2p_ring ok")
