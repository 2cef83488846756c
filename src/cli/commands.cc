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
  };
  return kCommands;
}

}  // namespace verdict::cli
