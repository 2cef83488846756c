#!/usr/bin/env bash
# Cross-checks verdict's GGUF files and GGUF loader against llama.cpp (not run in CI: it builds llama.cpp).
#
#   bash scripts/gguf-crosscheck.sh [VERDICT_BIN]     # default build/release/src/cli/verdict
#   CROSSCHECK_TYPES="iq4_nl iq4_xs" bash scripts/gguf-crosscheck.sh   # only some types (F32 always runs)
#   CROSSCHECK_RECIPES="q2_k q3_k_m" ...   # also llama-quantize's recipes of qwen35-small's BF16 file
#   LLAMA_BIN=/path/to/llama.cpp/build/bin ...   # another llama.cpp build (default: ../shared/tools/llamacpp-peer.sh's;
#                                                # on AMX machines its GCC 12 build crashes on quantized files:
#                                                # docs/performance.md, "On an Intel Xeon with AMX")
#
# For the qwen35-tiny and qwen35-small fixture checkpoints and every `verdict convert --type`, it writes the
# GGUF file with verdict, lets llama.cpp's llama-debug run each golden prompt text on it (F32 KV cache,
# flash attention off, 2 threads) and save the last row's logits and its token ids, runs `verdict forward`
# on the same file with the same ids, and prints per file and prompt: max |Δ| of the logits, max |Δ| /
# max |llama.cpp| and whether the argmax agrees. verdict runs twice: with exact fp32 activations
# (VERDICT_PACK=0) and with its packed GEMMs (VERDICT_PACK=1: activations rounded to int8 / bf16 per
# block, as llama.cpp does for quantized / BF16 weights). It also checks that llama-bench loads each file.
# For each non-F32 file it adds llama.cpp's own numbers: the gap between its two largest logits (its top-2
# margin) and how far the type moves its logits from its F32 run (the quantization's own error), which
# say whether a top-1 comparison can be decided by the type at all; where the packed top-1 differs it also
# prints verdict's own top-1 with prefill pieces of 200, 100 and 30 tokens (the same function up to fp32
# order). The numbers are recorded in docs/gguf.md.
set -euo pipefail
cd "$(dirname "$0")/.."
verdict="${1:-build/release/src/cli/verdict}"
fixtures="${VERDICT_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"
bin=${LLAMA_BIN:-$(bash ../shared/tools/llamacpp-peer.sh)}
work=$(mktemp -d /tmp/verdict-gguf-crosscheck.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Compares llama.cpp and verdict on GGUF file $1 (label $2: "MODEL TYPE") for every golden prompt of $model.
check() {
  python3 - "$verdict" "$bin" "$1" "$fixtures/$model/golden.json" "$work" "$2" "$work/$model-f32.json" <<'PY'
import json, os, struct, subprocess, sys
verdict, bin_dir, gguf, golden, work, label, f32_path = sys.argv[1:]
f32 = json.load(open(f32_path)) if os.path.exists(f32_path) else {}
out_dir = os.path.join(work, "logits")
name = os.path.splitext(os.path.basename(gguf))[0]
for prompt in json.load(open(golden))["prompts"]:
    subprocess.run([os.path.join(bin_dir, "llama-debug"), "-m", gguf, "-p", prompt["ids_decoded"], "--save-logits",
                    "--logits-output-dir", out_dir, "-t", "2", "-fa", "off", "-ctk", "f32", "-ctv", "f32",
                    "-c", "1024"], check=True, capture_output=True)
    raw = open(os.path.join(out_dir, f"llamacpp-{name}.bin"), "rb").read()
    ref = struct.unpack(f"<{len(raw) // 4}f", raw)
    tok = open(os.path.join(out_dir, f"llamacpp-{name}-tokens.bin"), "rb").read()
    ids = struct.unpack(f"<{len(tok) // 4}i", tok)
    cells = []
    for pack in ("0", "1"):
        env = dict(os.environ, VERDICT_PACK=pack, VERDICT_THREADS="2")
        out = subprocess.run([verdict, "forward", "--model", gguf, "--tokens", ",".join(map(str, ids))],
                             check=True, capture_output=True, text=True, env=env).stdout
        got = json.loads(out)["logits"]
        diff = max(abs(a - b) for a, b in zip(got, ref))
        rel = diff / max(abs(b) for b in ref)
        same = max(range(len(got)), key=got.__getitem__) == max(range(len(ref)), key=ref.__getitem__)
        cell = f"pack={pack}: max|Δ| {diff:.3g} rel {rel:.3g} top-1 {'same' if same else 'DIFFERS'}"
        if not same and pack == "1":
            # Is the pair decided by the weights or by fp32 order? verdict's own top-1 with other prefill
            # piece sizes (which agree within fp32 rounding, `verdict forward --chunk`).
            tops = []
            for chunk in ("200", "100", "30"):
                o = subprocess.run([verdict, "forward", "--model", gguf, "--tokens", ",".join(map(str, ids)),
                                    "--chunk", chunk], check=True, capture_output=True, text=True, env=env).stdout
                g = json.loads(o)["logits"]
                tops.append(f"{chunk}:{max(range(len(g)), key=g.__getitem__)}")
            cell += f" (llama.cpp {max(range(len(ref)), key=ref.__getitem__)}; verdict by piece size {' '.join(tops)})"
        cells.append(cell)
    if label.split()[1] != "f32":
        top = sorted(ref, reverse=True)
        own = max(abs(a - b) for a, b in zip(ref, f32[prompt["name"]]))
        cells.append(f"llama.cpp: top-2 margin {top[0] - top[1]:.3g}, max|Δ| vs its F32 {own:.3g}")
    else:
        f32[prompt["name"]] = ref
    print(f"{label:18} {prompt['name']:5} ({len(ids):3} tokens)  " + "  |  ".join(cells))
if not os.path.exists(f32_path):
    json.dump(f32, open(f32_path, "w"))
PY
}

for model in qwen35-tiny qwen35-small; do
  # f32 first: the other types' rows compare with its llama.cpp logits
  types="f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl"
  [ "$model" = qwen35-small ] && types="$types q2_k q3_k q4_k q5_k q6_k iq4_xs"  # K-quants: whole 256-value rows
  if [ -n "${CROSSCHECK_TYPES:-}" ]; then  # only these (and f32), e.g. CROSSCHECK_TYPES="iq4_nl iq4_xs"
    keep=f32
    for t in $types; do case " $CROSSCHECK_TYPES " in *" $t "*) keep="$keep $t" ;; esac; done
    types=$keep
  fi
  for type in $types; do
    gguf="$work/$model-$type.gguf"
    "$verdict" convert "$fixtures/$model" "$gguf" --type "$type" >/dev/null
    "$bin/llama-bench" -m "$gguf" -p 16 -n 4 -t 2 -r 1 >/dev/null 2>&1 || { echo "llama-bench cannot load $gguf"; exit 1; }
    check "$gguf" "$model $type"
  done
  # llama-quantize's recipes (mixed types, chosen per tensor), from verdict's BF16 file:
  # CROSSCHECK_RECIPES="q2_k q3_k_m" (K-quant recipes: qwen35-small only)
  if [ "$model" = qwen35-small ]; then
    for recipe in ${CROSSCHECK_RECIPES:-}; do
      [ -f "$work/$model-bf16.gguf" ] || "$verdict" convert "$fixtures/$model" "$work/$model-bf16.gguf" --type bf16 >/dev/null
      gguf="$work/$model-$recipe-llama-quantize.gguf"
      "$bin/llama-quantize" "$work/$model-bf16.gguf" "$gguf" "${recipe^^}" >/dev/null 2>&1
      check "$gguf" "$model ${recipe^^}"
    done
  fi
done
