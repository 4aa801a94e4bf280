# ranks: 4
# SPDX-License-Identifier: MIT
# hmc.sample's chains are bitwise the same with the serial backend
# (--nompi) and at 1, 2 and N ranks (chain c runs on rank (c-1) % size; its
# draws depend only on the seed, its start and logp), and from run to run.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"

cat >chains.lua <<'LUA'
local hmc = require "mplua.hmc"
-- a funnel-ish 3-d density: trajectories of varying length, some divergences
local function logp(x)
  local s = ad.exp(x[1] * 0.5)
  return ad.normal_lpdf(x[1], 0, 1.5) + ad.normal_lpdf(x:slice(2, 3), 0, s)
end
local fit = hmc.sample(function(x) return ad.grad(logp, x) end, {0.1, 0.2, -0.3},
                       {chains = 5, n = 150, warmup = 150, seed = 2024})
for c = 1, fit.chains do
  local st = fit.stats[c]
  for t = 1, fit.n do
    local d = fit.draws[c][t]
    print(("%d %a %a %a %a %a %d %d"):format(c, d[1], d[2], d[3], st.lp[t], st.energy[t],
          st.treedepth[t], st.divergent[t]))
  end
end
LUA

"$MPLUA" --nompi chains.lua >want 2>err || { echo "FAIL: --nompi" >&2; cat err >&2; exit 1; }
[ "$(wc -l <want)" = 750 ] || { echo "FAIL: chains.lua printed $(wc -l <want) lines" >&2; cat err >&2; exit 1; }
for n in 1 2 "$N"; do
  "$MPIEXEC" -n "$n" "$MPLUA" chains.lua >got 2>err || { echo "FAIL: $n ranks" >&2; cat err >&2; exit 1; }
  if ! cmp -s want got; then
    echo "FAIL: $n ranks differ from the serial backend" >&2
    diff want got | head >&2 || true
    exit 1
  fi
done
"$MPIEXEC" -n 2 "$MPLUA" chains.lua >got 2>err && cmp -s want got || { echo "FAIL: a second run differs" >&2; exit 1; }
echo "chains_bitwise ok"
