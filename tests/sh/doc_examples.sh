# ranks: nompi 2 4 8 16  quick: nompi 2  sanitize: nompi 2
# SPDX-License-Identifier: MIT
# Every Lua example of README.md and of the reference files (*/README.md,
# mpbuiltins/wire/FORMAT.md, ...) runs as shown: ```lua blocks as scripts on rank 0,
# prompt transcripts (lines "> ...") typed into rank 0's prompt with their output
# compared, each at the rank count its fence names, and the sessions of
# scripts/examples/ ("$ mpiexec -n N build/mplua scripts/examples/...") at N, their
# output compared (tests/README.md, "Examples in the docs"). One job per count runs all the scripts, one more all the transcripts;
# at "nompi" the docs' relative links are checked as well.
set -eu
N=${1:?usage: $0 RANKS}
. "$(dirname "$0")/lib/common.bash"
counts=$(head -1 "$MPLUA_TEST_DIR/sh/doc_examples.sh" | sed 's/^# ranks://')
ln -s "$MPLUA_TEST_DIR/../scripts" scripts
ln -s "$MPLUA_TEST_DIR/../lib" lib
ln -s "$(dirname "$MPLUA")" build
# a stuck task ends with a report instead of running into ctest's time limit
export MPLUA_WATCHDOG=120 MPLUA_WATCHDOG_ABORT=1 DOC_TMP=$PWD
# shellcheck disable=SC2086
"$MPLUA" --nompi "$MPLUA_TEST_DIR/sh/lib/doc_examples.lua" "$MPLUA_TEST_DIR/.." \
  "$MPLUA" "$MPIEXEC" "$N" $counts
