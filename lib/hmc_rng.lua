-- SPDX-License-Identifier: MIT
-- hmc_rng: the samplers' private random numbers, so a run is reproducible by
-- its seed whatever else uses math.random. splitmix64 seeds xoshiro256**
-- (Blackman & Vigna); Lua 5.4 integers wrap modulo 2^64 and >> is a logical
-- shift, as the C code needs.
--
--   local rng = require("mplua.hmc_rng").new(seed)
--   rng.uniform()  -- in (0, 1), never 0 or 1
--   rng.normal()   -- standard normal

local M = {}

local function rotl(x, k) return (x << k) | (x >> (64 - k)) end

-- splitmix64's output for seed + k * golden gamma: independent seeds for
-- chains, draws, ... derived from one
function M.derive(seed, k)
  local z = seed + k * 0x9E3779B97F4A7C15
  z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
  z = (z ~ (z >> 27)) * 0x94D049BB133111EB
  return z ~ (z >> 31)
end

function M.new(seed)
  local sm = seed
  local function splitmix()
    sm = sm + 0x9E3779B97F4A7C15
    local z = sm
    z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ~ (z >> 27)) * 0x94D049BB133111EB
    return z ~ (z >> 31)
  end
  local s0, s1, s2, s3 = splitmix(), splitmix(), splitmix(), splitmix()
  local function next64()
    local r = rotl(s1 * 5, 7) * 9
    local t = s1 << 17
    s2 = s2 ~ s0; s3 = s3 ~ s1; s1 = s1 ~ s2; s0 = s0 ~ s3
    s2 = s2 ~ t; s3 = rotl(s3, 45)
    return r
  end
  local rng = {}
  function rng.uniform() return ((next64() >> 11) + 0.5) * 0x1p-53 end
  local spare -- Box-Muller makes normals in pairs
  function rng.normal()
    if spare then local z = spare; spare = nil; return z end
    local r = math.sqrt(-2 * math.log(rng.uniform()))
    local t = 2 * math.pi * rng.uniform()
    spare = r * math.sin(t)
    return r * math.cos(t)
  end
  return rng
end

return M
