#include "core/json.h"

#include <algorithm>

#include "core/error.h"
#include "core/mapped_file.h"

namespace verdict {

Json parse_json(std::string_view text, const std::string& what) {
  try {
    // Depth is bounded by nlohmann's recursive parser only by the stack; limit it to keep
    // hostile inputs ("[[[[..." a million deep) from overflowing it.
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
    if (max_depth > 512) throw Error(what + ": invalid JSON: nesting deeper than 512 levels");
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    throw Error(what + ": invalid JSON: " + e.what());
  }
}

Json load_json_file(const std::string& path) { return parse_json(read_text_file(path), path); }

}  // namespace verdict
