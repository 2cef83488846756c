// A Jinja2 template engine for chat templates (verdict::chat::jinja).
//
//   auto t = jinja::Template::parse(source);          // SyntaxError: malformed or unsupported
//   std::string s = t.render(context);                 // RenderError / RaisedException
//
// It implements the part of Jinja2 that Hugging Face chat templates use, with the environment
// transformers renders them in: trim_blocks and lstrip_blocks on, Python semantics for values and
// operators, transformers' `tojson` (json.dumps, ensure_ascii=False, keys in the given order),
// `raise_exception` and `strftime_now` globals, the loop-controls extension (break/continue) and
// the `generation` block. Undefined values are lenient as in @huggingface/jinja: a missing
// variable or attribute (also of an undefined value) is undefined, falsy, and prints as "".
//
// parse() checks every filter, test, function and method name; a template that uses something this
// engine lacks is refused there, with its line and column. A Template is immutable and cheap to
// copy; render() may run on many threads at once. Rendering is bounded (Limits): output size,
// list sizes, work and nesting depth, so hostile templates or data cannot exhaust memory or stack.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "chat/jinja/callable.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/lexer.h"
#include "chat/jinja/value.h"

namespace verdict::chat::jinja {

struct Program;

class Template {
 public:
  // Throws SyntaxError.
  static Template parse(std::string_view source, const LexOptions& options = {});

  // `context` must be a dict (or undefined for no variables).
  std::string render(const Value& context, const Limits& limits = {}) const;
  std::string render(const nlohmann::ordered_json& context, const Limits& limits = {}) const;

  // True when some for loop iterates a message `content` (the template understands OpenAI content
  // part lists); false when it treats content as a string.
  bool iterates_content() const;

 private:
  explicit Template(std::shared_ptr<const Program> program) : program_(std::move(program)) {}
  std::shared_ptr<const Program> program_;
};

}  // namespace verdict::chat::jinja
