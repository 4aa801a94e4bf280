-- ranks: 1 2 3 4
-- SPDX-License-Identifier: MIT
-- A transpose whose output shares the input's memory (the input itself, a
-- reshape of it, a window of one buffer overlapping the input's) gives the
-- elements a fresh output gets: forward and back, blocking and not, at the
-- issue's 3x4 -> 4x3 and on layouts whose data moves between ranks.
local total = mp.exec(function()
  local specs = {
    {"f64[x=3, y=4@1]", "f64[y=4@1, x=3]"},         -- the issue's (1 rank): a:reshape(4, 3)
    {"f64[x=12@1, y=5]", "f64[y=5, x=12@1]"},       -- memory order swapped, same split
    {"f64[x=12@1, y=12]", "f64[y=12@1, x=12]"},     -- the split moves: data travels
    {"i32[x=12@1, y=4, z=3]", "i32[z=3, y=4, x=12@1]"},
    {"u8[x=12@1, y=12]", "u8[x=12, y=12@1]"},
  }
  local function shape(l) return table.unpack(l:local_shape()) end
  local function fill(a, seed)
    for i = 1, #a do a[i] = (seed * 131 + i * 7) % 251 end
    return a
  end
  local function same(x, y, what)
    assert(#x == #y, what .. ": sizes")
    for i = 1, #x do
      if x[i] ~= y[i] then error(("%s: element %d is %s, not %s"):format(what, i, x[i], y[i])) end
    end
  end
  local cases = 0
  for _, s in ipairs(specs) do
    local A, B = mp.layout(s[1], {balanced = true}), mp.layout(s[2], {balanced = true})
    local p = mp.transpose(A, B)
    local a0 = fill(A:alloc(), mp.rank + 1)
    local want = p:forward(a0:copy())
    local back = p:back(want:copy())
    same(back, a0, s[1] .. " fresh round trip")
    -- every rank applies the same plans: the cases that fit on all of them
    if mp.allreduce(#want == #a0 and 1 or 0, "min") == 1 then
      -- the output is a reshape of the input (the issue), blocking and not
      for _, nb in ipairs({false, true}) do
        local a = a0:copy()
        local out = a:reshape(shape(B))
        if nb then p:iforward(a, out):wait() else p:forward(a, out) end
        same(out, want, s[1] .. " -> reshape" .. (nb and " (iforward)" or ""))
        local again = out:reshape(shape(A))
        if nb then p:iback(out, again):wait() else p:back(out, again) end
        same(again, a0, s[2] .. " <- reshape" .. (nb and " (iback)" or ""))
        cases = cases + 2
      end
      -- the output is the input itself (equal block shapes)
      local sa, sb = A:local_shape(), B:local_shape()
      local eq = #sa == #sb
      for k = 1, #sa do eq = eq and sa[k] == sb[k] end
      if mp.allreduce(eq and 1 or 0, "min") == 1 then
        local a = a0:copy()
        p:forward(a, a)
        same(a, want, s[1] .. " -> itself")
        cases = cases + 1
      end
      -- windows of one buffer, the output shifted a third of the way on
      local n = #a0
      for _, shift in ipairs({0, n // 3, -(n // 3)}) do
        local buf = mp.array(a0.dtype, 2 * n)
        local lo = shift < 0 and 1 - shift or 1
        local a = buf:view({lo, lo + n - 1}):reshape(shape(A))
        a:copy_from(a0) -- the input's values, in the buffer
        local out = buf:view({lo + shift, lo + shift + n - 1}):reshape(shape(B))
        p:forward(a, out)
        same(out, want, s[1] .. " -> window shifted " .. shift)
        cases = cases + 1
      end
    end
  end
  return mp.handin(cases)
end)
assert(total >= 7 * mp.size, total) -- the issue's case at least, on every rank
print("dist_alias ok", mp.size, total)
