-- ranks: 2 3 4
-- SPDX-License-Identifier: MIT
-- mp.fft's errors (bad options, layouts, blocks and requests, and no FFT plug-in) name
-- the function, the argument and the rank; a fault in the middle of an FFT (a rank
-- raises with a request in flight, or before the others' transposes, or calls another
-- collective) aborts the task cleanly everywhere, and the next FFT is right.
local function fails(pattern, f, ...)
  local ok, msg = pcall(f, ...)
  assert(not ok, "expected an error matching " .. pattern)
  assert(tostring(msg):find(pattern, 1, true), "wrong message: " .. tostring(msg))
end

mp.exec(function(fails)
  local n = mp.size
  -- no plug-in: a clear error (the module is found through package.preload first)
  package.preload["mplua.fftw"] = function() error("not built here") end
  local reg = debug.getregistry()
  local saved = reg["mplua.fft_backend"]
  reg["mplua.fft_backend"] = nil
  -- what the user of each install does about it, then why require failed
  fails("mp.fft: [rank " .. mp.rank .. "/" .. n .. "] no local FFT library: mp.fft needs its "
        .. "FFTW plug-in, the module mplua.fftw (Debian packages: install lua-mplua-fftw; a rock "
        .. "or a source build: install FFTW 3's headers, libfftw3-dev, and build again), which "
        .. "did not load: ", mp.fft, mp.layout("c128[x=4, y=4@1]", {balanced = true}))
  fails("not built here", mp.fft, mp.layout("c128[x=4, y=4@1]", {balanced = true}))
  package.preload["mplua.fftw"] = nil
  reg["mplua.fft_backend"] = saved
  local lay = mp.layout("c128[x=6, y=4@1, z=5]", {balanced = true})
  fails("bad argument #1 to 'mp.fft' ([rank", mp.fft, "c128[x=4]")
  fails("kind must be \"c2c\" or \"r2c\", got c2r", mp.fft, lay, {kind = "c2r"})
  fails("an r2c transform takes a real layout (f64 or f32), got c128", mp.fft, lay, {kind = "r2c"})
  fails("a c2c transform takes a complex layout (c128 or c64), got f64", mp.fft,
        mp.layout("f64[x=4, y=4@1]", {balanced = true}))
  fails("dims: no dimension 'w' in the layout", mp.fft, lay, {dims = {"x", "w"}})
  fails("'x': the dimensions to transform are distinct", mp.fft, lay, {dims = {"x", 1}})
  fails("effort must be", mp.fft, lay, {effort = "fast"})
  fails("half: no dimension 'q'", mp.fft, mp.layout("f64[x=4, y=4@1]", {balanced = true}),
        {kind = "r2c", half = "q"})
  fails("no dimension can take over the split", mp.fft, mp.layout("c128[x=8@1]", {balanced = true}))
  fails("the communicator has 1 ranks, the layout " .. n, mp.fft, lay,
        {comm = mp.world:split(mp.rank)})
  local p = mp.fft(lay)
  fails("rank " .. mp.rank .. "'s block of", p.forward, p, mp.array("c128", 3))
  fails("bad argument #2 to 'mp.FFT.forward'", p.forward, p, lay:with{dtype = "c64"}:alloc())
  local a = lay:alloc()
  fails("bad argument #3 to 'mp.FFT.forward' ([rank " .. mp.rank .. "/" .. n ..
        "] rank " .. mp.rank .. "'s block of", p.forward, p, a, a)
  fails("FFT plan expected", p.forward, {}, a)
  local r = p:iforward(a)
  assert(tostring(r):find("mp.FFTRequest (forward", 1, true))
  r:wait()
  fails("request already completed", r.wait, r)
  fails("request already completed", r.test, r)
  -- the plan reports itself
  assert(tostring(p):find("mp.FFT c2c c128[x=6, y=4@1, z=5] over " .. n .. " balanced -> " ..
                          "c128[x=6, y=4, z=5@1]", 1, true), tostring(p))
  local info = p:info()
  assert(info.kind == "c2c" and #info.dims == 3 and info.library:find("FFTW"))
  assert(#info.transposes == 1 and info.messages == info.transposes[1].messages)
  assert(p.input == lay and p.output.spec:find("z=5@1", 1, true))
  return true
end, fails)

-- a request from an earlier task
local held = {}
mp.exec(function(held)
  local lay = mp.layout("c128[x=4, y=6@1]", {balanced = true})
  _G.kept = mp.fft(lay):iforward(lay:alloc())
  _G.kept:wait()
end, held)
mp.exec(function()
  local ok, e = pcall(_G.kept.wait, _G.kept)
  assert(not ok and e:find("request from an earlier task", 1, true), e)
end)

-- faults in the middle of an FFT
local function body(b, mode)
  local lay = mp.layout("c128[x=10, y=9@1, z=8]", {balanced = true})
  local p = mp.fft(lay)
  local a = lay:alloc()
  local rg = lay:range()
  for i = 1, #a do a[i] = mp.complex(i + rg[2][1], -i) end
  if mode == "inflight" then
    local req = p:iforward(a)
    if mp.rank == b then error("fault with an FFT in flight") end
    req:wait()
  elseif mode == "before" then
    if mp.rank == b then error("fault before the FFT") end
    p:forward(a)
  elseif mode == "mismatch" then
    if mp.rank == b then mp.barrier() else p:forward(a) end
  elseif mode == "backward" then
    local req = p:ibackward(p.output:alloc())
    if mp.rank == b then error("fault in a backward FFT") end
    req:wait()
  end
  -- a clean run: the round trip is N times the input
  local back = p:backward(p:forward(a))
  for i = 1, #a do
    local z, w = back[i], a[i]
    assert(math.abs(z.re - 720 * w.re) < 1e-9 and math.abs(z.im - 720 * w.im) < 1e-9)
  end
  return true
end
package.path = "lib/?.lua;" .. package.path
require("fault_rounds")(body, 3, {"inflight", "before", "mismatch", "backward"})
print("fft_errors ok")
