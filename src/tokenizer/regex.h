// Regular expressions for tokenizer.json patterns, on PCRE2 (UTF + UCP, JIT-compiled).
//
// Hugging Face compiles these patterns with Oniguruma (Ruby syntax); the few escapes whose meaning differs
// from PCRE2 are rewritten before compiling (see translate_pattern in regex.cc): \s and \S follow
// Oniguruma's White_Space set (PCRE2's \s lacks U+0085), \w and \W the Unicode word class, \h and \H are
// hex digits, \uHHHH is a code point, and ^ / $ are line anchors. Inside a character class the negated
// forms \S, \W, \H keep their PCRE2 meaning (a negated set cannot be nested there). Character properties
// come from PCRE2's Unicode tables (Unicode 14 for PCRE2 10.42).
// Matching never fails loudly: an engine error (a resource limit on a pathological input) ends the
// search as if there were no further match.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace verdict::tokenizer {

class Regex {
 public:
  // Compiles an Oniguruma-syntax pattern; throws verdict::Error("<where>: invalid regex ...").
  static Regex from_pattern(std::string_view pattern, const std::string& where);
  // A pattern matching `literal` exactly.
  static Regex from_literal(std::string_view literal, const std::string& where);

  Regex(Regex&& other) noexcept;
  Regex& operator=(Regex&& other) noexcept;
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  ~Regex();

  // Leftmost match starting at or after `start` in valid UTF-8 `subject`; false when none.
  bool find(std::string_view subject, std::size_t start, std::size_t& match_start,
            std::size_t& match_end) const;

  // Calls on_match(start, end) for every match left to right with the find_iter rule of Oniguruma and
  // Rust: after an empty match the search resumes one character later, and an empty match right where
  // the previous match ended is skipped.
  template <class F>
  void for_each_match(std::string_view subject, F&& on_match) const {
    std::size_t last_end = 0;
    bool have_last = false;
    std::size_t last_match_end = 0;
    while (last_end <= subject.size()) {
      std::size_t s = 0, e = 0;
      if (!find(subject, last_end, s, e)) return;
      if (s == e) {
        last_end = e < subject.size() ? e + char_length(subject, e) : e + 1;
        if (have_last && last_match_end == e) continue;
      } else {
        last_end = e;
      }
      have_last = true;
      last_match_end = e;
      on_match(s, e);
    }
  }

  const std::string& source() const { return source_; }

 private:
  Regex(void* code, std::string source);
  static std::size_t char_length(std::string_view s, std::size_t i);
  void* code_ = nullptr;  // pcre2_code_8*
  std::string source_;
};

// The pattern rewritten for PCRE2 (exposed for tests).
std::string translate_pattern(std::string_view pattern);

}  // namespace verdict::tokenizer
