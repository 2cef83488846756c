#include "formats/gguf_tokenizer.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "core/mapped_file.h"

namespace verdict::formats {
namespace {

struct PreTokenizer {
  std::string_view name;   // tokenizer.ggml.pre
  std::string_view regex;  // the Split pattern of the tokenizer.json files it stands for
};

constexpr std::array<PreTokenizer, 2> kPreTokenizers = {{
    {"qwen35",
     R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
    {"qwen2",
     R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
}};

std::string join(const std::string& dir, const char* name) { return dir + "/" + name; }

// The regex of the (single) Split pre-tokenizer, or "".
std::string split_regex(const Json& pre) {
  if (!pre.is_object()) return "";
  if (pre.value("type", "") == "Split" && pre.contains("pattern") && pre["pattern"].is_object() &&
      pre["pattern"].contains("Regex") && pre["pattern"]["Regex"].is_string())
    return pre["pattern"]["Regex"].get<std::string>();
  if (pre.value("type", "") == "Sequence" && pre.contains("pretokenizers") && pre["pretokenizers"].is_array())
    for (const Json& p : pre["pretokenizers"])
      if (const std::string r = split_regex(p); !r.empty()) return r;
  return "";
}

bool looks_special(const std::string& token) {
  return token.size() >= 4 && token.rfind("<|", 0) == 0 && token.compare(token.size() - 2, 2, "|>") == 0;
}

}  // namespace

std::vector<std::pair<std::string, GgufValue>> gguf_tokenizer_metadata(const std::string& dir, int64_t vocab_size) {
  const std::string tok_path = join(dir, "tokenizer.json");
  const Json tok = load_json_file(tok_path);
  auto fail = [&](const std::string& problem) -> void { throw Error(tok_path + ": " + problem); };
  if (!tok.is_object() || !tok.contains("model") || !tok["model"].is_object()) fail("no 'model' object");
  const Json& model = tok["model"];
  if (model.value("type", "") != "BPE") fail("only byte-level BPE tokenizers can be written to GGUF");
  if (!model.contains("vocab") || !model["vocab"].is_object()) fail("model has no 'vocab' object");

  const std::string regex = split_regex(tok.value("pre_tokenizer", Json()));
  std::string pre;
  for (const PreTokenizer& p : kPreTokenizers)
    if (regex == p.regex) pre = p.name;
  if (pre.empty()) fail("pre-tokenizer regex is neither the Qwen3.5 nor the Qwen2 pattern; llama.cpp would not know it");

  // id -> (token, type)
  std::map<int64_t, std::pair<std::string, GgufTokenType>> by_id;
  for (auto it = model["vocab"].begin(); it != model["vocab"].end(); ++it) {
    if (!it.value().is_number_integer()) fail("vocab entry '" + it.key() + "' is not an integer id");
    by_id[it.value().get<int64_t>()] = {it.key(), GgufTokenType::Normal};
  }
  std::vector<std::pair<std::string, int64_t>> added;  // content -> id, file order
  if (tok.contains("added_tokens") && tok["added_tokens"].is_array())
    for (const Json& a : tok["added_tokens"]) {
      if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || !a.contains("content") ||
          !a["content"].is_string())
        fail("malformed entry in 'added_tokens'");
      const auto id = a["id"].get<int64_t>();
      const auto content = a["content"].get<std::string>();
      const bool special = a.value("special", false) || looks_special(content);
      by_id[id] = {content, special ? GgufTokenType::Control : GgufTokenType::UserDefined};
      added.emplace_back(content, id);
    }
  if (!by_id.empty() && (by_id.begin()->first < 0 || by_id.rbegin()->first >= vocab_size))
    fail("token id " + std::to_string(by_id.rbegin()->first) + " is outside the vocabulary of " +
         std::to_string(vocab_size) + " embedding rows");

  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  tokens.reserve(static_cast<std::size_t>(vocab_size));
  for (int64_t i = 0; i < vocab_size; ++i) {
    const auto it = by_id.find(i);
    if (it == by_id.end()) {
      tokens.push_back("[PAD" + std::to_string(i) + "]");
      types.push_back(static_cast<int32_t>(GgufTokenType::Unused));
    } else {
      tokens.push_back(it->second.first);
      types.push_back(static_cast<int32_t>(it->second.second));
    }
  }

  std::vector<std::string> merges;
  if (model.contains("merges") && model["merges"].is_array())
    for (const Json& m : model["merges"]) {
      if (m.is_string()) {
        merges.push_back(m.get<std::string>());
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        // Pairs (transformers ≥ 4.45); a space inside a part is written as U+0120, as llama.cpp does.
        auto part = [](std::string s) {
          std::string out;
          for (char ch : s) out += ch == ' ' ? std::string("\xC4\xA0") : std::string(1, ch);
          return out;
        };
        merges.push_back(part(m[0].get<std::string>()) + " " + part(m[1].get<std::string>()));
      } else {
        fail("malformed entry in 'merges'");
      }
    }

  std::vector<std::pair<std::string, GgufValue>> out;
  out.emplace_back("tokenizer.ggml.model", GgufValue::string("gpt2"));
  out.emplace_back("tokenizer.ggml.pre", GgufValue::string(pre));
  out.emplace_back("tokenizer.ggml.tokens", GgufValue::string_array(std::move(tokens)));
  out.emplace_back("tokenizer.ggml.token_type", GgufValue::i32_array(types));
  if (!merges.empty()) out.emplace_back("tokenizer.ggml.merges", GgufValue::string_array(std::move(merges)));

  // Special ids: tokenizer_config.json's "<typ>_token" (matched against the added tokens), then
  // config.json's "<typ>_token_id" (root, then text_config); the first found wins.
  const std::string tc_path = join(dir, "tokenizer_config.json");
  const Json tc = file_exists(tc_path) ? load_json_file(tc_path) : Json::object();
  const std::string cfg_path = join(dir, "config.json");
  const Json cfg = file_exists(cfg_path) ? load_json_file(cfg_path) : Json::object();
  constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kSpecial = {{
      {"bos", "bos"}, {"eos", "eos"}, {"unk", "unknown"}, {"sep", "seperator"}, {"pad", "padding"},
      {"cls", "cls"}, {"mask", "mask"}}};
  std::vector<std::pair<std::string, int64_t>> ids;  // in the order found
  auto set_id = [&](std::string_view typ, const Json& v) {
    if (!v.is_number_integer()) return;
    const auto id = v.get<int64_t>();
    if (id < 0 || id >= vocab_size) return;
    for (const auto& [t, i] : ids)
      if (t == typ) return;
    ids.emplace_back(std::string(typ), id);
  };
  std::vector<std::pair<std::string, bool>> add_flags;
  if (tc.is_object()) {
    for (const auto& [typ, key] : kSpecial) {
      const std::string t(typ);
      if (tc.contains("add_" + t + "_token") && tc["add_" + t + "_token"].is_boolean())
        add_flags.emplace_back(t, tc["add_" + t + "_token"].get<bool>());
      const Json entry = tc.value(t + "_token", Json());
      std::string content;
      if (entry.is_string()) content = entry.get<std::string>();
      else if (entry.is_object() && entry.contains("content") && entry["content"].is_string())
        content = entry["content"].get<std::string>();
      else continue;
      for (const auto& [c, id] : added)
        if (c == content) {
          set_id(typ, Json(id));
          break;
        }
    }
  }
  if (cfg.is_object())
    for (const auto& [typ, key] : kSpecial) {
      const std::string k = std::string(typ) + "_token_id";
      Json v = cfg.value(k, Json());
      if (v.is_null() && cfg.contains("text_config") && cfg["text_config"].is_object())
        v = cfg["text_config"].value(k, Json());
      set_id(typ, v);
    }
  for (const auto& [typ, id] : ids)
    for (const auto& [t, key] : kSpecial)
      if (t == typ)
        out.emplace_back("tokenizer.ggml." + std::string(key) + "_token_id", GgufValue::u32(static_cast<uint32_t>(id)));
  for (const auto& [typ, value] : add_flags)
    out.emplace_back("tokenizer.ggml.add_" + typ + "_token", GgufValue::boolean(value));

  std::optional<std::string> chat_template;
  if (tc.is_object() && tc.contains("chat_template") && tc["chat_template"].is_string())
    chat_template = tc["chat_template"].get<std::string>();
  else if (file_exists(join(dir, "chat_template.jinja")))
    chat_template = read_text_file(join(dir, "chat_template.jinja"));
  if (chat_template) out.emplace_back("tokenizer.chat_template", GgufValue::string(*chat_template));
  return out;
}

std::string tokenizer_json_from_gguf(const GgufFile& f) {
  auto fail = [&](const std::string& problem) -> void { throw Error(f.path() + ": tokenizer: " + problem); };
  const std::string& model = f.get_string("tokenizer.ggml.model");
  if (model != "gpt2") fail("tokenizer.ggml.model '" + model + "' is not supported (only gpt2, byte-level BPE)");
  const std::string& pre = f.get_string("tokenizer.ggml.pre");
  std::string regex;
  for (const PreTokenizer& p : kPreTokenizers)
    if (pre == p.name) regex = p.regex;
  if (regex.empty()) fail("tokenizer.ggml.pre '" + pre + "' is not supported (qwen35, qwen2)");
  const GgufValue& tokens = f.get_array("tokenizer.ggml.tokens");
  const auto* strings = tokens.strings();
  if (strings == nullptr) fail("tokenizer.ggml.tokens is not an array of strings");
  const GgufValue* types = f.find("tokenizer.ggml.token_type");
  if (types != nullptr && types->size() != tokens.size())
    fail("tokenizer.ggml.token_type has " + std::to_string(types->size()) + " entries for " +
         std::to_string(tokens.size()) + " tokens");

  // The vocabulary and the merges (10^5 entries each) are written as text: built as Json they went through an
  // ordered map and a dump, 0.26 s for a Qwen3.5 file. Each string is escaped by Json's own dump, so the text is the
  // one the whole Json's dump gave (the vocabulary in the map's key order), and invalid UTF-8 still throws.
  std::vector<std::pair<std::string_view, std::size_t>> vocab;  // (token, id) of the BPE vocabulary
  vocab.reserve(strings->size());
  Json added = Json::array();
  for (std::size_t i = 0; i < strings->size(); ++i) {
    GgufTokenType type = GgufTokenType::Normal;
    if (types != nullptr) {
      const auto t = types->int_at(i);
      if (!t) fail("tokenizer.ggml.token_type is not an array of integers");
      type = static_cast<GgufTokenType>(*t);
    }
    const std::string& token = (*strings)[i];
    switch (type) {
      case GgufTokenType::Normal:
      case GgufTokenType::Byte:
        vocab.emplace_back(token, i);
        break;
      case GgufTokenType::Control:
      case GgufTokenType::UserDefined:
        added.push_back({{"id", i}, {"content", token}, {"single_word", false}, {"lstrip", false},
                         {"rstrip", false}, {"normalized", false}, {"special", type == GgufTokenType::Control}});
        break;
      default:
        break;  // unused (padding) and unknown ids are never produced
    }
  }
  // Json's object order (std::less on the bytes); a token twice in the vocabulary is refused by name.
  std::stable_sort(vocab.begin(), vocab.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t k = 1; k < vocab.size(); ++k)
    if (vocab[k].first == vocab[k - 1].first) fail("token '" + std::string(vocab[k].first) + "' appears twice");
  const auto quoted = [&](std::string_view text, std::string& out) {
    try {
      out += Json(std::string(text)).dump();
    } catch (const Json::exception& e) {
      fail(std::string("token text is not valid UTF-8 (") + e.what() + ")");
    }
  };
  std::size_t vocab_bytes = 2;
  for (const auto& [token, id] : vocab) vocab_bytes += token.size() + 12;
  std::string vocab_text = "{";
  vocab_text.reserve(vocab_bytes);
  for (const auto& [token, id] : vocab) {
    if (vocab_text.size() > 1) vocab_text += ',';
    quoted(token, vocab_text);
    vocab_text += ':';
    vocab_text += std::to_string(id);
  }
  vocab_text += '}';
  std::string merges_text = "[";
  if (const GgufValue* m = f.find("tokenizer.ggml.merges")) {
    if (m->strings() == nullptr) fail("tokenizer.ggml.merges is not an array of strings");
    std::size_t merges_bytes = 2;
    for (const std::string& s : *m->strings()) merges_bytes += s.size() + 8;
    merges_text.reserve(merges_bytes);
    for (const std::string& s : *m->strings()) {
      const std::size_t space = s.find(' ');
      if (space == std::string::npos || space == 0 || space + 1 == s.size() || s.find(' ', space + 1) != std::string::npos)
        fail("merge '" + s + "' is not two tokens separated by one space");
      if (merges_text.size() > 1) merges_text += ',';
      merges_text += '[';
      quoted(std::string_view(s).substr(0, space), merges_text);
      merges_text += ',';
      quoted(std::string_view(s).substr(space + 1), merges_text);
      merges_text += ']';
    }
  }
  merges_text += ']';
  const Json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}};
  Json tok = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", nullptr},
      {"normalizer", {{"type", "NFC"}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         Json::array({{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}},
                      byte_level})}}},
      {"post_processor", nullptr},
      {"decoder", byte_level},
      {"model",
       {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", ""},
        {"end_of_word_suffix", ""}, {"fuse_unk", false}, {"byte_fallback", false}, {"ignore_merges", false},
        // placeholders for the texts above, found from the end of the dump: the file's strings (the added tokens)
        // come before "model" in the dump's key order, and the keys after it hold fixed text
        {"vocab", "\x01vocab\x01"}, {"merges", "\x01merges\x01"}}},
  };
  tok["added_tokens"] = std::move(added);
  std::string text;
  try {
    text = tok.dump();
  } catch (const Json::exception& e) {
    fail(std::string("token text is not valid UTF-8 (") + e.what() + ")");
  }
  constexpr std::string_view kMerges = "\"\\u0001merges\\u0001\"", kVocab = "\"\\u0001vocab\\u0001\"";
  const std::size_t merges_at = text.rfind(kMerges), vocab_at = text.rfind(kVocab);  // "merges" < "vocab"
  if (merges_at == std::string::npos || vocab_at == std::string::npos || merges_at > vocab_at)
    fail("internal: no placeholders for the vocabulary and the merges");
  std::string out;
  out.reserve(text.size() + vocab_text.size() + merges_text.size());
  out.append(text, 0, merges_at).append(merges_text);
  out.append(text, merges_at + kMerges.size(), vocab_at - merges_at - kMerges.size()).append(vocab_text);
  out.append(text, vocab_at + kVocab.size());
  return out;
}

std::string gguf_model_tokenizer_json(const std::string& gguf_path, std::string* source) {
  const std::size_t slash = gguf_path.find_last_of('/');
  const std::string sibling = (slash == std::string::npos ? std::string() : gguf_path.substr(0, slash + 1)) + "tokenizer.json";
  if (file_exists(sibling)) {
    if (source != nullptr) *source = sibling;
    return read_text_file(sibling);
  }
  if (source != nullptr) *source = gguf_path;
  return tokenizer_json_from_gguf(GgufFile(gguf_path));
}

}  // namespace verdict::formats
