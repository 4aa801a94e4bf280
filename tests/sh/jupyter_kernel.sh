# ranks: 1 4
# SPDX-License-Identifier: MIT
# The Jupyter kernel through Debian's jupyter_client (tests/jupyter/kernel_test.py):
# installed with --install-kernel into a temporary JUPYTER_PATH, started at N
# ranks from its kernelspec, as a notebook would start it.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
export MPLUA_LAUNCHER="$MPIEXEC -n"
export JUPYTER_PATH="$tmp/pfx/share/jupyter" JUPYTER_DATA_DIR="$tmp/data"
export JUPYTER_RUNTIME_DIR="$tmp/runtime" JUPYTER_CONFIG_DIR="$tmp/config" IPYTHONDIR="$tmp/ipython"
"$MPLUA" --install-kernel --prefix "$tmp/pfx" -n "$N" --name mplua-test >install.out ||
  { cat install.out >&2; echo "FAIL ($N): --install-kernel" >&2; exit 1; }
for f in kernel.json logo-32x32.png logo-64x64.png logo-svg.svg; do
  [ -s "$tmp/pfx/share/jupyter/kernels/mplua-test/$f" ] ||
    { echo "FAIL ($N): the kernelspec has no $f" >&2; exit 1; }
done
/usr/bin/python3 - "$tmp/pfx/share/jupyter/kernels/mplua-test" <<'PY' ||
import sys
from jupyter_client.kernelspec import KernelSpecManager
spec = KernelSpecManager().get_kernel_spec("mplua-test")
assert spec.language == "lua" and spec.argv[-2:] == ["--jupyter", "{connection_file}"], spec.argv
assert spec.resource_dir == sys.argv[1], spec.resource_dir
PY
  { echo "FAIL ($N): jupyter_client does not list the kernelspec" >&2; exit 1; }
/usr/bin/python3 "$MPLUA_TEST_DIR/jupyter/kernel_test.py" "$N" mplua-test "$tmp/kernel.log" ||
  { echo "kernel's log:" >&2; cat "$tmp/kernel.log" >&2; exit 1; }
