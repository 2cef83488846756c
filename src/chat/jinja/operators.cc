#include "chat/jinja/operators.h"

#include <cmath>
#include <limits>

#include "chat/jinja/errors.h"
#include "chat/jinja/text.h"

namespace verdict::chat::jinja {
namespace {

bool as_int(const Value& v, int64_t& out) {
  if (v.is_int())
    out = v.as_int();
  else if (v.is_bool())
    out = v.as_bool() ? 1 : 0;
  else
    return false;
  return true;
}

bool numeric(const Value& v) { return v.is_number() || v.is_bool(); }

const char* symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::FloorDiv: return "//";
    case BinaryOp::Mod: return "%";
    case BinaryOp::Pow: return "**";
  }
  return "?";
}

[[noreturn]] void unsupported(BinaryOp op, const Value& a, const Value& b) {
  throw RenderError(std::string("unsupported operand type(s) for ") + symbol(op) + ": '" + a.type_name() + "' and '" +
                    b.type_name() + "'");
}

[[noreturn]] void overflow() { throw RenderError("integer overflow"); }

Value int_pow(int64_t base, int64_t exp) {
  int64_t result = 1;
  while (exp > 0) {
    if (exp & 1)
      if (__builtin_mul_overflow(result, base, &result)) overflow();
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(base, base, &base)) overflow();
  }
  return Value::integer(result);
}

Value repeat(Runtime& rt, const Value& seq, int64_t n) {
  if (n <= 0) return seq.is_string() ? Value::string("") : Value::array({});
  const auto times = static_cast<std::size_t>(n);
  if (seq.is_string()) {
    const std::string& s = seq.as_string();
    if (!s.empty() && times > rt.max_bytes() / s.size()) rt.check_bytes(rt.max_bytes() + 1);
    std::string out;
    out.reserve(s.size() * times);
    for (std::size_t i = 0; i < times; ++i) out += s;
    rt.charge_bytes(out.size());
    return Value::string(std::move(out));
  }
  const auto& items = seq.as_array();
  if (!items.empty() && times > rt.limits().max_items / items.size()) rt.check_items(rt.limits().max_items + 1);
  std::vector<Value> out;
  out.reserve(items.size() * times);
  for (std::size_t i = 0; i < times; ++i) out.insert(out.end(), items.begin(), items.end());
  rt.charge(static_cast<int64_t>(out.size()));
  return Value::array(std::move(out));
}

int64_t slice_bound(const Value& v, const char* what) {
  int64_t i = 0;
  if (as_int(v, i)) return i;
  throw RenderError(std::string("slice ") + what + " must be an integer or None, got '" + v.type_name() + "'");
}

bool absent(const Value& v) { return v.is_undefined() || v.is_none(); }

}  // namespace

Value binary_op(Runtime& rt, BinaryOp op, const Value& a, const Value& b) {
  int64_t x = 0, y = 0;
  const bool ints = as_int(a, x) && as_int(b, y);
  const bool nums = numeric(a) && numeric(b);
  switch (op) {
    case BinaryOp::Add:
      if (ints) {
        int64_t r = 0;
        if (__builtin_add_overflow(x, y, &r)) overflow();
        return Value::integer(r);
      }
      if (nums) return Value::number(a.as_double() + b.as_double());
      if (a.is_string() && b.is_string()) {
        rt.check_bytes(a.as_string().size() + b.as_string().size());
        rt.charge_bytes(a.as_string().size() + b.as_string().size());
        return Value::string(a.as_string() + b.as_string());
      }
      if (a.is_array() && b.is_array()) {
        rt.check_items(a.as_array().size() + b.as_array().size());
        rt.charge(static_cast<int64_t>(a.as_array().size() + b.as_array().size()));
        std::vector<Value> out = a.as_array();
        out.insert(out.end(), b.as_array().begin(), b.as_array().end());
        return Value::array(std::move(out));
      }
      unsupported(op, a, b);
    case BinaryOp::Sub:
      if (ints) {
        int64_t r = 0;
        if (__builtin_sub_overflow(x, y, &r)) overflow();
        return Value::integer(r);
      }
      if (nums) return Value::number(a.as_double() - b.as_double());
      unsupported(op, a, b);
    case BinaryOp::Mul:
      if (ints) {
        int64_t r = 0;
        if (__builtin_mul_overflow(x, y, &r)) overflow();
        return Value::integer(r);
      }
      if (nums) return Value::number(a.as_double() * b.as_double());
      if ((a.is_string() || a.is_array()) && as_int(b, y)) return repeat(rt, a, y);
      if ((b.is_string() || b.is_array()) && as_int(a, x)) return repeat(rt, b, x);
      unsupported(op, a, b);
    case BinaryOp::Div:
      if (!nums) unsupported(op, a, b);
      if (b.as_double() == 0) throw RenderError("division by zero");
      return Value::number(a.as_double() / b.as_double());
    case BinaryOp::FloorDiv:
      if (ints) {
        if (y == 0) throw RenderError("integer division or modulo by zero");
        if (x == INT64_MIN && y == -1) overflow();
        int64_t q = x / y;
        if (x % y != 0 && ((x < 0) != (y < 0))) --q;
        return Value::integer(q);
      }
      if (nums) {
        if (b.as_double() == 0) throw RenderError("float floor division by zero");
        return Value::number(std::floor(a.as_double() / b.as_double()));
      }
      unsupported(op, a, b);
    case BinaryOp::Mod:
      if (ints) {
        if (y == 0) throw RenderError("integer division or modulo by zero");
        if (y == -1) return Value::integer(0);
        int64_t r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        return Value::integer(r);
      }
      if (nums) {
        const double d = b.as_double();
        if (d == 0) throw RenderError("float modulo by zero");
        double r = std::fmod(a.as_double(), d);
        if (r != 0 && ((r < 0) != (d < 0))) r += d;
        return Value::number(r);
      }
      if (a.is_string())
        throw RenderError("string formatting with '%' is not supported; use '~' or the format of the data");
      unsupported(op, a, b);
    case BinaryOp::Pow:
      if (ints && y >= 0) return int_pow(x, y);
      if (nums) {
        const double base = a.as_double(), exponent = b.as_double();
        if (base == 0 && exponent < 0) throw RenderError("0.0 cannot be raised to a negative power");
        const double r = std::pow(base, exponent);
        if (std::isnan(r) && !std::isnan(base) && !std::isnan(exponent)) throw RenderError("math domain error");
        return Value::number(r);
      }
      unsupported(op, a, b);
  }
  unsupported(op, a, b);
}

Value negate(const Value& v) {
  int64_t i = 0;
  if (as_int(v, i)) {
    if (i == INT64_MIN) overflow();
    return Value::integer(-i);
  }
  if (v.is_float()) return Value::number(-v.as_float());
  throw RenderError(std::string("bad operand type for unary -: '") + v.type_name() + "'");
}

Value unary_plus(const Value& v) {
  int64_t i = 0;
  if (as_int(v, i)) return Value::integer(i);
  if (v.is_float()) return v;
  throw RenderError(std::string("bad operand type for unary +: '") + v.type_name() + "'");
}

bool compare(CompareOp op, const Value& a, const Value& b) {
  switch (op) {
    case CompareOp::Eq: return equals(a, b);
    case CompareOp::Ne: return !equals(a, b);
    case CompareOp::Lt: return less(a, b);
    case CompareOp::Gt: return less(b, a);
    case CompareOp::Le: return less(a, b) || equals(a, b);
    case CompareOp::Ge: return less(b, a) || equals(a, b);
    case CompareOp::In: return contains(b, a);
    case CompareOp::NotIn: return !contains(b, a);
  }
  return false;
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::Undefined: return false;
    case Value::Kind::String:
      if (!item.is_string())
        throw RenderError(std::string("'in <string>' requires string as left operand, not ") + item.type_name());
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::Array:
      for (const auto& x : container.as_array())
        if (equals(x, item)) return true;
      return false;
    case Value::Kind::Object:
      if (container.as_object().flavor() == Object::Flavor::Dict)
        return item.is_string() && container.as_object().find(item.as_string()) != nullptr;
      break;
    default: break;
  }
  throw RenderError(std::string("argument of type '") + container.type_name() + "' is not iterable");
}

std::vector<Value> iterate(Runtime& rt, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return {};
    case Value::Kind::Array: return v.as_array();
    case Value::Kind::String: {
      std::vector<Value> out;
      const auto& s = v.as_string();
      const auto bounds = text::boundaries(s);
      rt.charge(static_cast<int64_t>(bounds.size()));
      for (std::size_t k = 0; k + 1 < bounds.size(); ++k)
        out.push_back(Value::string(s.substr(bounds[k], bounds[k + 1] - bounds[k])));
      return out;
    }
    case Value::Kind::Object:
      if (v.as_object().flavor() == Object::Flavor::Dict) {
        std::vector<Value> out;
        for (const auto& [k, item] : v.as_object().entries()) out.push_back(Value::string(k));
        return out;
      }
      break;
    default: break;
  }
  throw RenderError(std::string("'") + v.type_name() + "' object is not iterable");
}

Value slice(Runtime& rt, const Value& v, const Value& start_v, const Value& stop_v, const Value& step_v) {
  if (!v.is_array() && !v.is_string()) {
    if (v.is_undefined()) return Value();
    throw RenderError(std::string("'") + v.type_name() + "' object is not subscriptable");
  }
  int64_t step = absent(step_v) ? 1 : slice_bound(step_v, "step");
  if (step == 0) throw RenderError("slice step cannot be zero");
  if (step < -std::numeric_limits<int64_t>::max()) step = -std::numeric_limits<int64_t>::max();
  std::vector<std::size_t> bounds;
  int64_t length = 0;
  if (v.is_string()) {
    bounds = text::boundaries(v.as_string());
    length = static_cast<int64_t>(bounds.size()) - 1;
  } else {
    length = static_cast<int64_t>(v.as_array().size());
  }
  // CPython's PySlice_AdjustIndices.
  auto adjust = [&](const Value& bound, int64_t fallback, const char* what) {
    if (absent(bound)) return fallback;
    int64_t i = slice_bound(bound, what);
    if (i < 0) {
      i = i < -length ? (step < 0 ? -1 : 0) : i + length;
    } else if (i >= length) {
      i = step < 0 ? length - 1 : length;
    }
    return i;
  };
  const int64_t start = adjust(start_v, step < 0 ? length - 1 : 0, "start");
  const int64_t stop = adjust(stop_v, step < 0 ? -1 : length, "stop");
  std::vector<int64_t> indices;
  if (step > 0) {
    for (int64_t i = start; i < stop; i += step) {
      indices.push_back(i);
      if (step > stop - i) break;
    }
  } else {
    for (int64_t i = start; i > stop; i += step) {
      indices.push_back(i);
      if (-step > i - stop) break;
    }
  }
  rt.charge(static_cast<int64_t>(indices.size()));
  if (v.is_string()) {
    const std::string& s = v.as_string();
    std::string out;
    for (const int64_t i : indices) {
      const auto k = static_cast<std::size_t>(i);
      out.append(s, bounds[k], bounds[k + 1] - bounds[k]);
    }
    return Value::string(std::move(out));
  }
  std::vector<Value> out;
  out.reserve(indices.size());
  for (const int64_t i : indices) out.push_back(v.as_array()[static_cast<std::size_t>(i)]);
  return Value::array(std::move(out));
}

Value subscript(const Value& v, const Value& index) {
  int64_t i = 0;
  if ((v.is_array() || v.is_string()) && as_int(index, i)) {
    if (v.is_array()) {
      const auto n = static_cast<int64_t>(v.as_array().size());
      if (i < 0) i += n;
      if (i < 0 || i >= n) return Value();
      return v.as_array()[static_cast<std::size_t>(i)];
    }
    const auto bounds = text::boundaries(v.as_string());
    const auto n = static_cast<int64_t>(bounds.size()) - 1;
    if (i < 0) i += n;
    if (i < 0 || i >= n) return Value();
    const auto k = static_cast<std::size_t>(i);
    return Value::string(v.as_string().substr(bounds[k], bounds[k + 1] - bounds[k]));
  }
  if (v.is_object() && index.is_string()) {
    const Value* found = v.as_object().find(index.as_string());
    return found ? *found : Value();
  }
  return Value();
}

}  // namespace verdict::chat::jinja
