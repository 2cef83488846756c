// Jinja tests (`x is defined`, `x is string`, ...) with Jinja2's meaning on Python values: bool counts
// as a number, strings, lists and dicts are iterable and sequences, only dicts are mappings.
#include <cmath>

#include "chat/jinja/builtins.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/py_format.h"
#include "chat/jinja/text.h"

namespace verdict::chat::jinja {
namespace {

const Value& one_arg(const CallArgs& args, const char* test) {
  if (args.positional.size() != 1 || !args.keyword.empty())
    throw RenderError(std::string("test '") + test + "' takes one argument");
  return args.positional[0];
}

bool is_dict(const Value& v) { return v.is_object() && v.as_object().flavor() == Object::Flavor::Dict; }

bool t_defined(Runtime&, const Value& v, const CallArgs&) { return !v.is_undefined(); }
bool t_undefined(Runtime&, const Value& v, const CallArgs&) { return v.is_undefined(); }
bool t_none(Runtime&, const Value& v, const CallArgs&) { return v.is_none(); }
bool t_boolean(Runtime&, const Value& v, const CallArgs&) { return v.is_bool(); }
bool t_false(Runtime&, const Value& v, const CallArgs&) { return v.is_bool() && !v.as_bool(); }
bool t_true(Runtime&, const Value& v, const CallArgs&) { return v.is_bool() && v.as_bool(); }
bool t_integer(Runtime&, const Value& v, const CallArgs&) { return v.is_int(); }
bool t_float(Runtime&, const Value& v, const CallArgs&) { return v.is_float(); }
bool t_number(Runtime&, const Value& v, const CallArgs&) { return v.is_number() || v.is_bool(); }
bool t_string(Runtime&, const Value& v, const CallArgs&) { return v.is_string(); }
bool t_mapping(Runtime&, const Value& v, const CallArgs&) { return is_dict(v); }
bool t_iterable(Runtime&, const Value& v, const CallArgs&) { return v.is_string() || v.is_array() || is_dict(v); }
bool t_sequence(Runtime&, const Value& v, const CallArgs&) { return v.is_string() || v.is_array() || is_dict(v); }
bool t_callable(Runtime&, const Value& v, const CallArgs&) { return v.is_callable(); }
bool t_escaped(Runtime&, const Value&, const CallArgs&) { return false; }

bool modulo_is(const Value& v, int64_t divisor, int64_t remainder, const char* test) {
  if (v.is_int() || v.is_bool()) {
    const int64_t i = v.is_int() ? v.as_int() : v.as_bool();
    const int64_t r = ((i % divisor) + divisor) % divisor;
    return r == remainder;
  }
  if (v.is_float()) {
    double r = std::fmod(v.as_float(), static_cast<double>(divisor));
    if (r < 0) r += static_cast<double>(divisor);
    return r == static_cast<double>(remainder);
  }
  throw RenderError(std::string("test '") + test + "' expects a number, got '" + v.type_name() + "'");
}

bool t_odd(Runtime&, const Value& v, const CallArgs&) { return modulo_is(v, 2, 1, "odd"); }
bool t_even(Runtime&, const Value& v, const CallArgs&) { return modulo_is(v, 2, 0, "even"); }

bool t_divisibleby(Runtime&, const Value& v, const CallArgs& args) {
  const Value& n = one_arg(args, "divisibleby");
  if (n.is_int() && n.as_int() != 0 && (v.is_int() || v.is_bool())) {
    const int64_t i = v.is_int() ? v.as_int() : v.as_bool();
    if (n.as_int() == -1) return true;
    return i % n.as_int() == 0;
  }
  if ((n.is_number() || n.is_bool()) && (v.is_number() || v.is_bool())) {
    if (n.as_double() == 0) throw RenderError("divisibleby: division by zero");
    return std::fmod(v.as_double(), n.as_double()) == 0;
  }
  throw RenderError("test 'divisibleby' expects numbers");
}

bool t_eq(Runtime&, const Value& v, const CallArgs& args) { return equals(v, one_arg(args, "eq")); }
bool t_ne(Runtime&, const Value& v, const CallArgs& args) { return !equals(v, one_arg(args, "ne")); }
bool t_lt(Runtime&, const Value& v, const CallArgs& args) { return less(v, one_arg(args, "lt")); }
bool t_gt(Runtime&, const Value& v, const CallArgs& args) { return less(one_arg(args, "gt"), v); }
bool t_le(Runtime&, const Value& v, const CallArgs& args) {
  const Value& o = one_arg(args, "le");
  return less(v, o) || equals(v, o);
}
bool t_ge(Runtime&, const Value& v, const CallArgs& args) {
  const Value& o = one_arg(args, "ge");
  return less(o, v) || equals(v, o);
}

bool t_sameas(Runtime&, const Value& v, const CallArgs& args) {
  const Value& o = one_arg(args, "sameas");
  if (v.kind() != o.kind()) return false;
  switch (v.kind()) {
    case Value::Kind::Array: return &v.as_array() == &o.as_array();
    case Value::Kind::Object: return &v.as_object() == &o.as_object();
    case Value::Kind::Callable: return &v.as_callable() == &o.as_callable();
    default: return equals(v, o);
  }
}

bool t_in(Runtime&, const Value& v, const CallArgs& args) {
  const Value& seq = one_arg(args, "in");
  if (seq.is_string()) return v.is_string() && seq.as_string().find(v.as_string()) != std::string::npos;
  if (seq.is_array()) {
    for (const auto& item : seq.as_array())
      if (equals(item, v)) return true;
    return false;
  }
  if (seq.is_object()) return v.is_string() && seq.as_object().find(v.as_string()) != nullptr;
  return false;
}

bool t_lower(Runtime& rt, const Value& v, const CallArgs&) { return text::is_lower(to_str(v, rt.max_bytes())); }
bool t_upper(Runtime& rt, const Value& v, const CallArgs&) { return text::is_upper(to_str(v, rt.max_bytes())); }

bool t_filter(Runtime&, const Value& v, const CallArgs&) {
  return v.is_string() && find_filter(v.as_string()) != nullptr;
}
bool t_test(Runtime&, const Value& v, const CallArgs&) { return v.is_string() && find_test(v.as_string()) != nullptr; }

struct TestEntry {
  std::string_view name;
  TestFn fn;
};

constexpr TestEntry kTests[] = {
    {"boolean", t_boolean},
    {"callable", t_callable},
    {"defined", t_defined},
    {"divisibleby", t_divisibleby},
    {"eq", t_eq},
    {"equalto", t_eq},
    {"==", t_eq},
    {"escaped", t_escaped},
    {"even", t_even},
    {"false", t_false},
    {"filter", t_filter},
    {"float", t_float},
    {"ge", t_ge},
    {">=", t_ge},
    {"gt", t_gt},
    {"greaterthan", t_gt},
    {">", t_gt},
    {"in", t_in},
    {"integer", t_integer},
    {"iterable", t_iterable},
    {"le", t_le},
    {"<=", t_le},
    {"lower", t_lower},
    {"lt", t_lt},
    {"lessthan", t_lt},
    {"<", t_lt},
    {"mapping", t_mapping},
    {"ne", t_ne},
    {"!=", t_ne},
    {"none", t_none},
    {"number", t_number},
    {"odd", t_odd},
    {"sameas", t_sameas},
    {"sequence", t_sequence},
    {"string", t_string},
    {"test", t_test},
    {"true", t_true},
    {"undefined", t_undefined},
    {"upper", t_upper},
};

}  // namespace

TestFn find_test(std::string_view name) {
  for (const auto& t : kTests)
    if (t.name == name) return t.fn;
  return nullptr;
}

}  // namespace verdict::chat::jinja
