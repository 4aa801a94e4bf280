-- SPDX-License-Identifier: MIT
-- The schedule explorer: run an mplua script under seeds 1..N of the seeded
-- scheduler (MPLUA_SCHEDULE, mpbuiltins/mpi/README.md) and report the seeds
-- whose outcome differs, with the first choice where their schedules diverged.
--
--   mplua --nompi scripts/explore.lua [-n RANKS] [-s SEEDS] [-x] SCRIPT [ARGS...]
--
-- -n: ranks (3), -s: seeds (20), -x: stop at the first seed whose outcome
-- differs from seed 1's.
-- An outcome is what rank 0 printed, the exit status and the first line of
-- the error (the script runs in batch mode, -b). Replay a seed with
-- MPLUA_SCHEDULE=SEED mpiexec -n RANKS mplua SCRIPT. Exit status: 0 when every
-- seed gave the same outcome, 1 when they differ, 2 on a usage error.
local ranks, seeds, stop, i = 3, 20, false, 1
while arg[i] and arg[i]:sub(1, 1) == "-" do
  if arg[i] == "-n" then ranks = tonumber(arg[i + 1]); i = i + 2
  elseif arg[i] == "-s" then seeds = tonumber(arg[i + 1]); i = i + 2
  elseif arg[i] == "-x" then stop = true; i = i + 1
  else break end
end
local script = arg[i]
if not script or not ranks or not seeds or ranks < 1 or seeds < 1 then
  io.stderr:write("usage: mplua --nompi scripts/explore.lua [-n RANKS] [-s SEEDS] [-x] SCRIPT " ..
                  "[ARGS...]\n")
  os.exit(2)
end
local lo = 0
while arg[lo - 1] do lo = lo - 1 end
local mplua = os.getenv("MPLUA") or arg[lo]
local mpiexec = os.getenv("MPIEXEC") or "mpiexec"

local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end
local rest = {}
for k = i + 1, #arg do rest[#rest + 1] = quote(arg[k]) end

local tmp = os.tmpname()
os.remove(tmp)
assert(os.execute("mkdir -p " .. quote(tmp)))

local function slurp(path)
  local f = io.open(path)
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- one run: its outcome as one string
local function run(seed)
  local err = tmp .. "/err." .. seed
  local cmd = ("MPLUA_SCHEDULE=%d MPLUA_SCHEDULE_LOG=%s %s -n %d %s -b %s %s 2>%s"):format(
    seed, quote(tmp .. "/log." .. seed), mpiexec, ranks, quote(mplua), quote(script),
    table.concat(rest, " "), quote(err))
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  local _, _, code = p:close()
  local first = (slurp(err) or ""):match("[^\n]*")
  return ("%sexit %d%s"):format(out, code or -1, first ~= "" and ("\nerror: " .. first) or "")
end

-- every rank's choices under a seed, "rank r: line" in order of rank then time
local function choices(seed)
  local t = {}
  for r = 0, ranks - 1 do
    local s = slurp(("%s/log.%d.%d"):format(tmp, seed, r))
    for line in (s or ""):gmatch("[^\n]+") do t[#t + 1] = {rank = r, line = line} end
  end
  return t
end

local outcomes, order, ran = {}, {}, 0
for seed = 1, seeds do
  local o = run(seed)
  ran = seed
  if not outcomes[o] then
    outcomes[o] = {}
    order[#order + 1] = o
  end
  table.insert(outcomes[o], seed)
  if stop and #order > 1 then break end
end

print(("explore: %s at %d ranks, %d seeds: %d outcome%s"):format(script, ranks, ran, #order,
      #order == 1 and "" or "s"))
for k, o in ipairs(order) do
  print(("outcome %d, seeds %s:"):format(k, table.concat(outcomes[o], " ")))
  for line in o:gmatch("[^\n]+") do print("  " .. line) end
end
if #order > 1 then
  local a = outcomes[order[1]][1]
  for k = 2, #order do
    local b = outcomes[order[k]][1]
    local ca, cb = choices(a), choices(b)
    for j = 1, math.max(#ca, #cb) do
      local x, y = ca[j], cb[j]
      if not x or not y or x.line ~= y.line then
        print(("first divergence, seed %d against seed %d: %s | %s"):format(a, b,
              x and x.line or "(no choice)", y and y.line or "(no choice)"))
        break
      end
    end
  end
end
os.execute("rm -rf " .. quote(tmp))
os.exit(#order == 1 and 0 or 1)
