-- ranks: 1 2  quick: 1
-- SPDX-License-Identifier: MIT
-- Every function of mp and mp.mpi names itself and the rank when its first
-- argument is bad, however it is called (Lua's own checks name a function by
-- the local or field it was called through, or '?'): the report says
-- "bad argument #1 to 'mp.mpi.File_open' ([rank r/n] ...)" or
-- "mp.mpi.File_open: [rank r/n] ...". A thread is a bad first argument to
-- all of them; those that take no argument ignore it and must not fail.
local takes_none = {mp = {wtime = true, stats = true, disconnect = true}, mpi = {}}
-- functions whose first argument is any value: at one rank a thread need
-- not travel, so nothing is wrong with it there
local any_value = {
  mp = {allgather = true, bcast = true, gather = true, handin = true},
  mpi = {Allgather = true, Bcast = true, Gather = true, Iallgather = true, Ibcast = true,
         Igather = true},
}
local skip = {
  mp = {abort = "its message is the user's", serve = "the worker loop",
        require = "a module name, loaded as Lua's require does"},
  mpi = {},
}
local say = os.getenv("MPLUA_ARG_NAMES_SAY")

local function call(lib, name)
  local t = lib == "mp" and mp or mp.mpi
  local fn = t[name]
  fn(coroutine.create(function() end)) -- called through a local: Lua would say 'fn'
  return true
end

local checked, failed = 0, {}
for _, lib in ipairs({"mp", "mpi"}) do
  local t = lib == "mp" and mp or mp.mpi
  local names = {}
  for name, v in pairs(t) do
    if type(v) == "function" and name:sub(1, 1) ~= "_" and not skip[lib][name] then
      names[#names + 1] = name
    end
  end
  table.sort(names)
  for _, name in ipairs(names) do
    local full = (lib == "mp" and "mp." or "mp.mpi.") .. name
    if say then io.stderr:write(full, "\n") end
    local ok, err = pcall(mp.exec, call, lib, name)
    err = tostring(err)
    if takes_none[lib][name] then
      if not ok then failed[#failed + 1] = full .. " failed: " .. err end
    elseif ok and any_value[lib][name] and mp.size == 1 then
      -- the value did not travel
    elseif ok then
      failed[#failed + 1] = full .. " took a thread as its first argument"
    elseif not (err:find("'" .. full .. "' ([rank ", 1, true) or err:find(full .. ": [rank ", 1, true)) then
      failed[#failed + 1] = full .. ": " .. err:match("^[^\n]*")
    end
    checked = checked + 1
  end
end
-- File_open's path, however it is called (in a pcall too: its own check)
for _, how in ipairs({"field", "local", "pcall"}) do
  local ok, err = pcall(mp.exec, function(how)
    local File_open = mp.mpi.File_open
    if how == "field" then return mp.mpi.File_open(nil, {}, "w") end
    if how == "local" then return File_open(nil, {}, "w") end
    local _, e = pcall(File_open, nil, {}, "w")
    error(e, 0)
  end, how)
  local want = "bad argument #2 to 'mp.mpi.File_open' ([rank "
  if ok or not tostring(err):find(want, 1, true) then
    failed[#failed + 1] = "mp.mpi.File_open's path (" .. how .. "): " .. tostring(err)
  end
end
assert(checked > 150, checked)
assert(#failed == 0, #failed .. " of " .. checked .. " do not name themselves:\n" .. table.concat(failed, "\n"))
print("ok", checked)
