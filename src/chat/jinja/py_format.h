// How Python prints values, as transformers' Jinja environment does: str() for `{{ x }}`, `~` and the
// `string` filter; repr() inside lists and dicts; json.dumps for `tojson` (transformers overrides
// Jinja2's tojson with json.dumps(x, ensure_ascii=False, indent=indent, separators=separators,
// sort_keys=sort_keys), so keys keep their order and non-ASCII text is written as is).
//
// Every function appends to `out` and throws RenderError once `out` would pass `max_bytes`.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include "chat/jinja/value.h"

namespace verdict::chat::jinja {

// Python repr(float): shortest round-trip digits; fixed notation for exponents -4 … 15 ("1.0",
// "0.0001", "1234.5"), else scientific with a two-digit exponent ("1e+16", "1e-05"); "inf", "nan".
std::string float_repr(double d);

// str(value): undefined → "", None → "None", True → "True", 1.0 → "1.0", lists and dicts as repr.
void append_str(std::string& out, const Value& v, std::size_t max_bytes);
std::string to_str(const Value& v, std::size_t max_bytes);
// repr(value): strings quoted the way Python quotes them ('a', "it's").
void append_repr(std::string& out, const Value& v, std::size_t max_bytes);

struct JsonFormat {
  std::optional<std::string> indent;  // none: one line; else the indentation unit per level
  std::string item_separator = ", ";  // json.dumps defaults: ", " and ": " (", " becomes "," with indent)
  std::string key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;
};

// json.dumps(value). Undefined is written as null; functions and namespaces are RenderErrors.
void append_json(std::string& out, const Value& v, const JsonFormat& format, std::size_t max_bytes);

}  // namespace verdict::chat::jinja
