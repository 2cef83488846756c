// Helpers for the Jinja tests: render a template source with a JSON context.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "chat/jinja/template.h"

namespace verdict::chat::jinja::testing {

// Parses and renders `source` with the context given as JSON text (an object; "{}" by default).
inline std::string render(const std::string& source, const std::string& context = "{}", const Limits& limits = {}) {
  return Template::parse(source).render(nlohmann::ordered_json::parse(context), limits);
}

// The message of the SyntaxError parse() throws, or "" when it parses.
inline std::string parse_error(const std::string& source) {
  try {
    Template::parse(source);
  } catch (const SyntaxError& e) {
    return e.what();
  }
  return "";
}

// The message of the RenderError render() throws, or "" when it renders.
inline std::string render_error(const std::string& source, const std::string& context = "{}",
                                const Limits& limits = {}) {
  try {
    render(source, context, limits);
  } catch (const RenderError& e) {
    return e.what();
  }
  return "";
}

}  // namespace verdict::chat::jinja::testing
