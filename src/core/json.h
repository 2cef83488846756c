// JSON parsing for configuration and tokenizer files (nlohmann::json), with errors that name the file.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace verdict {

using Json = nlohmann::json;

// Parses `text`; on malformed JSON throws verdict::Error("<what>: invalid JSON: ...").
Json parse_json(std::string_view text, const std::string& what);
// Reads and parses a file.
Json load_json_file(const std::string& path);

}  // namespace verdict
