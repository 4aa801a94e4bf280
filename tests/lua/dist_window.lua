-- ranks: 1 2 3 4 5 8 20  quick: 1 2 3
-- SPDX-License-Identifier: MIT
-- A blocking transpose keeps at most a window of its sends in flight
-- (plan:info().window messages, and past the first window_bytes): the most
-- bytes of sends in flight at once (mp.stats().pending_bytes_peak) stays
-- within it whatever the number of peers, and the data is exact for
-- messages either side of the thresholds that change how one travels (the
-- merge of small boxes, 8256 bytes; a header first, 64 KiB; the window's bytes).
local W = 8 << 20
mp.exec(function()
  local P = mp.size
  -- message payload bytes: es * a * b (a rows of each x block, b columns of each y block)
  local cases = {{1, 1}, {1, 1031}, {1, 1032}, {1, 1033}, {1, 8188}, {1, 8192}, {1, 8196}}
  local most = (24 << 20) // (8 * P)       -- elements per message: 24 MiB of array a rank
  for _, n in ipairs({W // 16 - 1, W // 16 + 1, W // 8 + 1, most}) do
    if n <= most then cases[#cases + 1] = {2, n // 2} end
  end
  for _, ab in ipairs(cases) do
    local a, b = ab[1], ab[2]
    local NX, NY = P * a, P * b
    local A = mp.layout(("f64[x=%d@1, y=%d]"):format(NX, NY))
    local B = mp.layout(("f64[x=%d, y=%d@1]"):format(NX, NY))
    local T = mp.transpose(A, B)
    local info = T:info()
    assert(info.window >= 1 and info.window_bytes >= 1)
    local x = A:alloc()
    local full = a * NY <= 70000 -- every element, or block sums for the large ones
    if full then
      for j = 1, NY do
        for i = 1, a do x:set(i, j, (mp.rank * a + i - 1) * NY + j - 1) end
      end
    else
      x:fill(mp.rank + 1)
    end
    mp.barrier()
    -- the previous case's sends may still be in flight (their receivers are done, MPI may
    -- not have said so here yet): the window bounds one exchange's own
    while mp.stats().pending_bytes > 0 do mp.probe() end
    mp.stats() -- resets the peak
    local y = T:forward(x)
    local peak = mp.stats().pending_bytes_peak
    local m = 8 * a * b + 4096 -- a message and what frames it
    local bound = math.min(info.window * m, math.max(info.window_bytes + info.window * 4096, m))
    assert(peak <= bound + 65536, ("%d ranks, messages of %d bytes: %d bytes of sends in flight "
           .. "at once, the window allows %d"):format(P, 8 * a * b, peak, bound))
    if full then
      for j = 1, b do
        for i = 1, NX do
          local want = (i - 1) * NY + mp.rank * b + j - 1
          if y:get(i, j) ~= want then
            error(("%d ranks, messages of %d bytes: y[%d][%d] = %s, want %d"):format(
              P, 8 * a * b, i, j, y:get(i, j), want))
          end
        end
      end
    else
      -- each sender's block holds its rank + 1: the sum tells a missing or doubled block
      assert(mp.Array.sum(y) == a * b * P * (P + 1) / 2, "block sums")
      for r = 0, P - 1 do
        local blk = y:view({r * a + 1, r * a + a}, ":")
        assert(blk:min() == r + 1 and blk:max() == r + 1, ("block of rank %d"):format(r))
      end
    end
    -- and back, the window again
    local z = T:back(y)
    if full then
      for j = 1, NY do
        for i = 1, a do assert(z:get(i, j) == x:get(i, j), "round trip") end
      end
    else
      assert(mp.Array.min(z) == mp.rank + 1 and mp.Array.max(z) == mp.rank + 1, "round trip")
    end
  end
end)
print("dist_window ok")
