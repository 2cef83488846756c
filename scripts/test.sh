#!/usr/bin/env bash
# README command 2: install the system packages, build, run every test.
#   1. release build (warnings as errors) + ctest
#   2. AddressSanitizer + UBSan build of the tests + ctest
#   3. libFuzzer targets built with clang, each run for VERDICT_FUZZ_SECONDS (default 10) as a smoke test
set -euo pipefail
cd "$(dirname "$0")/.."
export VERDICT_FIXTURES="${VERDICT_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"
# Each step prints its wall time, so a slow CI run shows where the time went.
step_start=$SECONDS
took() { echo "-- $1: $((SECONDS - step_start)) s (total $SECONDS s)"; step_start=$SECONDS; }
bash scripts/install-deps.sh
# The OpenAI Node SDK, exactly as tests/node/package-lock.json pins it, for the node.openai_sdk test.
npm ci --prefix tests/node --no-audit --no-fund
took "packages"

echo "== release build + tests"
bash scripts/build.sh release
took "release build"
ctest --test-dir build/release --output-on-failure -j "$(nproc)"
took "release tests"

echo "== sanitizer build (ASan + UBSan) + tests"
bash scripts/build.sh asan
took "sanitizer build"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j "$(nproc)"
took "sanitizer tests"

echo "== fuzz targets (smoke run)"
# -O0: a smoke run of seconds per target does not need fast fuzzers, and the instrumented libraries compile
# fastest so (scripts/build.sh fuzz alone builds them at -O2 for real fuzzing).
bash scripts/build.sh fuzz -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -gline-tables-only -DNDEBUG"
took "fuzz build"
bash scripts/fuzz.sh "${VERDICT_FUZZ_SECONDS:-10}"
took "fuzz runs"
echo "all tests passed"
