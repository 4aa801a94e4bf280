-- SPDX-License-Identifier: MIT
-- The 3-D Taylor-Green vortex, pseudo-spectrally: the incompressible Euler (nu = 0) or
-- Navier-Stokes equations in rotational form on the periodic box [0, 2 pi)^3,
--   du/dt = P[u x omega] - nu k^2 u,   omega = curl u,   P: the projection on k . u = 0,
-- the velocity held as Fourier coefficients on a pencil decomposition (mp.fft, r2c: the
-- x coefficients halved, then y and z), the products taken on the grid with the 2/3 rule
-- against aliasing, classical RK4 in time. Prints the kinetic energy at each step (the
-- conserved quantity when nu = 0; it decays by the dissipation otherwise) and the
-- enstrophy (which grows as the vortex stretches), and checks that
-- every rank's block is, to round-off, what the same steps give serially (each rank also
-- runs the whole box alone, on a one-rank communicator).
--   mpiexec -n 4 build/mplua scripts/examples/taylor_green.lua [N=32] [steps=10] [dt=0.01] [nu=0]
local N = tonumber(arg and arg[1]) or 32
local steps = tonumber(arg and arg[2]) or 10
local dt = tonumber(arg and arg[3]) or 0.01
local nu = tonumber(arg and arg[4]) or 0

mp.exec(function(N, steps, dt, nu)
  local I = mp.complex(0, 1)
  -- the solver on a layout of the grid (and the communicator of its ranks)
  local function solver(grid_spec, comm)
    local lay = mp.layout(grid_spec, {balanced = true, nranks = comm.size})
    -- r2c along y, z, x: x, whole in the input, is halved first (no transpose before)
    local plan = mp.fft(lay, {kind = "r2c", dims = {"y", "z", "x"}, comm = comm})
    local spec = plan.output
    local darray = function(l) return mp.darray(l, {comm = comm}) end
    -- wavenumbers, |k|^2 (1 at k = 0, where P does nothing) and the 2/3 rule's mask: real
    -- arrays of the coefficients' layout
    local rspec = spec:with{dtype = "f64"}
    local kx, ky, kz = darray(rspec), darray(rspec), darray(rspec)
    local me = comm.rank
    local rg, sh = spec:range(me), spec:local_shape(me)
    local function wave(g) return g <= N // 2 and g or g - N end
    local i = 0
    for c = 1, sh[3] do
      for b = 1, sh[2] do
        for a = 1, sh[1] do
          i = i + 1
          kx[i] = rg[1][1] - 1 + a - 1             -- 0 .. N/2 (halved)
          ky[i] = wave(rg[2][1] - 1 + b - 1)
          kz[i] = wave(rg[3][1] - 1 + c - 1)
        end
      end
    end
    local k2 = kx * kx + ky * ky + kz * kz
    local kmax = N / 3
    local keep = darray(rspec)
    for j = 1, #keep do
      keep[j] = (math.abs(kx[j]) < kmax and math.abs(ky[j]) < kmax and math.abs(kz[j]) < kmax) and 1 or 0
    end
    local k2safe = k2:copy()
    for j = 1, #k2safe do if k2safe[j] == 0 then k2safe[j] = 1 end end
    local scale = 1 / (N * N * N)

    local function to_grid(c) return plan:backward(c):mul_(scale) end
    -- the right-hand side of du/dt for coefficients (ux, uy, uz)
    local function rhs(ux, uy, uz)
      local u, v, w = to_grid(ux), to_grid(uy), to_grid(uz)
      local ox = to_grid((ky * uz - kz * uy) * I)
      local oy = to_grid((kz * ux - kx * uz) * I)
      local oz = to_grid((kx * uy - ky * ux) * I)
      local nx = plan:forward(v * oz - w * oy) * keep
      local ny = plan:forward(w * ox - u * oz) * keep
      local nz = plan:forward(u * oy - v * ox) * keep
      local kn = (kx * nx + ky * ny + kz * nz) / k2safe
      local damp = k2 * nu
      return nx - kx * kn - damp * ux, ny - ky * kn - damp * uy, nz - kz * kn - damp * uz
    end
    -- the initial field on this rank's block of the grid
    local u, v = darray(lay), darray(lay)
    local grg, gsh = lay:range(me), lay:local_shape(me)
    i = 0
    for c = 1, gsh[3] do
      local z = 2 * math.pi * (grg[3][1] - 1 + c - 1) / N
      for b = 1, gsh[2] do
        local y = 2 * math.pi * (grg[2][1] - 1 + b - 1) / N
        for a = 1, gsh[1] do
          local x = 2 * math.pi * (grg[1][1] - 1 + a - 1) / N
          i = i + 1
          u[i] = math.sin(x) * math.cos(y) * math.cos(z)
          v[i] = -math.cos(x) * math.sin(y) * math.cos(z)
        end
      end
    end
    local U = {plan:forward(u) * keep, plan:forward(v) * keep, plan:forward(darray(lay)) * keep}
    local S = {}
    -- kinetic energy: the mean of |u|^2 / 2 over the grid
    function S.energy()
      local e = 0
      for d = 1, 3 do e = e + to_grid(U[d]):norm() ^ 2 end
      return e * scale / 2
    end
    -- enstrophy: the mean of |omega|^2 / 2 (it grows as the vortex stretches)
    function S.enstrophy()
      local ux, uy, uz = U[1], U[2], U[3]
      local e = to_grid((ky * uz - kz * uy) * I):norm() ^ 2 + to_grid((kz * ux - kx * uz) * I):norm() ^ 2
                + to_grid((kx * uy - ky * ux) * I):norm() ^ 2
      return e * scale / 2
    end
    -- one step of classical RK4
    function S.step()
      local function add(a, c, b) return {a[1] + b[1] * c, a[2] + b[2] * c, a[3] + b[3] * c} end
      local k1 = {rhs(U[1], U[2], U[3])}
      local y2 = add(U, dt / 2, k1)
      local k2_ = {rhs(y2[1], y2[2], y2[3])}
      local y3 = add(U, dt / 2, k2_)
      local k3 = {rhs(y3[1], y3[2], y3[3])}
      local y4 = add(U, dt, k3)
      local k4 = {rhs(y4[1], y4[2], y4[3])}
      for d = 1, 3 do
        U[d] = U[d]:copy():lincomb(1, U[d], dt / 6, k1[d], dt / 3, k2_[d], dt / 3, k3[d], dt / 6, k4[d])
      end
    end
    function S.velocity(d) return to_grid(U[d]) end
    S.plan, S.layout = plan, lay
    return S
  end

  local grid = ("f64[x=%d, y=%d@1, z=%d@2]"):format(N, N, N)
  local par = solver(grid, mp.world)
  local ser = solver(grid, mp.world:split(mp.rank)) -- the whole box on this rank alone
  local e0 = par.energy()
  local lines = {("step %3d  t = %.3f  energy %.15f  (E - E0) / E0 = %9.2e  enstrophy %.12f"):format(
    0, 0, e0, 0, par.enstrophy())}
  for s = 1, steps do
    par.step()
    ser.step()
    local e, es = par.energy(), ser.energy()
    assert(math.abs(e - es) <= 1e-13 * es, "the energy differs from the serial run's")
    lines[#lines + 1] = ("step %3d  t = %.3f  energy %.15f  (E - E0) / E0 = %9.2e  enstrophy %.12f"):format(
      s, s * dt, e, (e - e0) / e0, par.enstrophy())
  end
  -- this rank's block against the serial result
  local worst, big = 0, 0
  local rg = par.layout:range()
  for d = 1, 3 do
    local p, q = par.velocity(d), ser.velocity(d)
    local mine = q:view({rg[1][1], rg[1][2]}, {rg[2][1], rg[2][2]}, {rg[3][1], rg[3][2]})
    worst = math.max(worst, mp.Array.sub(p:block(), mine):norm(math.huge))
    big = math.max(big, q:norm(math.huge))
  end
  worst = mp.allreduce(worst / big, "max")
  if mp.rank == 0 then
    print(("Taylor-Green vortex, %d^3, nu = %g, dt = %g, %d ranks"):format(N, nu, dt, mp.size))
    print(tostring(par.plan))
    for _, l in ipairs(lines) do print(l) end
    print(("max |parallel - serial| / max |u| = %.1e"):format(worst))
  end
  assert(worst <= 1e-12, "the parallel run differs from the serial one")
end, N, steps, dt, nu)
