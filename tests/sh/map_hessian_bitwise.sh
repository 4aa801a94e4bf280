# ranks: 4
# SPDX-License-Identifier: MIT
# Second order and forward mode through mp.mapper are bitwise identical with
# the serial backend (--nompi) and at 1, 2, 3 and N ranks: each job's
# Hessians (ad.hessian, ad.hvp) and directional derivatives (m:jvp) come
# from the same bytes and code on whichever rank owns the job.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"

cat >model.lua <<'LUA'
local J = 11
local xr = {}
for j = 1, J do
  xr[j] = {}
  for i = 1, 6 do xr[j][i] = math.sin(i * j) end
end
local m = mp.mapper(function(phi, th, r)
  local s = phi[1]
  for q = 1, #r do s = s + th[1] * r[q] ^ 2 / (1 + ad.exp(th[2] * r[q] + phi[2])) end
  return {ad.log(1 + s * s), ad.normal_lpdf(r, th[1], ad.exp(phi[2]))}
end, xr)
local function lp(p)
  local th = {}
  for j = 1, J do th[j] = {p[2 + j], p[2 + J + j]} end
  local s = 0
  for j, y in ipairs(m({p[1], p[2]}, th)) do s = s + y[1] * j + y[2] end
  return s
end
local p0 = {}
for i = 1, 2 + 2 * J do p0[i] = 0.2 * math.cos(3 * i) end
local out = {}
local v, g, H = ad.hessian(lp, p0)
out[#out + 1] = ("%a"):format(v)
for i = 1, #p0 do for k = 1, #p0 do out[#out + 1] = ("%a"):format(H[i][k]) end end
print(table.concat(out, " "))
local dir = {}
for i = 1, #p0 do dir[i] = math.sin(i) end
local _, _, hv = ad.hvp(lp, p0, dir)
out = {}
for i = 1, #hv do out[i] = ("%a"):format(hv[i]) end
print(table.concat(out, " "))
local th, dth = {}, {}
for j = 1, J do th[j], dth[j] = {p0[2 + j], p0[2 + J + j]}, {dir[j], -dir[j]} end
local ys, dys = m:jvp({p0[1], p0[2]}, th, {0.5, -0.25}, dth)
out = {}
for j = 1, J do for i = 1, 2 do out[#out + 1] = ("%a %a"):format(ys[j][i], dys[j][i]) end end
print(table.concat(out, " "))
LUA

"$MPLUA" --nompi model.lua >want 2>err || { echo "FAIL: --nompi" >&2; cat err >&2; exit 1; }
[ "$(wc -l <want)" = 3 ] || { echo "FAIL: model.lua printed:" >&2; cat want err >&2; exit 1; }
for n in 1 2 3 "$N"; do
  "$MPIEXEC" -n "$n" "$MPLUA" model.lua >got 2>err || { echo "FAIL: $n ranks" >&2; cat err >&2; exit 1; }
  if ! cmp -s want got; then
    echo "FAIL: $n ranks differ from the serial backend" >&2
    diff want got | head -c 2000 >&2 || true
    exit 1
  fi
done
echo "map_hessian_bitwise ok"
