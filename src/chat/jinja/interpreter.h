// Executes a Program against a context. Scoping follows Jinja2: the context and top-level `set`s
// live in the root scope; a for loop and a macro call each get a child scope (assignments inside do
// not leak out; namespace() objects are how templates carry values out of loops); `if` adds none.
// Macros see the scope they were defined in (held weakly: a macro value never keeps a scope alive).
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/jinja/ast.h"
#include "chat/jinja/callable.h"

namespace verdict::chat::jinja {

class Scope {
 public:
  explicit Scope(std::shared_ptr<Scope> parent) : parent_(std::move(parent)) {}
  // The innermost binding of `name`, or null.
  const Value* find(std::string_view name) const;
  void set(std::string_view name, Value value);

 private:
  std::shared_ptr<Scope> parent_;
  std::vector<std::pair<std::string, Value>> vars_;
};

// Renders `program` with the variables of `context` (a dict). Throws RenderError / RaisedException.
std::string render_program(const Program& program, const Value& context, const Limits& limits);

}  // namespace verdict::chat::jinja
