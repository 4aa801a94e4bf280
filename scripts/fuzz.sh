#!/usr/bin/env bash
# The libFuzzer target of the message framing and the decoder
# (tests/fuzz/fuzz_message.c), built with clang + ASan + UBSan into
# build-fuzz/ and run for a bounded time over a copy of the committed corpus.
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
mkdir -p "$out"
inc=(-Impbuiltins $(pkg-config --cflags lua5.4) $(pkg-config --cflags mpich 2>/dev/null || mpicc -show | grep -o -- '-I[^ ]*'))
src=(mpbuiltins/chan/frame.c mpbuiltins/wire/*.c mpbuiltins/array/*.c)
libs=($(pkg-config --libs lua5.4) -lm)
if [ "${1:-}" = --corpus ]; then
  clang -g -O1 -D_DEFAULT_SOURCE "${inc[@]}" tests/fuzz/make_corpus.c "${src[@]}" "${libs[@]}" -o "$out/make_corpus"
  rm -rf tests/fuzz/corpus && mkdir -p tests/fuzz/corpus
  "$out/make_corpus" tests/fuzz/corpus
  echo "fuzz: $(ls tests/fuzz/corpus | wc -l) seeds in tests/fuzz/corpus"
  exit 0
fi
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
     clang -x c -fsanitize=fuzzer - -o "$out/probe" 2>/dev/null; then
  echo "fuzz: libFuzzer's runtime is missing (Debian: libclang-rt-14-dev)"; exit 1
fi
clang -g -O1 -D_DEFAULT_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  "${inc[@]}" tests/fuzz/fuzz_message.c "${src[@]}" "${libs[@]}" -o "$out/fuzz_message"
rm -rf "$out/corpus" && cp -r tests/fuzz/corpus "$out/corpus"
secs=${1:-60}
echo "fuzz: fuzz_message for $secs s over $(ls "$out/corpus" | wc -l) seeds"
ASAN_OPTIONS=detect_leaks=1 "$out/fuzz_message" -max_total_time="$secs" -max_len=200000 \
  -rss_limit_mb=4096 -artifact_prefix="$out/" -print_final_stats=1 "$out/corpus" 2>&1 |
  grep -E '^(#[0-9]+ *DONE|Done|==|SUMMARY|stat::number_of_executed_units|.*ERROR)' || true
test "${PIPESTATUS[0]}" -eq 0
