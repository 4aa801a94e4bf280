-- ranks: 2 3 4
-- SPDX-License-Identifier: MIT
-- A fault in the middle of a transpose or a halo exchange (one rank raises after the
-- others have sent their blocks, or with a request in flight) aborts the task cleanly
-- everywhere; the next transpose is right (nothing of the aborted one is delivered
-- late); a rank that calls another collective instead is a mismatch, not a hang.
local function body(b, mode)
  local A = mp.layout("f64[x=40@1, y=30]", {balanced = true})
  local B = mp.layout("f64[x=40, y=30@1]", {balanced = true})
  local T = mp.transpose(A, B)
  local a = A:alloc()
  local rg = A:range()
  for i = 1, #a do a[i] = (rg[1][1] - 1 + (i - 1) % rg[1][2]) end
  if mode == "inflight" then
    local req = T:iforward(a)
    if mp.rank == b then error("fault with a transpose in flight") end
    req:wait()
  elseif mode == "before" then
    if mp.rank == b then error("fault before the transpose") end
    T:forward(a)
  elseif mode == "mismatch" then
    if mp.rank == b then mp.barrier() else T:forward(a) end
  elseif mode == "halo" then
    local h = mp.halo(A, 1, {periodic = true})
    local u = A:alloc(1)
    local req = h:iexchange(u)
    if mp.rank == b then error("fault in a halo exchange") end
    req:wait()
  end
  -- a clean run: every element right
  local out = T:forward(a)
  local back = T:back(out)
  for i = 1, #a do assert(back[i] == a[i]) end
  return true
end
package.path = "lib/?.lua;" .. package.path
require("fault_rounds")(body, 8, {"inflight", "before", "mismatch", "halo"})
print("dist_fault ok")
