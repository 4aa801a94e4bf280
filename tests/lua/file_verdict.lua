-- ranks: 2 3 4  quick: 2
-- SPDX-License-Identifier: MIT
-- A file call that fails on one rank only is reported as that rank's fault,
-- with its own reason: the ranks that did their part raise its echo ("rank
-- k of the communicator failed"), which the report gives way to (it named
-- whichever rank raised first). mp.save's rename fails on the rank that
-- renames (the communicator's rank 0, made the last world rank here), for
-- path is a directory; the next task saves fine. Every rank raises at once:
-- a rank that catches its error leaves nobody waiting.
local n = mp.size
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir .. "/taken.npy"))

local function save(path)
  local comm = mp.world:split(0, n - 1 - mp.rank) -- its rank 0 is world rank n - 1
  local lay = mp.layout("f64[x=" .. 4 * n .. "@1]", {nranks = n})
  mp.save(path, mp.array("f64", 4):fill(mp.rank), lay, {comm = comm})
  return true
end

for round = 1, 3 do
  local ok, err = pcall(mp.exec, save, dir .. "/taken.npy")
  err = tostring(err)
  assert(not ok, "the rename's failure was not reported")
  local who = ("^mp%%.exec: rank %d/%d faulted: [^\n]*mp%%.save: %%[rank %d/%d%%] cannot rename '")
              :format(n - 1, n, n - 1, n)
  assert(err:find(who), "round " .. round .. ": " .. err)
  assert(err:find("Is a directory", 1, true), err)
  assert(not err:find("of the communicator failed", 1, true), err)
  assert(err:find("faulted: an echo of another rank's failure", 1, true), err)
  assert(mp.exec(save, dir .. "/free.npy") == true, "the next task failed")
end
-- caught on every rank: each has its error, the failing rank its own
local got = mp.exec(function(path)
  local ok, e = pcall(save, path)
  return mp.gather({ok, tostring(e)})
end, dir .. "/taken.npy")
for r = 0, n - 1 do
  local ok, e = got[r + 1][1], got[r + 1][2]
  local want = r == n - 1 and "cannot rename '" or "rank 0 of the communicator failed (it says why)"
  assert(not ok and e:find(("mp.save: [rank %d/%d] "):format(r, n) .. want, 1, true), e)
end
os.execute("rm -rf " .. dir)
print("file_verdict ok")
