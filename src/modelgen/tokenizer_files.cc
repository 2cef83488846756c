#include "modelgen/tokenizer_files.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>

#include "core/error.h"
#include "core/json.h"
#include "modelgen/bpe_trainer.h"
#include "modelgen/chat_template.h"
#include "modelgen/corpus.h"

namespace verdict::modelgen {
namespace {

// The Qwen3.5 split pattern (spec §12).
constexpr std::string_view kSplitRegex =
    R"RE((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)RE";

// Merges learned at most (the corpus supports a few thousand).
constexpr std::size_t kMaxLearnedTokens = 256 + 8192;

std::string json_string(std::string_view s) { return Json(std::string(s)).dump(); }

// The n-th filler word in the byte alphabet ("Ġ" is the byte-level space).
std::string filler_word(std::size_t n) {
  static constexpr std::string_view kConsonants = "bdfghjklmnprstvz";
  static constexpr std::string_view kVowels = "aeiou";
  std::string w = byte_symbol(' ');
  for (int k = 0; k < 3; ++k) {
    const std::size_t syllable = n % 80;
    n /= 80;
    w += kConsonants[syllable / 5];
    w += kVowels[syllable % 5];
  }
  return w;
}

nlohmann::ordered_json byte_level() {
  nlohmann::ordered_json j;
  j["type"] = "ByteLevel";
  j["add_prefix_space"] = false;
  j["trim_offsets"] = false;
  j["use_regex"] = false;
  return j;
}

// Everything in tokenizer.json before the vocabulary, in the key order Hugging Face writes, ending with
// `"vocab":` (the caller appends the vocabulary and merges).
std::string tokenizer_json_prefix(const TokenLayout& layout) {
  nlohmann::ordered_json j;
  j["version"] = "1.0";
  j["truncation"] = nullptr;
  j["padding"] = nullptr;
  j["added_tokens"] = nlohmann::ordered_json::array();
  for (const SpecialToken& t : layout.specials) {
    nlohmann::ordered_json a;
    a["id"] = t.id;
    a["content"] = t.content;
    a["single_word"] = false;
    a["lstrip"] = false;
    a["rstrip"] = false;
    a["normalized"] = false;
    a["special"] = t.special;
    j["added_tokens"].push_back(a);
  }
  j["normalizer"] = {{"type", "NFC"}};
  nlohmann::ordered_json split;
  split["type"] = "Split";
  split["pattern"] = {{"Regex", std::string(kSplitRegex)}};
  split["behavior"] = "Isolated";
  split["invert"] = false;
  nlohmann::ordered_json pre;
  pre["type"] = "Sequence";
  pre["pretokenizers"] = nlohmann::ordered_json::array({split, byte_level()});
  j["pre_tokenizer"] = pre;
  j["post_processor"] = byte_level();
  j["decoder"] = byte_level();
  nlohmann::ordered_json model;
  model["type"] = "BPE";
  model["dropout"] = nullptr;
  model["unk_token"] = nullptr;
  model["continuing_subword_prefix"] = "";
  model["end_of_word_suffix"] = "";
  model["fuse_unk"] = false;
  model["byte_fallback"] = false;
  model["ignore_merges"] = false;
  j["model"] = model;
  std::string text = j.dump();
  text.resize(text.size() - 2);  // drop "}}": the model object stays open
  return text + ",\"vocab\":";
}

std::string tokenizer_config(const TokenLayout& layout) {
  Json decoder = Json::object();
  Json additional = Json::array();
  for (const SpecialToken& t : layout.specials) {
    decoder[std::to_string(t.id)] = {{"content", t.content}, {"lstrip", false}, {"normalized", false},
                                     {"rstrip", false},      {"single_word", false}, {"special", t.special}};
    if (t.special && t.content != "<|endoftext|>") additional.push_back(t.content);
  }
  const Json j{{"add_bos_token", false},
               {"add_prefix_space", false},
               {"added_tokens_decoder", decoder},
               {"additional_special_tokens", additional},
               {"bos_token", nullptr},
               {"chat_template", std::string(qwen35_chat_template())},
               {"clean_up_tokenization_spaces", false},
               {"eos_token", "<|im_end|>"},
               {"errors", "replace"},
               {"model_max_length", 262144},
               {"pad_token", "<|endoftext|>"},
               {"split_special_tokens", false},
               {"tokenizer_class", "Qwen2Tokenizer"},
               {"unk_token", nullptr}};
  return j.dump(2) + "\n";
}

}  // namespace

TokenizerFiles make_tokenizer_files(const TokenLayout& layout) {
  const auto regular = static_cast<std::size_t>(layout.regular_tokens);
  const BpeVocab bpe = learn_bpe(training_corpus(), std::min(regular, kMaxLearnedTokens));
  std::vector<std::string> tokens = bpe.tokens;
  std::unordered_set<std::string> seen(tokens.begin(), tokens.end());
  for (const SpecialToken& t : layout.specials) seen.insert(to_byte_symbols(t.content));
  TokenizerFiles files;
  files.learned_merges = bpe.merges.size();
  for (std::size_t n = 0; tokens.size() < regular; ++n) {
    if (n >= 80 * 80 * 80) throw Error("tokenizer generator: ran out of filler words");
    std::string w = filler_word(n);
    if (seen.insert(w).second) {
      tokens.push_back(std::move(w));
      ++files.filler_tokens;
    }
  }

  std::string& out = files.tokenizer_json;
  out = tokenizer_json_prefix(layout);
  out.reserve(out.size() + tokens.size() * 24);
  out += '{';
  for (std::size_t id = 0; id < tokens.size(); ++id) {
    if (id > 0) out += ',';
    out += json_string(tokens[id]);
    out += ':';
    out += std::to_string(id);
  }
  out += "},\"merges\":[";
  for (std::size_t i = 0; i < bpe.merges.size(); ++i) {
    if (i > 0) out += ',';
    out += '[' + json_string(bpe.merges[i].first) + ',' + json_string(bpe.merges[i].second) + ']';
  }
  out += "]}}";
  files.tokenizer_config_json = tokenizer_config(layout);
  return files;
}

}  // namespace verdict::modelgen
