// JSON parsing for configuration and tokenizer files (nlohmann::json), with errors that name the file.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace verdict {

using Json = nlohmann::json;

// The deepest nesting of arrays and objects in `text` (brackets inside strings ignored; for JSON that
// is malformed the count is still an upper bound of what a parser would reach). Checked before
// parsing untrusted text, so that hostile inputs ("[[[[..." a million deep) cannot exhaust the stack.
int json_nesting_depth(std::string_view text);

// Parses `text`; on malformed JSON throws verdict::Error("<what>: invalid JSON: ...").
Json parse_json(std::string_view text, const std::string& what);
// Reads and parses a file.
Json load_json_file(const std::string& path);

}  // namespace verdict
