-- ranks: 2  soak: 2
-- SPDX-License-Identifier: MIT
-- Messages past 2 GiB (the int limit of MPI's classic counts) arrive whole:
-- an f64 array of 2^31 + 24 bytes from rank 0 to rank 1 and back (isend), and
-- a string of 2^31 + 5 bytes (irecv). Elements are checked by their sum
-- (exact: small integers) and at distinct values spread every 2^20 elements;
-- the string byte for byte, in pieces (no second copy of it is made).
local N = (1 << 28) + 3 -- f64: 2^31 + 24 bytes
local STEP = 1 << 20
local function make()
  local a = mp.array("f64", N):fill(1)
  for i = 1, N, STEP do a[i] = i % 1000 + 2 end
  a[N] = 7
  return a
end
local function check(a, what)
  assert(#a == N, what .. ": " .. #a .. " elements")
  local want = N
  for i = 1, N, STEP do
    assert(a[i] == i % 1000 + 2, what .. ": element " .. i)
    want = want + i % 1000 + 1
  end
  assert(a[N] == 7, what .. ": the last element")
  want = want + 6
  assert(a:sum() == want, what .. ": the sum is " .. a:sum() .. ", not " .. want)
end
mp.exec(function()
  if mp.rank == 0 then
    local a = make()
    mp.send(1, a)
    check(mp.recv(1), "array back")
  elseif mp.rank == 1 then
    local a = mp.recv(0)
    check(a, "array received")
    mp.isend(0, a):wait()
  end
end)
mp.exec(function()
  local n = 2 * ((1 << 30) // 5 + 1) -- "mplua" repeated (string.rep stops at 2 GiB), then "xxx"
  if mp.rank == 0 then
    local h = string.rep("mplua", n // 2)
    mp.send(1, h .. h .. "xxx")
  elseif mp.rank == 1 then
    local s = mp.irecv(0):wait()
    assert(#s == 5 * n + 3 and #s > 1 << 31, "string of " .. #s .. " bytes")
    local block = string.rep("mplua", 1 << 17) -- 640 KiB
    local full = 5 * n // #block
    for k = 0, full - 1 do
      local at = k * #block + 1
      if s:find(block, at, true) ~= at then error("the string's bytes differ after byte " .. at) end
    end
    local at = full * #block + 1
    assert(s:find(block:sub(1, 5 * n - at + 1) .. "xxx", at, true) == at, "the string's last bytes differ")
  end
end)
print("xfer_huge ok")
