-- SPDX-License-Identifier: MIT
-- The option schedule of mp.exec (compiled in; mpi_sched.c is the
-- scheduler): mp.exec{f, args..., schedule = seed} runs f(args...) on every
-- rank under the seeded scheduler with that seed, as if the task began
-- with mpi.Schedule(seed), and puts the scheduler back as it was after it.
-- Returns the function tasks/ calls to read mp.exec{...}'s options.
local mpi, mp = ...

-- on every rank (it travels as bytecode: no upvalues)
local function scheduled(seed, f, ...)
  local sched = mp.mpi.Schedule
  local prev, from = sched(seed)
  local restore <close> = setmetatable({}, {__close = function() sched(prev, from) end})
  if type(f) == "string" then f = assert(load(f, "=mp.exec")) end
  return f(...)
end

local function bad(fmt, ...)
  error(("bad argument #1 to 'mp.exec' ([rank %d/%d] %s)"):format(mp.rank, mp.size,
        fmt:format(...)), 3)
end

-- mp.exec{f, args..., schedule = seed}: the f and args mp.exec runs
return function(t)
  local f, seed = t[1], nil
  if type(f) ~= "function" and type(f) ~= "string" then
    bad("a function or chunk expected at [1], got %s", type(f))
  end
  for k, v in pairs(t) do
    if k == "schedule" then seed = v
    elseif k ~= "n" and math.type(k) ~= "integer" then
      bad("unknown option '%s' (options: schedule)", tostring(k))
    end
  end
  if seed ~= nil and math.type(seed) ~= "integer" then
    bad("schedule: an integer seed expected, got %s", type(seed))
  end
  local n = t.n or #t
  if seed == nil then return f, table.unpack(t, 2, n) end
  return scheduled, seed, f, table.unpack(t, 2, n)
end
