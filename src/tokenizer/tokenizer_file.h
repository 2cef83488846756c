// Reading tokenizer.json in one streaming pass: the large model.vocab object and model.merges array go
// straight into flat tables (no JSON tree for hundreds of thousands of entries); everything else becomes
// an ordinary Json tree. This keeps loading an 11 MB Qwen tokenizer well under a second.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json.h"

namespace verdict::tokenizer {

struct ModelTables {
  bool has_vocab = false;  // model.vocab was an object and is in `vocab` (else it stays in the tree)
  std::vector<std::pair<std::string, int64_t>> vocab;
  std::string vocab_error;  // first malformed entry, reported when the model is built
  bool has_merges = false;  // model.merges was an array and is in `merges`
  std::vector<std::pair<std::string, std::string>> merges;
  std::string merges_error;
};

struct TokenizerFile {
  Json root;  // the file without model.vocab / model.merges when those were taken into `tables`
  ModelTables tables;
};

// Parses tokenizer.json text; malformed JSON throws verdict::Error("<what>: invalid JSON: ...").
TokenizerFile parse_tokenizer_file(std::string_view text, const std::string& what);

}  // namespace verdict::tokenizer
