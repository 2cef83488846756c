#include "tokenizer/pre_tokenizer.h"

#include <vector>

#include "tokenizer/byte_level.h"
#include "tokenizer/json_fields.h"
#include "tokenizer/regex.h"

namespace verdict::tokenizer {

namespace {

using detail::fail;

enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

struct Range {
  std::size_t begin, end;
  bool is_match;
};

// Split on a regex (or an escaped literal) with one of the five delimiter behaviours and `invert`
// (tokenizers' NormalizedString::split).
class Split final : public PreTokenizer {
 public:
  Split(Regex regex, Behavior behavior, bool invert)
      : regex_(std::move(regex)), behavior_(behavior), invert_(invert) {}

  void pre_tokenize(std::string_view piece, PieceSink next) const override {
    auto emit = [&](std::size_t b, std::size_t e) {
      if (e > b) next(piece.substr(b, e - b));
    };
    if (behavior_ == Behavior::Isolated || behavior_ == Behavior::Removed) {
      // Streamed: no buffering needed.
      const bool keep_matches = behavior_ == Behavior::Isolated || invert_;
      const bool keep_gaps = behavior_ == Behavior::Isolated || !invert_;
      std::size_t prev = 0;
      regex_.for_each_match(piece, [&](std::size_t s, std::size_t e) {
        if (keep_gaps) emit(prev, s);
        if (keep_matches) emit(s, e);
        prev = e;
      });
      if (keep_gaps) emit(prev, piece.size());
      return;
    }
    // The match / gap sequence, then merged by the behaviour.
    std::vector<Range> ranges;
    std::size_t prev = 0;
    regex_.for_each_match(piece, [&](std::size_t s, std::size_t e) {
      if (s != prev) ranges.push_back({prev, s, invert_});
      ranges.push_back({s, e, !invert_});
      prev = e;
    });
    if (prev != piece.size()) ranges.push_back({prev, piece.size(), invert_});

    std::vector<Range> merged;
    merged.reserve(ranges.size());
    bool previous_match = false;
    if (behavior_ == Behavior::MergedWithNext) {
      for (std::size_t k = ranges.size(); k-- > 0;) {
        const Range& r = ranges[k];
        if (r.is_match && !previous_match && !merged.empty()) merged.back().begin = r.begin;
        else merged.push_back(r);
        previous_match = r.is_match;
      }
      for (std::size_t k = merged.size(); k-- > 0;) emit(merged[k].begin, merged[k].end);
      return;
    }
    for (const Range& r : ranges) {
      const bool join = behavior_ == Behavior::Contiguous ? r.is_match == previous_match
                                                          : r.is_match && !previous_match;
      if (join && !merged.empty()) merged.back().end = r.end;
      else merged.push_back(r);
      previous_match = r.is_match;
    }
    for (const Range& r : merged) emit(r.begin, r.end);
  }

  std::string name() const override { return "Split"; }

 private:
  Regex regex_;
  Behavior behavior_;
  bool invert_;
};

constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Byte-level: optional leading space, optional GPT-2 split, then every byte becomes its alphabet char.
class ByteLevel final : public PreTokenizer {
 public:
  ByteLevel(bool add_prefix_space, bool use_regex, const std::string& where)
      : add_prefix_space_(add_prefix_space), use_regex_(use_regex) {
    if (use_regex_) regex_ = std::make_unique<Regex>(Regex::from_pattern(kGpt2Pattern, where));
  }

  void pre_tokenize(std::string_view piece, PieceSink next) const override {
    std::string prefixed;
    if (add_prefix_space_ && piece.front() != ' ') {
      prefixed.reserve(piece.size() + 1);
      prefixed.push_back(' ');
      prefixed.append(piece);
      piece = prefixed;
    }
    std::string buffer;
    auto transform = [&](std::string_view word) {
      buffer.clear();
      byte_level::encode(word, buffer);
      next(buffer);
    };
    if (!use_regex_) {
      transform(piece);
      return;
    }
    std::size_t prev = 0;
    regex_->for_each_match(piece, [&](std::size_t s, std::size_t e) {
      if (s > prev) transform(piece.substr(prev, s - prev));
      if (e > s) transform(piece.substr(s, e - s));
      prev = e;
    });
    if (prev < piece.size()) transform(piece.substr(prev));
  }

  std::string name() const override { return "ByteLevel"; }

 private:
  bool add_prefix_space_;
  bool use_regex_;
  std::unique_ptr<Regex> regex_;
};

class PreTokenizerSequence final : public PreTokenizer {
 public:
  explicit PreTokenizerSequence(std::vector<std::unique_ptr<PreTokenizer>> steps) : steps_(std::move(steps)) {}

  void pre_tokenize(std::string_view piece, PieceSink next) const override { run(0, piece, next); }

  std::string name() const override {
    std::string s = "Sequence[";
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      if (i > 0) s.push_back(',');
      s.append(steps_[i]->name());
    }
    s.push_back(']');
    return s;
  }

 private:
  void run(std::size_t stage, std::string_view piece, PieceSink next) const {
    if (stage == steps_.size()) {
      next(piece);
      return;
    }
    auto forward = [&](std::string_view sub) { run(stage + 1, sub, next); };
    steps_[stage]->pre_tokenize(piece, forward);
  }

  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

Behavior parse_behavior(const Json& spec, const std::string& where) {
  const std::string b = detail::get_string(spec, "behavior", where);
  // tokenizers accepts the Rust variant names; older files used snake_case spellings.
  if (b == "Removed" || b == "removed") return Behavior::Removed;
  if (b == "Isolated" || b == "isolated") return Behavior::Isolated;
  if (b == "MergedWithPrevious" || b == "merged_with_previous") return Behavior::MergedWithPrevious;
  if (b == "MergedWithNext" || b == "merged_with_next") return Behavior::MergedWithNext;
  if (b == "Contiguous" || b == "contiguous") return Behavior::Contiguous;
  fail(where, "unsupported Split behavior '" + b + "'");
}

}  // namespace

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const Json& spec, const std::string& where) {
  if (spec.is_null()) return nullptr;
  const std::string type = detail::type_of(spec, where);
  if (type == "Split") {
    const Json* pattern = detail::member(spec, "pattern");
    if (pattern == nullptr || !pattern->is_object())
      fail(where, "Split needs \"pattern\": {\"Regex\": ...} or {\"String\": ...}");
    const Json* regex = detail::member(*pattern, "Regex");
    const Json* literal = detail::member(*pattern, "String");
    if ((regex == nullptr) == (literal == nullptr) || (regex != nullptr && !regex->is_string()) ||
        (literal != nullptr && !literal->is_string()))
      fail(where, "Split \"pattern\" must be {\"Regex\": string} or {\"String\": string}, got " +
                      detail::show(*pattern));
    Regex compiled = regex != nullptr ? Regex::from_pattern(regex->get<std::string>(), where)
                                      : Regex::from_literal(literal->get<std::string>(), where);
    return std::make_unique<Split>(std::move(compiled), parse_behavior(spec, where),
                                   detail::get_bool(spec, "invert", false, where));
  }
  if (type == "ByteLevel") {
    return std::make_unique<ByteLevel>(detail::get_bool(spec, "add_prefix_space", true, where),
                                       detail::get_bool(spec, "use_regex", true, where), where);
  }
  if (type == "Sequence") {
    const Json* list = detail::member(spec, "pretokenizers");
    if (list == nullptr || !list->is_array()) fail(where, "Sequence needs a \"pretokenizers\" array");
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string at = where + ".pretokenizers[" + std::to_string(i) + "]";
      auto step = make_pre_tokenizer((*list)[i], at);
      if (step == nullptr) fail(at, "null pre-tokenizer in Sequence");
      steps.push_back(std::move(step));
    }
    return std::make_unique<PreTokenizerSequence>(std::move(steps));
  }
  fail(where, "unsupported pre-tokenizer type '" + type + "'");
}

}  // namespace verdict::tokenizer
