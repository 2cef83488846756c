// Added tokens of tokenizer.json ("added_tokens"): found in text with leftmost-longest matching (Hugging
// Face's Aho-Corasick MatchKind::LeftmostLongest) and the flags single_word, lstrip, rstrip, special.
// Tokens with normalized = false are matched in the raw text, those with normalized = true in the
// normalized pieces, against their normalized content.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace verdict::tokenizer {

// One piece of a split: plain text (id < 0) or an added token.
struct Segment {
  std::size_t begin;
  std::size_t end;
  TokenId id;
};

// A set of literal patterns with leftmost-longest, non-overlapping search (a byte trie).
class PatternSet {
 public:
  // Adds `pattern` (non-empty) for token index `value`; a duplicate pattern keeps the first value.
  void add(std::string_view pattern, int32_t value);
  bool empty() const { return nodes_.size() <= 1; }

  // Calls on_match(start, end, value) for each match, left to right, resuming after each match.
  template <class F>
  void for_each_match(std::string_view text, F&& on_match) const {
    if (empty()) return;
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    std::size_t i = 0;
    while (i < n) {
      if (!first_byte_[p[i]]) {
        ++i;
        continue;
      }
      int32_t best_value = -1;
      std::size_t best_end = 0;
      int32_t node = 0;
      for (std::size_t k = i; k < n; ++k) {
        node = child(node, p[k]);
        if (node < 0) break;
        if (nodes_[static_cast<std::size_t>(node)].value >= 0) {
          best_value = nodes_[static_cast<std::size_t>(node)].value;
          best_end = k + 1;
        }
      }
      if (best_value < 0) {
        ++i;
        continue;
      }
      on_match(i, best_end, best_value);
      i = best_end;
    }
  }

 private:
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> children;  // sorted by byte
    int32_t value = -1;
  };
  int32_t child(int32_t node, uint8_t byte) const;
  std::vector<Node> nodes_{Node{}};
  std::array<bool, 256> first_byte_{};
};

class AddedVocabulary {
 public:
  AddedVocabulary() = default;
  // `normalize` gives the normalized form of a token's content (for normalized = true tokens).
  template <class Normalize>
  void build(std::vector<AddedToken> tokens, Normalize&& normalize) {
    tokens_ = std::move(tokens);
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
      const AddedToken& t = tokens_[i];
      if (t.content.empty()) continue;
      if (t.normalized) normalized_.add(normalize(t.content), static_cast<int32_t>(i));
      else raw_.add(t.content, static_cast<int32_t>(i));
    }
  }

  const std::vector<AddedToken>& tokens() const { return tokens_; }
  bool has_normalized() const { return !normalized_.empty(); }

  // Splits `text` on the non-normalized (raw) or the normalized tokens, appending the segments (which
  // cover `text`, empty ones left out) to `out`. With parse_special = false special tokens are skipped.
  void split_raw(std::string_view text, bool parse_special, std::vector<Segment>& out) const {
    split(text, raw_, parse_special, out);
  }
  void split_normalized(std::string_view text, bool parse_special, std::vector<Segment>& out) const {
    split(text, normalized_, parse_special, out);
  }

 private:
  void split(std::string_view text, const PatternSet& set, bool parse_special, std::vector<Segment>& out) const;
  std::vector<AddedToken> tokens_;
  PatternSet raw_;
  PatternSet normalized_;
};

}  // namespace verdict::tokenizer
