# ranks: 4
# SPDX-License-Identifier: MIT
# The example notebook (scripts/examples/tour.ipynb) run by Debian's
# `jupyter nbconvert --to notebook --execute` on the mplua kernel at N ranks,
# and its output cells checked: the ring, every rank's line, pi, the fault's
# report (and the task after it), the pool's progress display, the trace's
# timeline and matrix, the layout's and topology's SVG, the array, the
# table, the model's mode and mp.display's HTML.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
export MPLUA_LAUNCHER="$MPIEXEC -n"
export JUPYTER_PATH="$tmp/pfx/share/jupyter" JUPYTER_DATA_DIR="$tmp/data"
export JUPYTER_RUNTIME_DIR="$tmp/runtime" JUPYTER_CONFIG_DIR="$tmp/config" IPYTHONDIR="$tmp/ipython"
src=$MPLUA_TEST_DIR/../scripts/examples
"$MPLUA" --install-kernel --prefix "$tmp/pfx" -n "$N" --name "mplua-4" >/dev/null
cp "$src/tour.ipynb" "$src/ring.lua" .
/usr/bin/jupyter-nbconvert --to notebook --execute --ExecutePreprocessor.timeout=600 \
  tour.ipynb --output out.ipynb >log 2>&1 || { cat log >&2; echo "FAIL ($N): nbconvert" >&2; exit 1; }
/usr/bin/python3 - "$N" <<'PY'
import json, sys
n = int(sys.argv[1])
nb = json.load(open("out.ipynb"))
cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
def text(x): return "".join(x) if isinstance(x, list) else x
def outs(i, kind=None):
    return [o for o in cells[i]["outputs"] if kind is None or o["output_type"] == kind]
def plain(i, kind="execute_result"):
    return [text(o["data"]["text/plain"]) for o in outs(i, kind)]
def stream(i): return "".join(text(o["text"]) for o in outs(i, "stream"))
def check(cond, what):
    if not cond:
        print("FAIL (%d): %s" % (n, what), file=sys.stderr)
        sys.exit(1)
check(plain(0) == ["%d\t0" % n], "mp.size: %r" % outs(0))
check("ring of %d: 0 -> 1 -> 2 -> 3 -> 0" % n in stream(1) and plain(1) == [str(n)],
      "ring: %r" % outs(1))
check(sorted(stream(2).splitlines()) == ["hello from rank %d of %d" % (r, n) for r in range(n)],
      "hello: %r" % stream(2))
check(plain(3) == ["3.1415926535899\ttrue"], "pi: %r" % outs(3))
err = outs(4, "error")
check(err and err[0]["ename"] == "TaskError" and "boom on rank 2" in err[0]["evalue"] and
      "where the others were:" in "\n".join(err[0]["traceback"]), "fault: %r" % outs(4))
check(plain(5) == [str(n)], "after the fault: %r" % outs(5))
prog = outs(6, "display_data")
check(prog and "mp.pool:" in text(prog[0]["data"]["text/plain"]) and
      "<progress" in text(prog[0]["data"]["text/html"]), "progress: %r" % outs(6))
check(plain(6) == [str(sum(t * t for t in range(1, 121)))], "pool: %r" % outs(6))
rep = outs(7, "execute_result")
check(rep and text(rep[0]["data"]["text/html"]).count("<svg") == 2 and
      'class="timeline"' in text(rep[0]["data"]["text/html"]), "trace: %r" % outs(7))
check(stream(7).count("ring of %d" % n) == 3, "trace's rings: %r" % stream(7))
for i in (8, 9):
    r = outs(i, "execute_result")
    check(r and text(r[0]["data"]["image/svg+xml"]).count("<rect") >= 4, "grid %d: %r" % (i, outs(i)))
check(plain(10)[0].startswith("mp.Array(f64, 2x3)") and "<table>" in
      text(outs(10)[0]["data"]["text/html"]), "array: %r" % outs(10))
check(plain(11) == ['{list = {1, 2, 3}, name = "mplua", ranks = %d}' % n], "table: %r" % outs(11))
check(plain(12) == ["mu = 2.187, sigma = 0.465"], "model: %r" % outs(12))
d = outs(13, "display_data")
check(d and text(d[0]["data"]["text/html"]).startswith("<b>mp.display</b>"), "display: %r" % d)
print("notebook ok (%d ranks)" % n)
PY
