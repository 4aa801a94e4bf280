# ranks: 4
# SPDX-License-Identifier: MIT
# mp.save and mp.load (NumPy .npy files through MPI-IO): files written at 1, 3 and 4
# ranks are the same bytes whatever the layout and the number of ranks, read back at
# 2 and N ranks into other layouts, and NumPy reads them (Debian's python3-numpy);
# mplua reads what NumPy wrote; a fault while the others save leaves the older file
# whole, and the next task works.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
job="$MPLUA_TEST_DIR/sh/lib/npy_job.lua"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
fail() { echo "FAIL ($N): $*" >&2; exit 1; }

for w in 1 3 "$N"; do
  "$MPIEXEC" -n "$w" "$MPLUA" "$job" write "$tmp" "w$w" >out 2>err || { cat err >&2; fail "write at $w"; }
done
for w in 3 "$N"; do
  for k in f64 f64b c128 i32 f32; do
    cmp -s "w1_$k.npy" "w${w}_$k.npy" || fail "$k written at $w ranks differs from 1 rank's"
  done
done
cmp -s w1_f64.npy w1_f64b.npy || fail "two layouts of one array wrote different bytes"
for r in 2 "$N"; do
  for w in 1 3; do
    "$MPIEXEC" -n "$r" "$MPLUA" "$job" read "$tmp" "w$w" >out 2>err ||
      { cat err >&2; fail "read at $r what $w ranks wrote"; }
  done
done
ls ./*.part 2>/dev/null && fail "a .part file was left"

"$py" - "$tmp" <<'PY' || fail "numpy"
import sys, numpy as np
d = sys.argv[1]
def val(g):
    v = 0
    for x in reversed(g): v = v * 16 + x
    return v
for tag in ("w1", "w3"):
    a = np.load(f"{d}/{tag}_f64.npy")
    assert a.shape == (7, 5, 4) and a.dtype == np.float64 and a.flags["F_CONTIGUOUS"]
    i, j, k = np.indices(a.shape) + 1
    assert (a == k * 256 + j * 16 + i + 0.5).all()
    c = np.load(f"{d}/{tag}_c128.npy")
    i, j = np.indices(c.shape) + 1
    assert c.shape == (6, 5) and c.dtype == np.complex128
    assert (c == (j * 16 + i) - 1j * (j * 16 + i) / 4).all()
    assert (np.load(f"{d}/{tag}_i32.npy") == np.indices((9, 2))[1] * 16 + 16 + np.indices((9, 2))[0] + 1 - 100).all()
    f = np.load(f"{d}/{tag}_f32.npy")
    assert f.dtype == np.float32 and f.shape == (3, 4, 2)
# what NumPy writes, for mplua to read: f64 4x3 with value(i, j) = j*16 + i + 0.5
i, j = np.indices((4, 3)) + 1
v = (j * 16 + i + 0.5).astype(np.float64)
np.save(f"{d}/np_fortran.npy", np.asfortranarray(v))
np.save(f"{d}/np_c.npy", np.ascontiguousarray(v.T))
print("numpy ok")
PY
"$MPIEXEC" -n 3 "$MPLUA" "$job" numpy "$tmp" >out 2>err || { cat err >&2; fail "reading NumPy's files"; }
"$MPIEXEC" -n "$N" "$MPLUA" "$job" fault "$tmp" >out 2>err || { cat err >&2; fail "fault"; }
echo "file_npy ok"
