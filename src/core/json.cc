#include "core/json.h"

#include <algorithm>

#include "core/error.h"
#include "core/mapped_file.h"

namespace verdict {

int json_nesting_depth(std::string_view text) {
  int depth = 0, max_depth = 0;
  bool in_string = false, escape = false;
  for (char c : text) {
    if (in_string) {
      if (escape) escape = false;
      else if (c == '\\') escape = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') max_depth = std::max(max_depth, ++depth);
    else if (c == ']' || c == '}') --depth;
  }
  return max_depth;
}

Json parse_json(std::string_view text, const std::string& what) {
  try {
    if (json_nesting_depth(text) > 512) throw Error(what + ": invalid JSON: nesting deeper than 512 levels");
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    throw Error(what + ": invalid JSON: " + e.what());
  }
}

Json load_json_file(const std::string& path) { return parse_json(read_text_file(path), path); }

}  // namespace verdict
