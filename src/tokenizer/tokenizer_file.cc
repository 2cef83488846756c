#include "tokenizer/tokenizer_file.h"

#include "core/error.h"
#include "tokenizer/json_fields.h"

namespace verdict::tokenizer {

namespace {

constexpr std::size_t kMaxDepth = 512;

// SAX handler: builds the tree, except for model.vocab / model.merges, which it reads into tables.
class Reader {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  explicit Reader(TokenizerFile& out) : out_(out) {}

  bool null() { return value(Json(nullptr)); }
  bool boolean(bool v) { return value(Json(v)); }
  bool number_integer(number_integer_t v) { return value(Json(v)); }
  bool number_unsigned(number_unsigned_t v) { return value(Json(v)); }
  bool number_float(number_float_t v, const string_t&) { return value(Json(v)); }
  bool string(string_t& v) { return value(Json(std::move(v))); }
  bool binary(binary_t&) { return value(Json(nullptr)); }

  bool start_object(std::size_t) {
    if (mode_ == Mode::VocabKey) {  // model.vocab is an object: read it flat
      mode_ = Mode::Vocab;
      out_.tables.has_vocab = true;
      return true;
    }
    if (mode_ == Mode::MergesKey) mode_ = Mode::Tree;  // not an array: keep it in the tree
    if (mode_ != Mode::Tree) return table_value_start();
    if (stack_.size() >= kMaxDepth) return too_deep();
    Json* node = insert(Json::object());
    if (node == nullptr) return false;
    stack_.push_back(node);
    return true;
  }

  bool key(string_t& k) {
    if (mode_ == Mode::Vocab) {
      vocab_key_ = std::move(k);
      return true;
    }
    if (mode_ != Mode::Tree) return true;
    // Directly inside "model" (depth 2 under the root object), "vocab" and "merges" may be taken flat.
    if (stack_.size() == 2 && in_model_) {
      if (k == "vocab") mode_ = Mode::VocabKey;
      else if (k == "merges") mode_ = Mode::MergesKey;
    }
    if (stack_.size() == 1) next_is_model_ = k == "model";
    key_ = std::move(k);
    return true;
  }

  bool end_object() {
    if (mode_ == Mode::Vocab) {
      mode_ = Mode::Tree;
      return true;
    }
    if (mode_ == Mode::Skip) return skip_end();
    if (stack_.size() == 2) in_model_ = false;
    stack_.pop_back();
    return true;
  }

  bool start_array(std::size_t) {
    if (mode_ == Mode::MergesKey) {  // model.merges is an array: read it flat
      mode_ = Mode::Merges;
      out_.tables.has_merges = true;
      return true;
    }
    if (mode_ == Mode::Merges) {  // one ["a", "b"] pair
      mode_ = Mode::Pair;
      pair_.clear();
      return true;
    }
    if (mode_ == Mode::VocabKey) mode_ = Mode::Tree;  // not an object: keep it in the tree
    if (mode_ != Mode::Tree) return table_value_start();
    if (stack_.size() >= kMaxDepth) return too_deep();
    Json* node = insert(Json::array());
    if (node == nullptr) return false;
    stack_.push_back(node);
    return true;
  }

  bool end_array() {
    if (mode_ == Mode::Pair) {
      if (pair_.size() == 2) out_.tables.merges.emplace_back(std::move(pair_[0]), std::move(pair_[1]));
      else merge_error("an array of " + std::to_string(pair_.size()) + " strings");
      mode_ = Mode::Merges;
      return true;
    }
    if (mode_ == Mode::Merges) {
      mode_ = Mode::Tree;
      return true;
    }
    if (mode_ == Mode::Skip) return skip_end();
    stack_.pop_back();
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    error_ = std::string("invalid JSON: ") + e.what();
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  enum class Mode { Tree, VocabKey, Vocab, MergesKey, Merges, Pair, Skip };

  bool value(Json&& v) {
    switch (mode_) {
      case Mode::Tree:
        return insert(std::move(v)) != nullptr;
      case Mode::VocabKey:
      case Mode::MergesKey:
        mode_ = Mode::Tree;  // not an object / array: keep it in the tree for the model to judge
        return insert(std::move(v)) != nullptr;
      case Mode::Vocab:
        if (v.is_number_integer()) {
          out_.tables.vocab.emplace_back(std::move(vocab_key_), v.get<int64_t>());
        } else if (out_.tables.vocab_error.empty()) {
          out_.tables.vocab_error = "vocab entry '" + vocab_key_ + "' has invalid id " + detail::show(v);
        }
        return true;
      case Mode::Merges:
        if (v.is_string()) legacy_merge(v.get_ref<const std::string&>());
        else merge_error(detail::show(v));
        return true;
      case Mode::Pair:
        if (v.is_string()) pair_.push_back(std::move(v.get_ref<std::string&>()));
        else pair_.resize(3);  // not a string: the pair is malformed
        return true;
      case Mode::Skip:
        return true;
    }
    return true;
  }

  // Inserts into the current container; returns the stored value.
  Json* insert(Json&& v) {
    if (stack_.empty()) {
      out_.root = std::move(v);
      return &out_.root;
    }
    Json* parent = stack_.back();
    if (parent->is_array()) {
      parent->push_back(std::move(v));
      return &parent->back();
    }
    if (stack_.size() == 1 && next_is_model_ && v.is_object()) in_model_ = true;
    Json& slot = (*parent)[key_];
    slot = std::move(v);
    return &slot;
  }

  // An object or array where a table expects a scalar: note the error and skip the subtree.
  bool table_value_start() {
    if (mode_ == Mode::Vocab) {
      if (out_.tables.vocab_error.empty())
        out_.tables.vocab_error = "vocab entry '" + vocab_key_ + "' has invalid id (not an integer)";
    } else if (mode_ == Mode::Pair) {
      pair_.resize(3);
    } else if (mode_ == Mode::Merges) {
      merge_error("a nested object");
    }
    if (mode_ != Mode::Skip) {
      skip_return_ = mode_;
      skip_depth_ = 0;
      mode_ = Mode::Skip;
    }
    ++skip_depth_;
    return true;
  }

  bool skip_end() {
    if (--skip_depth_ == 0) mode_ = skip_return_;
    return true;
  }

  void legacy_merge(const std::string& line) {
    const std::size_t space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
      merge_error("\"" + line + "\" (not two tokens separated by one space)");
      return;
    }
    out_.tables.merges.emplace_back(line.substr(0, space), line.substr(space + 1));
  }

  void merge_error(const std::string& got) {
    if (out_.tables.merges_error.empty()) {
      out_.tables.merges_error = "merge " + std::to_string(out_.tables.merges.size()) +
                                 " must be [\"a\", \"b\"] or \"a b\", got " + got;
    }
    out_.tables.merges.emplace_back();  // keeps the rank of the entries after it
  }

  bool too_deep() {
    error_ = "invalid JSON: nesting deeper than " + std::to_string(kMaxDepth) + " levels";
    return false;
  }

  TokenizerFile& out_;
  std::vector<Json*> stack_;
  std::string key_;
  std::string vocab_key_;
  std::vector<std::string> pair_;
  Mode mode_ = Mode::Tree;
  Mode skip_return_ = Mode::Tree;
  std::size_t skip_depth_ = 0;
  bool next_is_model_ = false;
  bool in_model_ = false;
  std::string error_;
};

}  // namespace

TokenizerFile parse_tokenizer_file(std::string_view text, const std::string& what) {
  TokenizerFile file;
  Reader reader(file);
  bool ok = false;
  try {
    ok = Json::sax_parse(text.begin(), text.end(), &reader);
  } catch (const Json::exception& e) {
    throw Error(what + ": invalid JSON: " + e.what());
  }
  if (!ok) throw Error(what + ": " + (reader.error().empty() ? std::string("invalid JSON") : reader.error()));
  return file;
}

}  // namespace verdict::tokenizer
