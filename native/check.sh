#!/usr/bin/env bash
# The native addon under AddressSanitizer and UBSan (issue 13 item 7):
#  1. the addon built a second time with clang and both sanitizers
#     (native/build-asan), and the tests that reach it run against that build;
#  2. a libFuzzer target over the block reader, the JSON, columns, Arrow and Parquet
#     writers, block summaries and segments (native/fuzz/block_fuzz.cc), for a bounded time,
#     from real blocks.
# Any finding fails the script. Needs clang and its runtimes (Debian 12:
# clang libclang-rt-14-dev), which .ci/run installs, and `npm install` done.
# Usage: native/check.sh [fuzz seconds, default 60]   (npm run check:native)
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS=${1:-60}

# 1. Sanitized addon. Node itself is not instrumented, so the ASan runtime is
# preloaded into it, and leak checking is off (node's own allocations would be
# reported at exit). MERIDIAN_NATIVE_ADDON points src/native/binding.ts at it.
echo "== addon under ASan + UBSan"
npx cmake-js compile --directory native --out native/build-asan --cc clang --cxx clang++ --CDMERIDIAN_SANITIZE=ON --log-level warn
ADDON="$PWD/native/build-asan/Release/meridian_native.node"
grep -q __asan_report <(nm -D "$ADDON") || { echo "native/build-asan: addon is not instrumented" >&2; exit 1; }
ASAN_RUNTIME=$(clang -print-file-name=libclang_rt.asan-x86_64.so)
[ -f "$ASAN_RUNTIME" ] || { echo "no ASan runtime at $ASAN_RUNTIME (apt-get install libclang-rt-14-dev)" >&2; exit 1; }
# The codec's own tests, and the ones that read blocks through every writer over a real server.
LD_PRELOAD="$ASAN_RUNTIME" ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 MERIDIAN_NATIVE_ADDON="$ADDON" \
  npx vitest run test/timeseries/blocks test/timeseries/read.test.ts test/timeseries/grpc-read.test.ts test/timeseries/chart.test.ts \
  test/timeseries/arrow.test.ts test/timeseries/parquet.test.ts

# The paths taken where the CPU lacks SSE4.2 (CRC-32C by tables, plain scans), by the release build.
echo "== portable paths (MERIDIAN_NATIVE_PORTABLE=1)"
MERIDIAN_NATIVE_PORTABLE=1 npx vitest run test/timeseries/blocks test/timeseries/chart.test.ts

# 2. libFuzzer, over the same sources (not addon.cc: Node-API needs node).
echo "== libFuzzer: block reader, JSON, columns, Arrow and Parquet writers, chart, block summaries and segments (${FUZZ_SECONDS} s)"
FUZZ=native/build-fuzz
rm -rf "$FUZZ" && mkdir -p "$FUZZ/corpus"
clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
  native/fuzz/block_fuzz.cc native/src/block-codec.cc native/src/block-view.cc native/src/crc32c.cc \
  native/src/int-sequence.cc native/src/value-columns.cc native/src/value-json.cc native/src/arrow-ipc.cc native/src/parquet-pages.cc native/src/chart.cc native/src/block-summary.cc native/src/block-segments.cc native/src/extremes.cc native/src/helper-thread.cc -o "$FUZZ/block_fuzz"
node native/fuzz/seeds.mjs "$FUZZ/seeds"
# Findings land in native/build-fuzz/ (crash-*, with the input); libFuzzer exits non-zero.
"$FUZZ/block_fuzz" -max_total_time="$FUZZ_SECONDS" -max_len=4096 -print_final_stats=1 -artifact_prefix="$FUZZ/" \
  "$FUZZ/corpus" "$FUZZ/seeds" 2>"$FUZZ/log" || { tail -60 "$FUZZ/log" >&2; exit 1; }
grep -E "^Done [0-9]+ runs" "$FUZZ/log"
echo "native checks passed: sanitized tests and ${FUZZ_SECONDS} s of fuzzing, no finding"
