#include "cli/commands.h"

namespace verdict::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> kCommands = {
      {"info", "describe a checkpoint folder (dimensions, dtypes, quantization, tokenizer, memory)",
       "usage: verdict info DIR [--json]\n\n"
       "Describes the checkpoint in DIR: model kind (decision when joint_head.safetensors and\n"
       "joint_head_config.json are present, else chat), architecture, text-model dimensions, layer\n"
       "pattern, stored dtypes, quantization, tokenizer, parameter count and the memory the model\n"
       "takes once loaded.\n\n"
       "options:\n"
       "  --json    print one JSON object instead of text\n",
       run_info},
      {"tokenize", "text -> token ids (or ids -> text with --decode) with a model's tokenizer",
       "usage: verdict tokenize --model DIR [--jsonl] [--decode] [--no-special]\n\n"
       "Reads UTF-8 text on stdin and prints its token ids as a JSON array. Special tokens written in\n"
       "the text are parsed as single ids, as Hugging Face does. Invalid UTF-8 is replaced by U+FFFD.\n\n"
       "options:\n"
       "  --model DIR      checkpoint folder (tokenizer.json), or the tokenizer.json file itself\n"
       "  --jsonl          read one JSON object per line: {\"text\": ...} -> {\"ids\": [...]};\n"
       "                   with --decode: {\"ids\": [...]} -> {\"text\": ...}\n"
       "  --decode         read a JSON array of ids on stdin and print the text\n"
       "  --no-special     treat special-token text as plain text\n"
       "  --skip-special   with --decode: drop special tokens from the text\n",
       run_tokenize},
      {"forward", "one prefill of the backbone: final-norm hidden rows and logits as JSON",
       "usage: verdict forward --model DIR --tokens 1,2,3 [--all-rows] [--chunk N] [--threads N]\n\n"
       "Runs the Qwen3.5 backbone of DIR over the token ids (fp32 activations; F32, BF16 or MLX weights)\n"
       "and prints {\"hidden\": [[...], ...], \"logits\": [...]}: the final-norm hidden row of the last\n"
       "position (every position with --all-rows) and the logits of the last position.\n\n"
       "options:\n"
       "  --model DIR     checkpoint folder\n"
       "  --tokens LIST   comma-separated token ids\n"
       "  --all-rows      print the hidden rows of every position\n"
       "  --chunk N       prefill chunk size in tokens (default 512; the result does not depend on it)\n"
       "  --threads N     worker threads (default: all cores; env VERDICT_THREADS)\n",
       run_forward},
      {"generate", "greedy decoding from token ids",
       "usage: verdict generate --model DIR --tokens 1,2,3 --max-tokens N [--stop-at-eos] [--chunk N]\n"
       "                        [--threads N]\n\n"
       "Prefills the prompt ids, then decodes greedily (argmax, first maximum on ties) one token at a\n"
       "time from the sequence state, and prints {\"ids\": [...]} (the generated ids only).\n\n"
       "options:\n"
       "  --model DIR       checkpoint folder\n"
       "  --tokens LIST     comma-separated prompt token ids\n"
       "  --max-tokens N    ids to generate (exactly N unless --stop-at-eos)\n"
       "  --stop-at-eos     stop after a stop id of generation_config.json (else config.json)\n"
       "  --chunk N         prefill chunk size (default 512)\n"
       "  --threads N       worker threads (default: all cores; env VERDICT_THREADS)\n",
       run_generate},
  };
  return kCommands;
}

}  // namespace verdict::cli
