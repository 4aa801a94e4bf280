-- ranks: 2
-- Messages past 2 GiB (the int limit of MPI's classic counts) arrive whole:
-- a 2.5 GiB f64 array and a 2^31 + 3 byte string from rank 0 to rank 1, then
-- back, with isend/irecv too. Elements are checked by their sum (exact:
-- small integers) and at distinct values spread every 2^20 elements.
local N = (5 << 30) // 2 // 8 -- 2.5 GiB of f64
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
local t0 = mp.wtime()
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
  local h = string.rep("mplua", (1 << 30) // 5 + 1) -- string.rep stops at 2 GiB
  if mp.rank == 0 then
    mp.send(1, h .. h .. "xxx")
  elseif mp.rank == 1 then
    local s = mp.irecv(0):wait()
    assert(#s == 2 * #h + 3 and #s > 1 << 31, "string of " .. #s .. " bytes")
    assert(s == h .. h .. "xxx", "the string's bytes differ")
  end
end)
print(("xfer_huge ok (%.1f s)"):format(mp.wtime() - t0))
