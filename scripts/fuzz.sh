#!/usr/bin/env bash
# Runs every libFuzzer target in build/fuzz for SECONDS each (default 60), seeded from the fixtures.
# Corpora live in build/fuzz/corpus/<target> (not committed).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
fixtures="${VERDICT_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"
export VERDICT_TOKENIZER="$fixtures/qwen35-tiny/tokenizer.json"
seed() {  # seed TARGET FILES...
  local dir="build/fuzz/corpus/$1"; shift
  mkdir -p "$dir"
  for f in "$@"; do [ -f "$f" ] && cp -f "$f" "$dir/" ; done
  echo "$dir"
}
run() {  # run TARGET CORPUS
  echo "-- $1 for ${seconds}s"
  "build/fuzz/fuzz/$1" -max_total_time="$seconds" -rss_limit_mb=4096 -print_final_stats=1 "$2" 2>&1 | tail -n 3
}
run safetensors_fuzz "$(seed safetensors_fuzz "$fixtures/qwen35-tiny-mlx4/model.safetensors" "$fixtures/clef-head/head_a/f32/joint_head.safetensors")"
run config_fuzz "$(seed config_fuzz "$fixtures/qwen35-tiny/config.json" "$fixtures/qwen35-tiny-mlx4/config.json" "$fixtures/qwen35-tiny/generation_config.json")"
run tokenizer_fuzz "$(seed tokenizer_fuzz "$fixtures/qwen35-tiny/tokenizer_config.json")"
