#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The libFuzzer target of the message framing and the decoder
# (tests/fuzz/fuzz_message.c), built with clang + ASan + UBSan into
# build-fuzz/ (cmake -DMPLUA_BUILD_FUZZER=ON) and run for a bounded time
# over a copy of the committed corpus.
#   scripts/fuzz.sh [seconds]     run (default 60 s); a crash leaves its input
#                                 in build-fuzz/ and exits non-zero
#   scripts/fuzz.sh --corpus      rewrite tests/fuzz/corpus from real messages
# Without clang or libFuzzer's runtime (scripts/setup.sh installs both) it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build-fuzz
if ! command -v clang >/dev/null 2>&1; then
  echo "fuzz: clang is not installed (scripts/setup.sh installs it)"; exit 1
fi
# the project's own fuzzer build: clang, ASan + UBSan, libFuzzer's coverage
configure() {
  cmake -S . -B "$out" -DCMAKE_C_COMPILER=clang -DMPLUA_BUILD_FUZZER=ON -DMPLUA_SANITIZE=ON \
    -DBUILD_TESTING=OFF -DMPLUA_BUILD_BENCHMARKS=OFF -DMPLUA_BUILD_EXAMPLES=OFF >/dev/null
}
if [ "${1:-}" = --corpus ]; then
  configure && cmake --build "$out" --target make_corpus >/dev/null
  rm -rf tests/fuzz/corpus && mkdir -p tests/fuzz/corpus
  "$out/make_corpus" tests/fuzz/corpus
  echo "fuzz: $(ls tests/fuzz/corpus | wc -l) seeds in tests/fuzz/corpus"
  exit 0
fi
mkdir -p "$out"
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
     clang -x c -fsanitize=fuzzer - -o "$out/probe" 2>/dev/null; then
  echo "fuzz: libFuzzer's runtime is missing (Debian: libclang-rt-14-dev)"; exit 1
fi
configure && cmake --build "$out" --target fuzz_message >/dev/null
rm -rf "$out/corpus" && cp -r tests/fuzz/corpus "$out/corpus"
secs=${1:-60}
echo "fuzz: fuzz_message for $secs s over $(ls "$out/corpus" | wc -l) seeds"
ASAN_OPTIONS=detect_leaks=1 "$out/fuzz_message" -max_total_time="$secs" -max_len=200000 \
  -rss_limit_mb=4096 -artifact_prefix="$out/" -print_final_stats=1 "$out/corpus" 2>&1 |
  grep -E '^(#[0-9]+ *DONE|Done|==|SUMMARY|stat::number_of_executed_units|.*ERROR)' &&
  rc=${PIPESTATUS[0]} || rc=${PIPESTATUS[0]}
exit "$rc"
