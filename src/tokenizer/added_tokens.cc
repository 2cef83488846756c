#include "tokenizer/added_tokens.h"

#include <algorithm>

#include "tokenizer/unicode_class.h"
#include "core/utf8.h"

namespace verdict::tokenizer {

namespace {

bool word_char(char32_t c) { return is_word_char(c); }
bool is_space(char32_t c) { return is_white_space(c); }

bool ends_with_word(std::string_view s) {
  if (s.empty()) return false;
  std::size_t end = s.size();
  return word_char(utf8::prev_code_point(s, end));
}

bool starts_with_word(std::string_view s) {
  if (s.empty()) return false;
  std::size_t i = 0;
  return word_char(utf8::next_code_point(s, i));
}

// Start of the whitespace run that ends `s`.
std::size_t trailing_space_start(std::string_view s) {
  std::size_t end = s.size();
  while (end > 0) {
    std::size_t prev = end;
    if (!is_space(utf8::prev_code_point(s, prev))) break;
    end = prev;
  }
  return end;
}

// Length of the whitespace run that starts `s`.
std::size_t leading_space_length(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t next = i;
    if (!is_space(utf8::next_code_point(s, next))) break;
    i = next;
  }
  return i;
}

}  // namespace

int32_t PatternSet::child(int32_t node, uint8_t byte) const {
  const auto& children = nodes_[static_cast<std::size_t>(node)].children;
  auto it = std::lower_bound(children.begin(), children.end(), byte,
                             [](const std::pair<uint8_t, int32_t>& c, uint8_t b) { return c.first < b; });
  if (it == children.end() || it->first != byte) return -1;
  return it->second;
}

void PatternSet::add(std::string_view pattern, int32_t value) {
  if (pattern.empty()) return;
  int32_t node = 0;
  for (char ch : pattern) {
    const auto byte = static_cast<uint8_t>(ch);
    int32_t next = child(node, byte);
    if (next < 0) {
      next = static_cast<int32_t>(nodes_.size());
      nodes_.emplace_back();
      auto& children = nodes_[static_cast<std::size_t>(node)].children;
      auto it = std::lower_bound(children.begin(), children.end(), byte,
                                 [](const std::pair<uint8_t, int32_t>& c, uint8_t b) { return c.first < b; });
      children.insert(it, {byte, next});
    }
    node = next;
  }
  if (nodes_[static_cast<std::size_t>(node)].value < 0) nodes_[static_cast<std::size_t>(node)].value = value;
  first_byte_[static_cast<uint8_t>(pattern.front())] = true;
}

void AddedVocabulary::split(std::string_view text, const PatternSet& set, bool parse_special,
                            std::vector<Segment>& out) const {
  // tokenizers' AddedVocabulary::find_matches, flag for flag.
  std::size_t start_offset = 0;
  set.for_each_match(text, [&](std::size_t start, std::size_t stop, int32_t index) {
    const AddedToken& token = tokens_[static_cast<std::size_t>(index)];
    if (!parse_special && token.special) return;
    if (token.single_word) {
      const bool start_space = start == 0 || !ends_with_word(text.substr(0, start));
      const bool stop_space = stop == text.size() || !starts_with_word(text.substr(stop));
      if (!start_space || !stop_space) return;
    }
    if (token.lstrip) start = std::max(trailing_space_start(text.substr(0, start)), start_offset);
    if (token.rstrip) stop += leading_space_length(text.substr(stop));
    if (start_offset < start) out.push_back(Segment{start_offset, start, -1});
    out.push_back(Segment{start, stop, token.id});
    start_offset = stop;
  });
  if (start_offset < text.size()) out.push_back(Segment{start_offset, text.size(), -1});
}

}  // namespace verdict::tokenizer
