#!/usr/bin/env bash
# README command 1: install the system packages, build verdict, start `verdict serve`.
# Extra arguments go to `verdict serve` (e.g. --port 8080).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh release -DVERDICT_BUILD_TESTS=OFF -DVERDICT_BUILD_BENCH=OFF
exec build/release/src/cli/verdict serve "$@"
