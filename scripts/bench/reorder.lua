-- SPDX-License-Identifier: MIT
-- mp.reorder's cost: a P-rank 2-D grid (P = side x side) mapped onto nodes that the
-- identity deals round robin, medians of interleaved rounds per size, with the bytes
-- crossing nodes before and after. No MPI baseline: MPICH's `reorder` flag does
-- nothing (DESIGN.md section 8); tests/lua/dist_reorder.lua checks the results.
--   build/mplua --nompi scripts/bench/reorder.lua [rounds=5]
package.path = "scripts/bench/?.lua;" .. package.path
local C = require("common")
local rounds = tonumber(arg and arg[1]) or 5
local cases, info = {}, {}
for _, size in ipairs({{16, 4}, {32, 8}, {64, 16}}) do
  local side, nnodes = size[1], size[2]
  local name = ("%dx%d on %d nodes"):format(side, side, nnodes)
  local grid, nodes = mp.cart({side, side}), {}
  for p = 0, side * side - 1 do nodes[p + 1] = p % nnodes end
  cases[#cases + 1] = {name, function()
    local t = os.clock()
    local r = mp.reorder(grid, {nodes = nodes})
    local secs = os.clock() - t
    info[name] = ("%d -> %d bytes crossing"):format(r.before.cross_node, r.after.cross_node)
    return secs
  end}
end
local med = C.interleave(rounds, cases)
for _, c in ipairs(cases) do
  print(("mp.reorder %-20s %8.3f s (median of %d, CPU time)  %s"):format(c[1], med[c[1]], rounds,
                                                                           info[c[1]]))
end
