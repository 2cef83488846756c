// Callables and the per-render runtime that builtins see: limits, the work budget and argument binding.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/jinja/value.h"

namespace verdict::chat::jinja {

struct Stmt;
class Scope;

// Resource limits of one render. The defaults leave real chat templates far inside them.
struct Limits {
  std::size_t max_output_bytes = std::size_t{16} << 20;  // also caps every string built
  std::size_t max_items = std::size_t{1} << 20;          // list / dict sizes built by the template
  int64_t max_steps = 5'000'000;                         // statements, loop iterations, work per byte (~2 s)
  int max_depth = 400;                                   // nested evaluation (macro recursion included)
};

class Runtime {
 public:
  explicit Runtime(const Limits& limits) : limits_(limits) {}
  const Limits& limits() const { return limits_; }
  std::size_t max_bytes() const { return limits_.max_output_bytes; }
  // Counts work; throws RenderError once the budget is spent.
  void charge(int64_t steps);
  // Work proportional to `bytes` built or copied.
  void charge_bytes(std::size_t bytes) { charge(1 + static_cast<int64_t>(bytes / 64)); }
  // Throws RenderError when a list or dict of `n` items would pass the limit.
  void check_items(std::size_t n) const;
  void check_bytes(std::size_t n) const;

 private:
  Limits limits_;
  int64_t steps_ = 0;
};

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

// Binds arguments to a Python-style signature: positional in order, then by keyword; an unknown
// keyword, a duplicate or too many positional arguments is a RenderError naming `function`.
class BoundArgs {
 public:
  BoundArgs(const CallArgs& args, std::initializer_list<std::string_view> names, std::string_view function);
  // The argument for parameter i, or null when it was not given.
  const Value* get(std::size_t i) const { return values_[i]; }
  bool has(std::size_t i) const { return values_[i] != nullptr; }

 private:
  std::vector<const Value*> values_;
};

using BuiltinFn = Value (*)(Runtime&, const CallArgs&);
using MethodFn = Value (*)(Runtime&, const Value& self, const CallArgs&);

struct Callable {
  enum class Kind : uint8_t { Builtin, Method, Macro, Caller };
  Kind kind = Kind::Builtin;
  std::string name;
  BuiltinFn builtin = nullptr;
  MethodFn method = nullptr;
  Value receiver;                // Method: the bound object
  const Stmt* stmt = nullptr;    // Macro: the macro statement; Caller: the call block
  std::weak_ptr<Scope> closure;  // Macro/Caller: where it was defined (the root scope once that is gone)
};

// "<function range>", "<macro render_content>", "<method startswith>".
std::string describe(const Callable& c);

}  // namespace verdict::chat::jinja
