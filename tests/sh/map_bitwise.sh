# ranks: 4
# SPDX-License-Identifier: MIT
# mp.mapper's values and gradients are bitwise identical with the serial
# backend (--nompi), at 1, 2, 3 and N ranks, and from one run to the next:
# every rank evaluates a job from the same bytes with the same code.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"

cat >model.lua <<'LUA'
local J = 13
local xr, xi = {}, {}
for j = 1, J do
  xr[j], xi[j] = {}, {j % 4 + 1}
  for i = 1, 7 do xr[j][i] = math.sin(i * j) end
end
-- a job: a small nonlinear regression with a ragged output
local m = mp.mapper(function(phi, th, r, i)
  local y = {}
  for k = 1, i[1] do
    local s = phi[1]
    for q = 1, #r do s = s + th[1] * r[q] ^ k / (1 + ad.exp(th[2] * r[q])) end
    y[k] = ad.log(1 + s * s) * phi[2]
  end
  return y
end, xr, xi)
local function lp(p)
  local th = {}
  for j = 1, J do th[j] = {p[3] + 0.1 * j, p[4] * j} end
  local s = 0
  for j, y in ipairs(m({p[1], p[2]}, th)) do
    for k = 1, #y do s = s + y[k] * (k + j) end
  end
  return s
end
for rep = 1, 2 do
  local v, g = ad.grad(lp, {0.3, 1.7, -0.4, 0.05})
  local out = {("%a"):format(v)}
  for i = 1, #g do out[#out + 1] = ("%a"):format(g[i]) end
  print(table.concat(out, " "))
end
local y = m({0.3, 1.7}, (function() local t = {} for j = 1, J do t[j] = {0.2, -0.1 * j} end return t end)())
local out = {}
for j = 1, J do for k = 1, #y[j] do out[#out + 1] = ("%a"):format(y[j][k]) end end
print(table.concat(out, " "))
LUA

"$MPLUA" --nompi model.lua >want
[ "$(wc -l <want)" = 3 ] || { echo "FAIL: model.lua printed:" >&2; cat want >&2; exit 1; }
sed -n 1p want >first
sed -n 2p want | cmp -s - first || { echo "FAIL: repeated gradient differs (serial)" >&2; cat want >&2; exit 1; }
for n in 1 2 3 "$N"; do
  for rep in 1 2; do
    "$MPIEXEC" -n "$n" "$MPLUA" model.lua >got 2>err || { echo "FAIL: $n ranks" >&2; cat err >&2; exit 1; }
    if ! cmp -s want got; then
      echo "FAIL: $n ranks (run $rep) differ from the serial backend" >&2
      diff want got >&2 || true
      exit 1
    fi
  done
done
echo "map_bitwise ok"
