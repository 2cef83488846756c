// Splits a Jinja template into text and tag tokens, with Jinja2's whitespace rules:
//   * newlines are normalised to "\n" and one trailing newline is dropped (keep_trailing_newline off);
//   * `{%-`, `{{-`, `{#-` strip all whitespace before the tag, `-%}`, `-}}`, `-#}` all after it;
//   * trim_blocks removes the first newline after a block or comment tag (`+%}` disables it);
//   * lstrip_blocks removes spaces and tabs between the start of a line and a block or comment tag
//     (`{%+` disables it);
//   * `{% raw %}…{% endraw %}` is passed through as text.
// Inside a tag, the end delimiter only counts outside brackets (`{{ {'a': {'b': 1}} }}` works).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja/errors.h"

namespace verdict::chat::jinja {

struct LexOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
  bool keep_trailing_newline = false;
};

enum class TokenType : uint8_t {
  Text,
  VarBegin,    // {{
  VarEnd,      // }}
  BlockBegin,  // {%
  BlockEnd,    // %}
  Name,
  String,  // text holds the decoded value
  Integer,
  Float,
  Operator,  // text holds the operator ("+", "//", "==", "(", ...)
  End,       // end of the template
};

struct Token {
  TokenType type = TokenType::End;
  std::string text;
  int64_t int_value = 0;
  double float_value = 0;
  SourcePos pos;
};

// Throws SyntaxError (unterminated tag, comment or string, an unexpected character, ...).
std::vector<Token> tokenize(std::string_view source, const LexOptions& options);

}  // namespace verdict::chat::jinja
