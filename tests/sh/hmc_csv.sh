# ranks: nompi 2
# SPDX-License-Identifier: MIT
# hmc.write_csv: the fit in CmdStan's layout, read back by a reader that
# follows cmdstanpy's and ArviZ's rules (tests/sh/lib/stancsv.py): the
# configuration, the columns (sampler parameters, theta.1, L.2.1, then the
# generated quantities), the warmup draws, the adaptation (step size, the
# diagonal or dense inverse metric), the draws, every value equal to the
# fit's at 18 significant digits; a single chain, a dense metric, thinning,
# fixed_param; generated quantities the same at 1 and N ranks.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
READER="$(dirname "$0")/lib/stancsv.py"
[ -f "$READER" ] || READER="$MPLUA_TEST_DIR/sh/lib/stancsv.py"

cat >csv.lua <<'LUA'
local hmc = require "mplua.hmc"
local params = require "mplua.params"
local m = params{{"mu"}, {"sigma", lower = 0}, {"L", 2, "cholesky_factor_corr"}, {"theta", 2}}
local y = {0.3, 1.2, -0.4, 0.9, 1.6}
local function logp(x)
  local p, lj = m:unpack(x)
  return lj + ad.normal_lpdf(y, p.mu, p.sigma) + ad.normal_lpdf(p.mu, 0, 5) + ad.lognormal_lpdf(p.sigma, 0, 1)
    + ad.lkj_corr_cholesky_lpdf(p.L, 2) + ad.normal_lpdf(p.theta, 0, 1)
end
local function gq(x, c, t)
  local p = m:unpack(x)
  return {y_rep = ad.normal_rng({p.mu, p.mu, p.mu}, p.sigma), mu2 = p.mu * p.mu}
end
local fit = hmc.sample(function(x) return ad.grad(logp, x) end, m:init(3),
                       {chains = 2, num_samples = 60, num_warmup = 60, thin = 2, save_warmup = true, seed = 11,
                        generated_quantities = gq, model = "csv_test"})
fit = m:constrain_fit(fit)
local paths = hmc.write_csv(fit, "out.csv", {sig_figs = 18})
-- what the reader must find: for each file, lines "key value..."
local w = io.open("want.txt", "w")
for c, path in ipairs(paths) do
  w:write(("file %s\n"):format(path))
  w:write(("names %s\n"):format(table.concat({"lp__", "accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__",
    "divergent__", "energy__", table.concat(fit.names, "|"), table.concat(fit.generated_names, "|")}, "|")))
  w:write(("counts %d %d\n"):format(#fit.warmup_draws[c], #fit.draws[c]))
  w:write(("step %.17g\n"):format(fit.info[c].step))
  w:write(("metric %s\n"):format(table.concat((function() local t = {} for i, v in ipairs(fit.info[c].inv_metric) do t[i] = ("%.17g"):format(v) end return t end)(), " ")))
  for _, t in ipairs{1, #fit.draws[c]} do
    local row = {fit.stats[c].lp[t], fit.stats[c].accept_stat[t], fit.stats[c].stepsize[t], fit.stats[c].treedepth[t],
                 fit.stats[c].n_leapfrog[t], fit.stats[c].divergent[t], fit.stats[c].energy[t]}
    for _, v in ipairs(fit.draws[c][t]) do row[#row + 1] = v end
    for _, v in ipairs(fit.generated[c][t]) do row[#row + 1] = v end
    for i, v in ipairs(row) do row[i] = ("%.17g"):format(v) end
    w:write(("draw %d %s\n"):format(t, table.concat(row, " ")))
  end
  local wd = fit.warmup_draws[c][1]
  w:write(("warmup1 %.17g %.17g\n"):format(wd[1], fit.warmup_generated[c][1][1]))
end
-- a single chain with a dense metric, and fixed_param
local d, info = hmc.sample(function(x) return ad.grad(logp, x) end, m:init(4),
                           {num_samples = 30, num_warmup = 40, metric = "dense_e", seed = 5})
hmc.write_csv(d, info, "dense.csv", {sig_figs = 18})
w:write(("dense %d %.17g %.17g\n"):format(#d, info.inv_metric[1][2], d[30][1]))
local f, fi = hmc.sample(function(x) return ad.grad(logp, x) end, m:init(4),
                         {algorithm = "fixed_param", num_samples = 5, generated_quantities = gq})
hmc.write_csv(f, fi, "fixed.csv")
w:write(("fixed %d\n"):format(#f))
w:close()
LUA

cat >check.py <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import stancsv
want = [l.split() for l in open('want.txt')]
cur = None
for w in want:
    if w[0] == 'file':
        cur = stancsv.read(w[1])
        cfg = cur['config']
        assert cfg['model'] == 'csv_test' and cfg['metric'] == 'diag_e' and cfg['thin'] == 2, cfg
        assert cfg['save_warmup'] == 1 and cfg['num_samples'] == 60 and cfg['num_warmup'] == 60, cfg
        assert cfg['max_depth'] == 10 and cfg['algorithm'] == 'hmc' and cfg['engine'] == 'nuts', cfg
        assert len(cur['timing']) == 3, cur['timing']
    elif w[0] == 'names':
        want_names = w[1].split('|')
        assert cur['names'] == want_names, (cur['names'], want_names)
        assert cur['names'][7] == 'mu' and cur['names'][9] == 'L[1,1]' and cur['names'][10] == 'L[2,1]', cur['names']
    elif w[0] == 'counts':
        assert (len(cur['warmup']), len(cur['draws'])) == (int(w[1]), int(w[2])) == (30, 30), (len(cur['warmup']), len(cur['draws']))
    elif w[0] == 'step':
        assert cur['step'] == float(w[1]), (cur['step'], w[1])
    elif w[0] == 'metric':
        assert cur['metric'] == [float(x) for x in w[1:]], (cur['metric'], w[1:])
    elif w[0] == 'draw':
        t = int(w[1]) - 1
        got, exp = cur['draws'][t], [float(x) for x in w[2:]]
        assert got == exp, (t, got, exp)
    elif w[0] == 'warmup1':
        row = cur['warmup'][0]
        assert row[7] == float(w[1]) and row[cur['names'].index('mu2')] == float(w[2]), (row, w)
    elif w[0] == 'dense':
        r = stancsv.read('dense.csv')
        assert r['config']['metric'] == 'dense_e' and 'save_warmup' in r['config'] and r['warmup'] == []
        assert len(r['metric']) == len(r['metric'][0]) == 5 and r['metric'][0][1] == float(w[2]), r['metric']
        assert len(r['draws']) == int(w[1]) and r['draws'][29][7] == float(w[3])
    elif w[0] == 'fixed':
        r = stancsv.read('fixed.csv')
        assert r['config']['algorithm'] == 'fixed_param' and r['names'][:2] == ['lp__', 'accept_stat__']
        assert r['names'][2] == 'x[1]' and 'y_rep[3]' in r['names'] and len(r['draws']) == int(w[1]), r['names']
        assert all(d[0] == 0 for d in r['draws'])
print('ok')
PY

run csv.lua >out 2>err || { echo "FAIL ($N): csv.lua" >&2; cat err >&2; exit 1; }
"$PY" check.py "$(cd "$(dirname "$READER")" && pwd)" >pyout 2>&1 || { echo "FAIL ($N): the reader" >&2; cat pyout >&2; exit 1; }
# the generated quantities do not depend on the ranks
grep -h '^draw' want.txt >mine
if [ "$N" != nompi ]; then
  "$MPLUA" --nompi csv.lua >/dev/null 2>err || { cat err >&2; exit 1; }
  grep -h '^draw' want.txt >serial
  cmp -s mine serial || { echo "FAIL ($N): draws and generated quantities differ from the serial run" >&2; diff mine serial | head >&2; exit 1; }
fi
echo "hmc_csv ok"
