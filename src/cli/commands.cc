#include "cli/commands.h"

namespace verdict::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> kCommands = {
      {"serve", "serve decision and chat models over HTTP (/v1/systemone, /v1/chat/completions, ...)", kServeUsage,
       run_serve},
      {"bench", "prefill and decode speed of a model, measured as llama-bench does", kBenchUsage, run_bench},
      {"info", "describe a checkpoint folder (dimensions, dtypes, quantization, tokenizer, memory)",
       "usage: verdict info DIR|FILE.gguf [--json]\n\n"
       "Describes the checkpoint in DIR: model kind (decision when joint_head.safetensors and\n"
       "joint_head_config.json are present, else chat), architecture, text-model dimensions, layer\n"
       "pattern, stored dtypes, quantization, tokenizer, parameter count and the memory the model\n"
       "takes once loaded. A llama.cpp qwen35 .gguf file is described from its metadata.\n\n"
       "options:\n"
       "  --json    print one JSON object instead of text\n",
       run_info},
      {"tokenize", "text -> token ids (or ids -> text with --decode) with a model's tokenizer",
       "usage: verdict tokenize --model DIR [--jsonl] [--decode] [--no-special]\n\n"
       "Reads UTF-8 text on stdin and prints its token ids as a JSON array. Special tokens written in\n"
       "the text are parsed as single ids, as Hugging Face does. Invalid UTF-8 is replaced by U+FFFD.\n\n"
       "options:\n"
       "  --model DIR      checkpoint folder (tokenizer.json), the tokenizer.json file itself, or a .gguf\n"
       "                   file (its folder's tokenizer.json if present, else the file's tokenizer)\n"
       "  --jsonl          read one JSON object per line: {\"text\": ...} -> {\"ids\": [...]};\n"
       "                   with --decode: {\"ids\": [...]} -> {\"text\": ...}\n"
       "  --decode         read a JSON array of ids on stdin and print the text\n"
       "  --no-special     treat special-token text as plain text\n"
       "  --skip-special   with --decode: drop special tokens from the text\n",
       run_tokenize},
      {"decide", "answer one SystemOne decision request with a Clef model",
       "usage: verdict decide --model DIR [--request FILE | --state TEXT --questions JSON]\n"
       "                      [--max-length N] [--truncate] [--explain] [--name NAME] [--threads N]\n\n"
       "Runs one POST /v1/systemone request body through the decision model in DIR (validation,\n"
       "record encoding, one backbone prefill, joint schema head, answers) and prints the response\n"
       "body. A refused request prints its error body, and the command exits 1.\n\n"
       "options:\n"
       "  --model DIR         Clef checkpoint folder (joint_head.safetensors + joint_head_config.json), the\n"
       "                      backbone as safetensors or as one qwen35 .gguf file beside the head\n"
       "  --request FILE      the request JSON (default: stdin; '-' is stdin)\n"
       "  --state TEXT        shortcut: the state as text ...\n"
       "  --questions JSON    ... and the questions object\n"
       "  --max-length N      context limit in tokens (default 16384)\n"
       "  --truncate          cut the state's tail when the record is too long (a request's\n"
       "                      \"truncate\" overrides this)\n"
       "  --explain           add the record text, input ids, spans and unrounded probabilities\n"
       "  --name NAME         the model name written in the response (default: \"default\")\n"
       "  --threads N         worker threads (default: all cores; env VERDICT_THREADS)\n",
       run_decide},
      {"forward", "one prefill of the backbone: final-norm hidden rows and logits as JSON",
       "usage: verdict forward --model DIR --tokens 1,2,3 [--all-rows] [--chunk N] [--threads N]\n\n"
       "Runs the Qwen3.5 backbone of DIR over the token ids (fp32 activations; F32, BF16 or MLX weights)\n"
       "and prints {\"hidden\": [[...], ...], \"logits\": [...]}: the final-norm hidden row of the last\n"
       "position (every position with --all-rows) and the logits of the last position.\n\n"
       "options:\n"
       "  --model DIR     checkpoint folder, or a qwen35 .gguf file\n"
       "  --tokens LIST   comma-separated token ids\n"
       "  --all-rows      print the hidden rows of every position\n"
       "  --chunk N       prefill chunk size in tokens (default 512; a multiple of 64 gives one pass bit\n"
       "                  for bit, any other size agrees within fp32 rounding)\n"
       "  --threads N     worker threads (default: all cores; env VERDICT_THREADS)\n",
       run_forward},
      {"generate", "greedy decoding from token ids",
       "usage: verdict generate --model DIR --tokens 1,2,3 --max-tokens N [--stop-at-eos] [--chunk N]\n"
       "                        [--threads N]\n\n"
       "Prefills the prompt ids, then decodes greedily (argmax, first maximum on ties) one token at a\n"
       "time from the sequence state, and prints {\"ids\": [...]} (the generated ids only).\n\n"
       "options:\n"
       "  --model DIR       checkpoint folder, or a qwen35 .gguf file\n"
       "  --tokens LIST     comma-separated prompt token ids\n"
       "  --max-tokens N    ids to generate (exactly N unless --stop-at-eos)\n"
       "  --stop-at-eos     stop after a stop id of generation_config.json (else config.json)\n"
       "  --chunk N         prefill chunk size (default 512)\n"
       "  --threads N       worker threads (default: all cores; env VERDICT_THREADS)\n",
       run_generate},
      {"chat", "chat with a Qwen3.5 model in the terminal (interactive, or one-shot with -p)",
       "usage: verdict chat --model DIR [-p PROMPT] [--system TEXT] [--max-tokens N] [--temperature T]\n"
       "                    [--top-p P] [--top-k K] [--min-p P] [--repetition-penalty R] [--seed S]\n"
       "                    [--stop TEXT]... [--no-think] [--context N] [--json] [--threads N]\n\n"
       "Renders the conversation with the model's chat template (chat_template.jinja or\n"
       "tokenizer_config.json), generates the assistant's reply and streams it as it is decoded:\n"
       "the answer on stdout, the model's reasoning (<think>...</think>) on stderr. Generation stops\n"
       "at a stop id of generation_config.json (else config.json), a --stop string or --max-tokens.\n"
       "Without -p the command is interactive: each line read from stdin is a user turn, the\n"
       "conversation is kept; '/reset' starts over, '/exit' or end of input quits.\n\n"
       "Sampling defaults come from generation_config.json (temperature, top_p, top_k,\n"
       "repetition_penalty), else temperature 1 with no filtering. Order: penalties, temperature\n"
       "(0 = greedy), top-k, top-p, min-p, then a draw seeded by --seed.\n\n"
       "options:\n"
       "  --model DIR               chat checkpoint folder, or a qwen35 .gguf file\n"
       "  -p, --prompt TEXT         one-shot: answer this user message and exit\n"
       "  --system TEXT             a system message first in the conversation\n"
       "  --max-tokens N            most tokens per reply (default 1024)\n"
       "  --temperature T           0 for greedy decoding\n"
       "  --top-p P, --top-k K, --min-p P, --repetition-penalty R   sampling filters and penalty\n"
       "  --seed S                  random seed (default: random)\n"
       "  --stop TEXT               stop string (repeatable); never printed\n"
       "  --no-think                render with enable_thinking=false (no reasoning)\n"
       "  --context N               tokens of context per conversation (default 8192)\n"
       "  --json                    with -p: print {\"prompt_ids\", \"ids\", \"reasoning_content\",\n"
       "                            \"content\", \"finish_reason\", \"usage\"} instead of streaming\n"
       "  --threads N               worker threads (default: all cores; env VERDICT_THREADS)\n",
       run_chat},
      {"convert", "write a Hugging Face or MLX Qwen3.5 checkpoint as a llama.cpp qwen35 GGUF file",
       "usage: verdict convert IN_DIR OUT.gguf\n"
       "           [--type f32|f16|bf16|q8_0|q4_0|q4_1|q5_0|q5_1|q2_k|q3_k|q4_k|q5_k|q6_k|iq4_nl|\n"
       "                   iq4_xs|q4_k_m|q5_k_m]\n"
       "           [--name NAME]\n\n"
       "Writes the Qwen3.5 checkpoint in IN_DIR (Hugging Face safetensors, or MLX: dequantized\n"
       "first) as a GGUF file that llama.cpp loads: the tensors and metadata llama.cpp's\n"
       "convert_hf_to_gguf.py writes for the qwen35 architecture (without the MTP block), value heads\n"
       "in llama.cpp's order, and the tokenizer (tokenizer.json, tokenizer_config.json). Norms,\n"
       "conv1d, ssm_a and dt bias stay F32; the other matrices take --type, quantized with ggml's\n"
       "reference quantizers (rows that are not whole blocks fall back to Q8_0, then F16).\n"
       "verdict loads the file back anywhere a model path is accepted (see docs/gguf.md).\n\n"
       "options:\n"
       "  --type T       f32 (default), f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k,\n"
       "                 q6_k, iq4_nl, iq4_xs\n"
       "                 (without an importance matrix), or q4_k_m / q5_k_m\n"
       "                 (llama-quantize's mixes: Q4_K / Q5_K, with Q6_K for the output and, in some\n"
       "                 layers, attn_v/attn_qkv and ffn_down)\n"
       "  --name NAME    general.name (default: the folder's name)\n",
       run_convert},
      {"make-model", "write a random-weight checkpoint (Qwen3.5 or Clef layout) for tests, demos, benchmarks",
       "usage: verdict make-model --preset NAME --seed S [--dtype bf16|f32] [--quantize mlx4|mlx6|mlx8]\n"
       "                          [--threads N] [--dry-run] OUT_DIR\n\n"
       "Writes a checkpoint with random weights in the exact release layout into OUT_DIR: config.json,\n"
       "generation_config.json, tokenizer.json, tokenizer_config.json (Qwen3.5 chat template),\n"
       "model.safetensors, and for Clef presets joint_head.safetensors + joint_head_config.json.\n"
       "The weights depend only on the seed: the same command writes byte-identical files. They are\n"
       "scaled so that activations stay finite and O(1) through every layer; the outputs mean nothing.\n"
       "model.safetensors is streamed tensor by tensor (the 9B shape is about 18 GB in BF16).\n\n"
       "presets:\n"
       "  qwen35-0.8b, qwen35-2b, qwen35-4b, qwen35-9b   the released Qwen3.5 shapes, vocabulary 248,320,\n"
       "                   special tokens at their real ids 248044-248076 (no MTP layer, no vision tensors)\n"
       "  qwen35-tiny, qwen35-small   the fixture shapes (vocabulary 768)\n"
       "  qwen-demo        the embedded demo chat model (qwen35-small shape, tied embeddings)\n"
       "  clef-tiny        tiny Clef checkpoint (fixture layout, joint head width 32)\n"
       "  clef-flash-shape Qwen3.5-9B backbone + the clef-flash joint head (W 1024, F 4096, R 2, Ld 4)\n"
       "  clef-0.8b        Qwen3.5-0.8B backbone + the same head (decision latency on a small machine)\n\n"
       "options:\n"
       "  --preset NAME      one of the presets above\n"
       "  --seed S           random seed (0 or more)\n"
       "  --dtype bf16|f32   bf16 (default): BF16 with A_log and linear_attn.norm.weight F32, as released;\n"
       "                     f32: every tensor F32, the exact values of the bf16 checkpoint\n"
       "  --quantize mlx4|mlx6|mlx8  the mlx-lm layout: affine 4-, 6- or 8-bit, group size 64, BF16 scales\n"
       "  --threads N        generator threads (default: all cores)\n"
       "  --dry-run          print every tensor (dtype, shape, bytes) and the parameter and byte totals,\n"
       "                     write nothing (OUT_DIR may be omitted)\n",
       run_make_model},
  };
  return kCommands;
}

}  // namespace verdict::cli
