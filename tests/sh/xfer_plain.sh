# ranks: 3  quick: none
# SPDX-License-Identifier: MIT
# The transport harness again on the plain path (MPLUA_ZERO_COPY=0: every
# message one contiguous send, no parts, no forwarding of received buffers),
# so both paths deliver the same exact bytes.
set -eu
N=${1:?usage: $0 RANKS}
: "${MPLUA:?}" "${MPIEXEC:?}" "${MPLUA_TEST_DIR:?}"
cd "$MPLUA_TEST_DIR/lua"
for t in xfer_p2p xfer_coll; do
  MPLUA_ZERO_COPY=0 "$MPIEXEC" -n "$N" "$MPLUA" "$t.lua" ||
    { echo "FAIL ($N): $t on the plain path" >&2; exit 1; }
done
echo ok
