-- SPDX-License-Identifier: MIT
-- A 2-D heat equation on a Cartesian process grid with halos (explicit Euler, 5-point
-- stencil written with array math, so no loop runs in Lua), once with fixed zero edges
-- and once periodic. Every rank also runs the same steps serially on the whole domain
-- and compares its block: the result is identical, bit for bit, at any number of ranks.
--   mpiexec -n 4 build/mplua scripts/examples/heat2d.lua [nx=64] [ny=48] [steps=200]
local nx, ny, steps = tonumber(arg and arg[1]) or 64, tonumber(arg and arg[2]) or 48,
                      tonumber(arg and arg[3]) or 200
mp.exec(function(nx, ny, steps)
  local r = 0.2 -- diffusion number (stable below 0.25)
  local function step(u, v)
    v:interior(1):lincomb(1 - 4 * r, u:interior(1), r, u:interior(1, -1, 0), r, u:interior(1, 1, 0),
                          r, u:interior(1, 0, -1), r, u:interior(1, 0, 1))
  end
  -- the initial temperature at global (1-based) cell i, j
  local function init(i, j) return math.exp(-((i - nx / 3) ^ 2 + (j - ny / 2) ^ 2) / 30) end
  local self = mp.world:split(mp.rank) -- for the serial runs: a communicator of one rank

  local report = {}
  for _, periodic in ipairs({false, true}) do
    local topo = mp.cart(mp.size, {extents = {nx, ny}, periodic = periodic})
    local lay = topo:layout(string.format("f64[x=%d@1, y=%d@2]", nx, ny), {balanced = true})
    local halo = mp.halo(lay, 1, topo)
    local u, v = lay:alloc(1), lay:alloc(1)
    local rg = lay:range()
    local nxl, nyl = table.unpack(lay:local_shape())
    local inner = u:interior(1)
    for j = 1, nyl do
      for i = 1, nxl do inner:set(i, j, init(rg[1][1] + i - 1, rg[2][1] + j - 1)) end
    end
    -- serially: the whole domain on this rank alone
    local whole = mp.layout(string.format("f64[x=%d, y=%d]", nx, ny))
    local shalo = mp.halo(whole, {1, 1}, {periodic = periodic, comm = self})
    local su, sv = whole:alloc({1, 1}, 0), whole:alloc({1, 1}, 0) -- rank 0 of its one rank
    local sin = su:interior(1)
    for j = 1, ny do for i = 1, nx do sin:set(i, j, init(i, j)) end end

    for _ = 1, steps do
      halo:exchange(u)
      step(u, v)
      u, v = v, u
      shalo:exchange(su)
      step(su, sv)
      su, sv = sv, su
    end
    -- compare this rank's block with the serial result, bitwise
    local mine = u:interior(1)
    local ref = su:interior(1):view({rg[1][1], rg[1][2]}, {rg[2][1], rg[2][2]})
    local diff = mp.Array.sub(mine, ref):norm(math.huge)
    local total = mp.world:allreduce(mine:sum(), "sum")
    local worst = mp.world:allreduce(diff, "max")
    report[#report + 1] = {periodic, tostring(topo), total, worst, tostring(lay)}
    assert(worst == 0, "the parallel result differs from the serial one")
  end
  if mp.rank == 0 then
    local topo = mp.cart(mp.size, {extents = {nx, ny}})
    print(tostring(topo) .. ", neighbours (x-, x+, y-, y+; false: an edge):")
    for q = 0, mp.size - 1 do
      local nb = topo:neighbors(q)
      for k = 1, #nb do nb[k] = tostring(nb[k]) end
      print(string.format("  rank %d at (%s): %s", q, table.concat(topo:coords(q), ","),
                          table.concat(nb, " ")))
    end
    for _, x in ipairs(report) do
      print(string.format("%-9s %-36s %s  heat %.12f  max |parallel - serial| = %g",
                          x[1] and "periodic" or "fixed", x[2], x[5], x[3], x[4]))
    end
  end
end, nx, ny, steps)
