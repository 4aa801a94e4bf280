-- ranks: 2 3 4  quick: 2
-- SPDX-License-Identifier: MIT
-- Messages of 1 MiB and more wait for a step of Lua's collector before their
-- buffer is chosen, so that the buffer of a message whose owner is garbage
-- is reused (chan/arrive.c). Whatever the receiver still holds must keep its
-- bytes: arrays, views into them and long strings, received one after
-- another from several senders at once, some kept and some dropped, with a
-- small heap and with one far larger than the messages.
package.path = "lib/?.lua;" .. package.path
mp.require("xfer")

local function run(big_heap)
  local X = require("xfer")
  local me, n = mp.rank, mp.size
  local ballast = {}
  if big_heap then -- tens of MB of Lua objects: the collections are steps
    for i = 1, 300000 do ballast[i] = {i, tostring(i), {i}} end
  end
  local SIZES = {1048000, 1048576, 2097160, 3 << 20, 1 << 20}
  local function gen(from, k)
    local size = SIZES[k % #SIZES + 1]
    if k % 3 == 2 then return X.gen("str", size, X.seed(from, k, 7)) end
    return X.array(k % 2 == 0 and "f64" or "u8", size, X.seed(from, k, 7))
  end
  local K = 10
  if me > 0 then
    for k = 1, K do mp.send(0, k, gen(me, k)) end
    return 0
  end
  local kept = {}
  for i = 1, K * (n - 1) do
    local src, k, v = mp.recv()
    if i % 2 == 0 then
      kept[#kept + 1] = {src = src, k = k, v = v,
                         view = type(v) ~= "string" and v:view({2, 100}) or nil}
    else -- checked now, then garbage
      X.check(gen(src, k), v, ("message %d of rank %d"):format(k, src))
    end
    v = nil
    if i % 5 == 0 then collectgarbage() end
  end
  for _, e in ipairs(kept) do -- still intact after everything received since
    local what = ("kept message %d of rank %d"):format(e.k, e.src)
    local want = gen(e.src, e.k)
    X.check(want, e.v, what)
    if e.view then X.check(want:view({2, 100}), e.view, what .. " (a view)") end
  end
  return #kept, #ballast
end

for _, big in ipairs({false, true}) do
  local nkept, nb = mp.exec(run, big)
  assert(nkept == 10 * (mp.size - 1) // 2, "kept " .. tostring(nkept))
  assert(nb == (big and 300000 or 0))
end
print("ok")
