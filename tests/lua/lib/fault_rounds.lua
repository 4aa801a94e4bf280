-- SPDX-License-Identifier: MIT
-- Shared by the tests that fault a collective exchange on purpose
-- (dist_fault.lua, fft_errors.lua): run body(bad, mode) as a task for each
-- round and mode, with rank `round % size` faulting; the task must fail with
-- the fault (or "mismatched collectives" for the mode "mismatch"), and the
-- next task, body(-1, "none"), must run clean and return true.
return function(body, rounds, modes)
  for k = 1, rounds do
    for _, mode in ipairs(modes) do
      local ok, err = pcall(mp.exec, body, k % mp.size, mode)
      assert(not ok, mode .. ": the fault was not reported")
      local want = mode == "mismatch" and "mismatched collectives" or "fault"
      assert(tostring(err):find(want, 1, true), mode .. ": " .. tostring(err))
      assert(mp.exec(body, -1, "none") == true)
    end
  end
end
