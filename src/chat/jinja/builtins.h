// The filters, tests, global functions and methods templates may use. The checker refuses any other
// name when the template is loaded; the interpreter looks them up here.
#pragma once
#include <string_view>

#include "chat/jinja/callable.h"

namespace verdict::chat::jinja {

using FilterFn = Value (*)(Runtime&, const Value& operand, const CallArgs& args);
using TestFn = bool (*)(Runtime&, const Value& operand, const CallArgs& args);

// Null when unknown.
FilterFn find_filter(std::string_view name);
TestFn find_test(std::string_view name);
BuiltinFn find_global(std::string_view name);
// The method `name` of `receiver` (str, dict or loop methods), or null.
MethodFn find_method(const Value& receiver, std::string_view name);
// True when some receiver type has a method `name` (for the load-time check).
bool is_method_name(std::string_view name);

// Shared helpers for builtin implementations.
// Python attribute-or-item lookup with dotted paths ("a.b", "items.0"), as Jinja's make_attrgetter.
Value lookup_path(const Value& v, std::string_view path);
// Python int(x) / float(x) semantics for strings; false when `s` does not parse.
bool parse_python_int(std::string_view s, int base, int64_t& out);
bool parse_python_float(std::string_view s, double& out);

}  // namespace verdict::chat::jinja
