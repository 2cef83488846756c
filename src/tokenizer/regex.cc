#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/regex.h"

#include <pcre2.h>

#include <utility>

#include "core/error.h"
#include "core/utf8.h"

namespace verdict::tokenizer {

namespace {

constexpr std::string_view kSpaceSet = "\\s\\x{85}";
constexpr std::string_view kWordSet = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}";
constexpr std::string_view kHexSet = "0-9a-fA-F";

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Per-thread match data, match context and JIT stack, shared by every pattern (only the whole-match
// offsets are read, so one ovector pair serves all of them).
struct MatchState {
  pcre2_match_data* data = nullptr;
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* stack = nullptr;
  MatchState() {
    data = pcre2_match_data_create(1, nullptr);
    context = pcre2_match_context_create(nullptr);
    // Reserved, not committed: a whitespace run needs about one byte of JIT stack per character, so
    // 32 MiB covers any realistic input; beyond that the search ends early (see regex.h).
    stack = pcre2_jit_stack_create(64 * 1024, 32 * 1024 * 1024, nullptr);
    if (context != nullptr && stack != nullptr) pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~MatchState() {
    pcre2_match_data_free(data);
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
  }
  MatchState(const MatchState&) = delete;
  MatchState& operator=(const MatchState&) = delete;
};

MatchState& match_state() {
  thread_local MatchState state;
  return state;
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  int n = pcre2_get_error_message(code, buffer, sizeof buffer);
  if (n < 0) return "error " + std::to_string(code);
  return std::string(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(n));
}

void* compile(const std::string& pcre_pattern, std::string_view shown, const std::string& where) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pcre_pattern.data()), pcre_pattern.size(),
                    PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE, &error, &offset, nullptr);
  if (code == nullptr) {
    throw Error(where + ": invalid regex '" + std::string(shown) + "': " + pcre2_message(error) +
                " (at offset " + std::to_string(offset) + " of the translated pattern)");
  }
  // Without JIT (unsupported platform) pcre2_match falls back to the interpreter.
  (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  return code;
}

}  // namespace

std::string translate_pattern(std::string_view p) {
  std::string out;
  out.reserve(p.size() + 32);
  bool in_class = false;
  std::size_t i = 0;
  const std::size_t n = p.size();
  while (i < n) {
    const char c = p[i];
    if (c == '\\' && i + 1 < n) {
      const char e = p[i + 1];
      switch (e) {
        case 's':
          if (in_class) out += kSpaceSet;
          else out.append("[").append(kSpaceSet).append("]");
          i += 2;
          continue;
        case 'S':
          if (in_class) out += "\\S";  // a negated set cannot be nested in a PCRE2 class
          else out.append("[^").append(kSpaceSet).append("]");
          i += 2;
          continue;
        case 'w':
          if (in_class) out += kWordSet;
          else out.append("[").append(kWordSet).append("]");
          i += 2;
          continue;
        case 'W':
          if (in_class) out += "\\W";
          else out.append("[^").append(kWordSet).append("]");
          i += 2;
          continue;
        case 'h':
          if (in_class) out += kHexSet;
          else out.append("[").append(kHexSet).append("]");
          i += 2;
          continue;
        case 'H':
          if (in_class) out += "\\H";
          else out.append("[^").append(kHexSet).append("]");
          i += 2;
          continue;
        case 'u':
          if (i + 6 <= n && is_hex(p[i + 2]) && is_hex(p[i + 3]) && is_hex(p[i + 4]) &&
              is_hex(p[i + 5])) {
            out.append("\\x{").append(p.substr(i + 2, 4)).append("}");
            i += 6;
            continue;
          }
          break;
        default:
          break;
      }
      out.push_back(c);
      out.push_back(e);
      i += 2;
      continue;
    }
    if (!in_class) {
      if (c == '[') {
        in_class = true;
        out.push_back(c);
        ++i;
        if (i < n && p[i] == '^') out.push_back(p[i++]);
        if (i < n && p[i] == ']') out.push_back(p[i++]);  // a leading ']' is literal
        continue;
      }
    } else {
      if (c == '[' && i + 1 < n && p[i + 1] == ':') {  // POSIX class [:alpha:]
        const std::size_t close = p.find(":]", i + 2);
        if (close != std::string_view::npos) {
          out.append(p.substr(i, close + 2 - i));
          i = close + 2;
          continue;
        }
      }
      if (c == ']') in_class = false;
    }
    out.push_back(c);
    ++i;
  }
  return out;
}

Regex::Regex(void* code, std::string source) : code_(code), source_(std::move(source)) {}

Regex Regex::from_pattern(std::string_view pattern, const std::string& where) {
  return Regex(compile(translate_pattern(pattern), pattern, where), std::string(pattern));
}

Regex Regex::from_literal(std::string_view literal, const std::string& where) {
  std::string escaped;
  escaped.reserve(literal.size() * 2);
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (char ch : literal) {
    const auto b = static_cast<unsigned char>(ch);
    if (b >= 0x80 || (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')) {
      escaped.push_back(ch);
    } else if (b < 0x20 || b == 0x7F) {
      escaped.append("\\x{").push_back(kHex[b >> 4]);
      escaped.push_back(kHex[b & 15]);
      escaped.push_back('}');
    } else {
      escaped.push_back('\\');
      escaped.push_back(ch);
    }
  }
  return Regex(compile(escaped, literal, where), std::string(literal));
}

Regex::Regex(Regex&& other) noexcept
    : code_(std::exchange(other.code_, nullptr)), source_(std::move(other.source_)) {}

Regex& Regex::operator=(Regex&& other) noexcept {
  if (this != &other) {
    pcre2_code_free(static_cast<pcre2_code*>(code_));
    code_ = std::exchange(other.code_, nullptr);
    source_ = std::move(other.source_);
  }
  return *this;
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

std::size_t Regex::char_length(std::string_view s, std::size_t i) {
  return utf8::sequence_length(static_cast<unsigned char>(s[i]));
}

bool Regex::find(std::string_view subject, std::size_t start, std::size_t& match_start,
                 std::size_t& match_end) const {
  if (start > subject.size()) return false;
  MatchState& state = match_state();
  if (state.data == nullptr) return false;
  const int rc = pcre2_match(static_cast<const pcre2_code*>(code_),
                             reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), start,
                             PCRE2_NO_UTF_CHECK, state.data, state.context);
  if (rc < 0) return false;  // no match, or a resource limit: treat as no further match
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(state.data);
  match_start = ovector[0];
  match_end = ovector[1];
  // \K can move the reported start; keep the iteration moving forward whatever it reports.
  if (match_end < start) return false;
  if (match_start > match_end || match_start < start) match_start = match_end;
  return true;
}

}  // namespace verdict::tokenizer
