// The canonical JSON writer of clef-decision.md §4.6: CPython's
// json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True), byte for byte,
// plus the unsorted compact writer used for responses (systemone-api.md §2.7).
#pragma once
#include <string>
#include <string_view>

#include "decision/json_value.h"

namespace verdict::decision {

// render(value) of the Clef reference: a string is returned as is (no quotes, no escaping); any
// other value is written canonically (sorted keys at every depth, compact, CPython float repr).
std::string render(const Value& value);

// Compact JSON. With sort_keys, object members are sorted by key in code-point order (= UTF-8 byte
// order); otherwise they are written in their stored order. Throws verdict::Error for a non-finite
// float (verdict never writes NaN or Infinity).
std::string write_json(const Value& value, bool sort_keys);
void write_json(const Value& value, bool sort_keys, std::string& out);

// CPython repr(float) for a finite double: "1e-05", "0.0001", "1250.0", "-0.0", "1e+16".
// Throws verdict::Error for NaN or infinity.
std::string format_float(double d);

// Appends `s` as a JSON string literal with the escapes of §4.6 (two-character escapes for
// \" \\ \b \f \n \r \t, \u00xx with lowercase hex for the other C0 controls, everything else raw).
void append_json_string(std::string& out, std::string_view s);

}  // namespace verdict::decision
