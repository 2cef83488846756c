#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <unordered_set>

#include "core/error.h"
#include "core/json.h"
#include "core/mapped_file.h"
#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe.h"
#include "tokenizer/decoder.h"
#include "tokenizer/json_fields.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer_file.h"
#include "core/utf8.h"

namespace verdict::tokenizer {

namespace {

using detail::fail;

constexpr int64_t kMaxAddedId = (int64_t{1} << 24) - 1;

std::vector<AddedToken> parse_added_tokens(const Json& root, const std::string& what) {
  std::vector<AddedToken> tokens;
  const Json* list = detail::member(root, "added_tokens");
  if (list == nullptr) return tokens;
  if (!list->is_array()) fail(what + ": added_tokens", "must be an array");
  std::unordered_set<std::string> seen;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Json& entry = (*list)[i];
    const std::string where = what + ": added_tokens[" + std::to_string(i) + "]";
    detail::require_object(entry, where);
    const Json* id = detail::member(entry, "id");
    if (id == nullptr || !id->is_number_integer() || id->get<int64_t>() < 0 || id->get<int64_t>() > kMaxAddedId)
      fail(where, "missing or invalid \"id\"");
    AddedToken t;
    t.id = static_cast<TokenId>(id->get<int64_t>());
    t.content = detail::get_string(entry, "content", where);
    t.special = detail::get_bool(entry, "special", false, where);
    t.lstrip = detail::get_bool(entry, "lstrip", false, where);
    t.rstrip = detail::get_bool(entry, "rstrip", false, where);
    t.single_word = detail::get_bool(entry, "single_word", false, where);
    t.normalized = detail::get_bool(entry, "normalized", !t.special, where);
    if (t.content.empty()) continue;  // Hugging Face ignores empty added tokens
    if (seen.insert(t.content).second) tokens.push_back(std::move(t));  // a repeated content keeps the first
  }
  return tokens;
}

}  // namespace

class TokenizerImpl {
 public:
  TokenizerImpl(TokenizerFile&& file, const std::string& what) {
    const Json& root = file.root;
    detail::require_object(root, what);
    if (const Json* version = detail::member(root, "version")) {
      if (!version->is_string() || version->get<std::string>() != "1.0")
        fail(what, "unsupported tokenizer.json version " + detail::show(*version));
    }
    const Json* model = detail::member(root, "model");
    if (model == nullptr) fail(what, "missing \"model\"");
    static const Json kNull;
    auto part = [&](const char* key) -> const Json& {
      const Json* v = detail::member(root, key);
      return v != nullptr ? *v : kNull;
    };
    normalizer_ = make_normalizer(part("normalizer"), what + ": normalizer");
    pre_tokenizer_ = make_pre_tokenizer(part("pre_tokenizer"), what + ": pre_tokenizer");
    model_ = BpeModel::from_json(*model, std::move(file.tables), what + ": model");
    decoder_ = make_decoder(part("decoder"), what + ": decoder");
    added_.build(parse_added_tokens(root, what), [&](const std::string& content) {
      if (normalizer_ == nullptr) return content;
      std::string out;
      normalizer_->normalize(content, out);
      return out;
    });

    TokenId max_id = model_->max_id();
    for (const AddedToken& t : added_.tokens()) max_id = std::max(max_id, t.id);
    vocab_size_ = static_cast<std::size_t>(max_id + 1);

    // Per-id tables: what each id decodes to and whether it is special.
    bytes_.assign(vocab_size_, std::string());
    known_.assign(vocab_size_, 0);
    special_.assign(vocab_size_, 0);
    added_index_.assign(vocab_size_, -1);
    auto render = [&](TokenId id, std::string_view token) {
      std::string& b = bytes_[static_cast<std::size_t>(id)];
      b.clear();
      if (decoder_ != nullptr) decoder_->append_token_bytes(token, b);
      else b.assign(token);
      known_[static_cast<std::size_t>(id)] = 1;
    };
    for (TokenId id = 0; id <= model_->max_id(); ++id)
      if (const std::string* token = model_->id_to_token(id)) render(id, *token);
    for (std::size_t i = 0; i < added_.tokens().size(); ++i) {
      const AddedToken& t = added_.tokens()[i];
      render(t.id, t.content);
      special_[static_cast<std::size_t>(t.id)] = t.special ? 1 : 0;
      added_index_[static_cast<std::size_t>(t.id)] = static_cast<int32_t>(i);
      added_ids_.emplace(t.content, t.id);
    }
  }

  std::vector<TokenId> encode(std::string_view input, bool parse_special) const {
    std::string repaired;
    const std::string_view text = utf8::repair(input, repaired);
    std::vector<TokenId> ids;
    ids.reserve(text.size() / 3 + 8);
    std::vector<Segment> segments;
    added_.split_raw(text, parse_special, segments);
    std::string normalized;
    std::vector<Segment> inner;
    for (const Segment& seg : segments) {
      if (seg.id >= 0) {
        ids.push_back(seg.id);
        continue;
      }
      std::string_view piece = text.substr(seg.begin, seg.end - seg.begin);
      if (normalizer_ != nullptr) {
        normalizer_->normalize(piece, normalized);
        piece = normalized;
      }
      if (!added_.has_normalized()) {
        encode_words(piece, ids);
        continue;
      }
      inner.clear();
      added_.split_normalized(piece, parse_special, inner);
      for (const Segment& sub : inner) {
        if (sub.id >= 0) ids.push_back(sub.id);
        else encode_words(piece.substr(sub.begin, sub.end - sub.begin), ids);
      }
    }
    return ids;
  }

  void encode_words(std::string_view text, std::vector<TokenId>& ids) const {
    if (text.empty()) return;
    if (pre_tokenizer_ == nullptr) {
      model_->tokenize(text, ids);
      return;
    }
    pre_tokenizer_->pre_tokenize(text, [&](std::string_view word) { model_->tokenize(word, ids); });
  }

  void check_id(TokenId id) const {
    if (id < 0 || static_cast<std::size_t>(id) >= vocab_size_ || !known_[static_cast<std::size_t>(id)])
      throw Error("tokenizer: token id " + std::to_string(id) + " is not in the vocabulary (" +
                  std::to_string(vocab_size_) + " ids)");
  }

  std::string decode(std::span<const TokenId> ids, bool skip_special) const {
    std::string bytes;
    bool first = true;
    for (TokenId id : ids) {
      check_id(id);
      if (skip_special && special_[static_cast<std::size_t>(id)]) continue;
      if (decoder_ == nullptr && !first) bytes.push_back(' ');
      bytes.append(bytes_[static_cast<std::size_t>(id)]);
      first = false;
    }
    std::string out;
    out.reserve(bytes.size());
    utf8::append_lossy(out, bytes);
    return out;
  }

  std::string normalize(std::string_view input) const {
    std::string repaired;
    const std::string_view text = utf8::repair(input, repaired);
    if (normalizer_ == nullptr) return std::string(text);
    std::string out;
    normalizer_->normalize(text, out);
    return out;
  }

  std::optional<TokenId> token_to_id(std::string_view token) const {
    if (auto it = added_ids_.find(token); it != added_ids_.end()) return it->second;
    return model_->token_to_id(token);
  }

  std::string id_to_token(TokenId id) const {
    if (id < 0 || static_cast<std::size_t>(id) >= vocab_size_) return "";
    const int32_t added = added_index_[static_cast<std::size_t>(id)];
    if (added >= 0) return added_.tokens()[static_cast<std::size_t>(added)].content;
    const std::string* token = model_->id_to_token(id);
    return token != nullptr ? *token : "";
  }

  const std::string& token_bytes(TokenId id) const {
    check_id(id);
    return bytes_[static_cast<std::size_t>(id)];
  }

  bool is_special(TokenId id) const {
    return id >= 0 && static_cast<std::size_t>(id) < vocab_size_ && special_[static_cast<std::size_t>(id)];
  }

  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<BpeModel> model_;
  std::unique_ptr<Decoder> decoder_;
  AddedVocabulary added_;
  std::size_t vocab_size_ = 0;
  std::vector<std::string> bytes_;
  std::vector<uint8_t> known_;
  std::vector<uint8_t> special_;
  std::vector<int32_t> added_index_;
  StringIdMap added_ids_;
};

Tokenizer::Tokenizer(std::unique_ptr<TokenizerImpl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::from_file(const std::string& path) { return from_json(read_text_file(path), path); }

Tokenizer Tokenizer::from_json(std::string_view json_text, const std::string& what) {
  return Tokenizer(std::make_unique<TokenizerImpl>(parse_tokenizer_file(json_text, what), what));
}

std::vector<TokenId> Tokenizer::encode(std::string_view text, bool parse_special) const {
  return impl_->encode(text, parse_special);
}

std::string Tokenizer::decode(std::span<const TokenId> ids, bool skip_special) const {
  return impl_->decode(ids, skip_special);
}

std::string Tokenizer::normalize(std::string_view text) const { return impl_->normalize(text); }
std::size_t Tokenizer::vocab_size() const { return impl_->vocab_size_; }
std::size_t Tokenizer::model_vocab_size() const { return impl_->model_->vocab_size(); }
std::optional<TokenId> Tokenizer::token_to_id(std::string_view token) const { return impl_->token_to_id(token); }
std::string Tokenizer::id_to_token(TokenId id) const { return impl_->id_to_token(id); }
std::string Tokenizer::token_bytes(TokenId id) const { return impl_->token_bytes(id); }
bool Tokenizer::is_special(TokenId id) const { return impl_->is_special(id); }
const std::vector<AddedToken>& Tokenizer::added_tokens() const { return impl_->added_.tokens(); }

std::string Tokenizer::normalizer_name() const {
  return impl_->normalizer_ != nullptr ? impl_->normalizer_->name() : "none";
}
std::string Tokenizer::pre_tokenizer_name() const {
  return impl_->pre_tokenizer_ != nullptr ? impl_->pre_tokenizer_->name() : "none";
}
std::string Tokenizer::model_type() const { return "BPE"; }
std::string Tokenizer::decoder_name() const {
  return impl_->decoder_ != nullptr ? impl_->decoder_->name() : "none";
}

}  // namespace verdict::tokenizer
