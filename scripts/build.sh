#!/usr/bin/env bash
# Configures and builds one flavour of verdict: scripts/build.sh release|asan|fuzz [extra cmake args]
#   release  optimized build, warnings as errors  -> build/release
#   asan     tests with AddressSanitizer + UBSan  -> build/asan
#   fuzz     libFuzzer targets (clang)            -> build/fuzz
set -euo pipefail
cd "$(dirname "$0")/.."
flavour="${1:-release}"
shift || true
jobs="${VERDICT_JOBS:-$(nproc)}"
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
case "$flavour" in
  release)
    cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DVERDICT_WERROR=ON "${launcher[@]}" "$@" ;;
  asan)
    # -g1: line tables (what ASan's and UBSan's stack traces print), a quarter less compile time than -g.
    cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
      -DVERDICT_SANITIZE=ON \
      -DVERDICT_WERROR=ON -DVERDICT_BUILD_BENCH=OFF "${launcher[@]}" "$@" ;;
  fuzz)
    CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
      -DVERDICT_BUILD_FUZZ=ON -DVERDICT_BUILD_TESTS=OFF -DVERDICT_BUILD_BENCH=OFF "${launcher[@]}" "$@" ;;
  *) echo "usage: scripts/build.sh release|asan|fuzz" >&2; exit 2 ;;
esac
if [ "$flavour" = fuzz ]; then
  cmake --build build/fuzz -j "$jobs" --target verdict_fuzzers   # the fuzz targets and their libraries only
else
  cmake --build "build/$flavour" -j "$jobs"
fi
