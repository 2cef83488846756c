#!/usr/bin/env bash
# Runs every libFuzzer target in build/fuzz for SECONDS each (default 60), seeded from the fixtures, as many
# at once as there are cores ($VERDICT_FUZZ_JOBS overrides).
# Corpora live in build/fuzz/corpus/<target> (not committed). A finding fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
fixtures="${VERDICT_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"
export VERDICT_TOKENIZER="$fixtures/qwen35-tiny/tokenizer.json"
export VERDICT_FIXTURES="$fixtures"

# Seeds per target: files from the fixtures (missing ones are skipped).
seeds() {
  case "$1" in
    safetensors_fuzz) echo "$fixtures/qwen35-tiny-mlx4/model.safetensors $fixtures/clef-head/head_a/f32/joint_head.safetensors" ;;
    gguf_fuzz) echo "$fixtures/qwen35-tiny/model-f32.gguf" ;;
    config_fuzz) echo "$fixtures/qwen35-tiny/config.json $fixtures/qwen35-tiny-mlx4/config.json $fixtures/qwen35-tiny/generation_config.json" ;;
    tokenizer_fuzz) echo "$fixtures/qwen35-tiny/tokenizer_config.json" ;;
    chat_request_fuzz) echo "$(pwd)/fuzz/seeds/chat_request/"* ;;
    jinja_fuzz) echo "$fixtures/chat-templates/Qwen3.5-4B.jinja $fixtures/chat-templates/Qwen-Qwen3-0.6B.jinja" ;;
    *) echo "" ;;
  esac
}

names=()
for bin in build/fuzz/fuzz/*_fuzz; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  corpus="build/fuzz/corpus/$name"
  mkdir -p "$corpus"
  for f in $(seeds "$name"); do [ -f "$f" ] && cp -f "$f" "$corpus/"; done
  if [ "$name" = decision_request_fuzz ]; then  # the request texts of the SystemOne cases
    python3 - "$fixtures" "$corpus" <<'PY'
import json, sys, os
fixtures, corpus = sys.argv[1], sys.argv[2]
for path in ("clef-systemone/cases.json", "clef-tiny/cases.json"):
    try:
        cases = json.load(open(os.path.join(fixtures, path)))["cases"]
    except OSError:
        continue
    for i, c in enumerate(cases):
        if "request_json" in c:
            open(os.path.join(corpus, f"{os.path.dirname(path)}-{i}.json"), "w").write(c["request_json"])
PY
  fi
  names+=("$name")
done

# One target: its output into build/fuzz/NAME.log; the exit status is the fuzzer's.
run() {
  (cd build/fuzz && "fuzz/$1" -max_total_time="$seconds" -rss_limit_mb=4096 -print_final_stats=1 \
     -artifact_prefix="$1-" "corpus/$1" > "$1.log" 2>&1)
}
jobs_max="${VERDICT_FUZZ_JOBS:-$(nproc)}"
pids=() running=() failed=0
finish_first() {  # waits for the oldest running target and prints its log
  local status=0
  wait "${pids[0]}" || status=$?
  echo "-- ${running[0]} for ${seconds}s (exit $status)"
  tail -n 4 "build/fuzz/${running[0]}.log"
  [ "$status" -eq 0 ] || failed=1
  pids=("${pids[@]:1}") running=("${running[@]:1}")
}
for name in "${names[@]}"; do
  run "$name" & pids+=($!) running+=("$name")
  if [ "${#pids[@]}" -ge "$jobs_max" ]; then finish_first; fi
done
while [ "${#pids[@]}" -gt 0 ]; do finish_first; done
exit "$failed"
