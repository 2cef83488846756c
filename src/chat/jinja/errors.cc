#include "chat/jinja/errors.h"

namespace verdict::chat::jinja {

std::string at_position(SourcePos pos, const std::string& message) {
  if (pos.line <= 0) return message;
  return "line " + std::to_string(pos.line) + ", column " + std::to_string(pos.column) + ": " + message;
}

}  // namespace verdict::chat::jinja
