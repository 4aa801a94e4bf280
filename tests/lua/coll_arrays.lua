-- ranks: 1 2 3 4
-- SPDX-License-Identifier: MIT
-- Element-wise reductions of typed arrays of every dtype and op, 0 elements
-- to several MiB, on mp.world and on a split communicator, against serial.
mp.exec(function()
  local ops = {"sum", "prod", "min", "max", "land", "lor", "band", "bor"}
  local ref = {
    sum = function(a, b) return a + b end, prod = function(a, b) return a * b end,
    min = math.min, max = math.max,
    land = function(a, b) return (a ~= 0 and b ~= 0) and 1 or 0 end,
    lor = function(a, b) return (a ~= 0 or b ~= 0) and 1 or 0 end,
    band = function(a, b) return a & b end, bor = function(a, b) return a | b end,
  }
  local function val(r, i) return (r * 7 + i) % 5 end
  for _, c in ipairs({mp.world, mp.world:split(mp.rank < 2 and 0 or 1)}) do
    for _, dt in ipairs({"f64", "f32", "i64", "i32", "u8"}) do
      for _, len in ipairs({0, 1, 5, 3000, 70000}) do
        local a = mp.array(dt, len)
        for i = 1, len do a[i] = val(c.rank, i) end
        for _, op in ipairs(ops) do
          local float = dt == "f64" or dt == "f32"
          if not (float and (op == "band" or op == "bor")) and not (dt == "u8" and op == "prod") then
            local r = c:allreduce(a, op)
            assert(#r == len and r ~= a)
            for i = 1, len, (len > 100 and 97 or 1) do
              local w = val(0, i)
              for q = 1, c.size - 1 do w = ref[op](w, val(q, i)) end
              assert(r[i] == w, string.format("%s %s len %d i %d: %s ~= %s", dt, op, len, i, r[i], w))
            end
            local rr = c:reduce(a, op, c.size - 1)
            if c.rank == c.size - 1 and len > 0 then assert(rr[len] == r[len]) end
          end
        end
        local s = c:scan(a, "sum")
        if len > 0 then
          local w = 0
          for q = 0, c.rank do w = w + val(q, len) end
          assert(s[len] == w)
        end
      end
    end
    -- several MiB, every element checked by a sum
    local big = mp.array("f64", 1 << 20)
    big:fill(c.rank + 1)
    local r = c:allreduce(big, "sum")
    assert(r:sum() == (1 << 20) * c.size * (c.size + 1) / 2)
    local b = c:bcast(c.rank == 0 and big or nil)
    assert(#b == 1 << 20 and b[1] == 1)
    local g = c:allgather(big)
    for q = 1, c.size do assert(g[q][7] == q) end
  end
  -- band on floats is a clear error, raised on every rank
  local ok, err = pcall(mp.allreduce, mp.array("f64", 3), "band")
  assert(not ok and tostring(err):find("not defined on f64"), tostring(err))
end)
print("coll_arrays ok")
