-- Shared helpers of the benchmark scripts: medians of interleaved rounds.
local M = {}

function M.median(t)
  local s = {}
  for i, v in ipairs(t) do s[i] = v end
  table.sort(s)
  local n = #s
  if n == 0 then return 0 / 0 end
  if n % 2 == 1 then return s[(n + 1) // 2] end
  return (s[n // 2] + s[n // 2 + 1]) / 2
end

-- Run each named case once per round, cases interleaved, `rounds` rounds;
-- returns the medians by name.
function M.interleave(rounds, cases)
  local got = {}
  for _, c in ipairs(cases) do got[c[1]] = {} end
  for _ = 1, rounds do
    for _, c in ipairs(cases) do table.insert(got[c[1]], c[2]()) end
  end
  local med = {}
  for k, v in pairs(got) do med[k] = M.median(v) end
  return med
end

function M.us(x) return string.format("%.3f us", x * 1e6) end

return M
