#include "chat/jinja/filter_support.h"

#include "chat/jinja/errors.h"
#include "chat/jinja/operators.h"
#include "chat/jinja/py_format.h"
#include "chat/jinja/text.h"

namespace verdict::chat::jinja::filters {

std::string str(Runtime& rt, const Value& v) { return to_str(v, rt.max_bytes()); }

bool bool_arg(const BoundArgs& a, std::size_t i, bool fallback) { return a.has(i) ? a.get(i)->truthy() : fallback; }

int64_t int_arg(const BoundArgs& a, std::size_t i, int64_t fallback, const char* what) {
  if (!a.has(i) || a.get(i)->is_none()) return fallback;
  const Value& v = *a.get(i);
  if (v.is_int()) return v.as_int();
  if (v.is_bool()) return v.as_bool() ? 1 : 0;
  throw RenderError(std::string(what) + " must be an integer, got '" + v.type_name() + "'");
}

Items items_of(Runtime& rt, const Value& v) {
  Items out = iterate(rt, v);  // charges for the characters of a string
  if (!v.is_string()) rt.charge(static_cast<int64_t>(out.size()));
  return out;
}

Value list_value(Runtime& rt, Items items) {
  rt.check_items(items.size());
  return Value::array(std::move(items));
}

Value sort_key(const Value& item, const Value* attribute, bool case_sensitive) {
  Value key = attribute != nullptr && !attribute->is_none()
                  ? lookup_path(item, attribute->is_string() ? attribute->as_string() : std::string())
                  : item;
  if (!case_sensitive && key.is_string()) return Value::string(text::lower(key.as_string()));
  return key;
}

}  // namespace verdict::chat::jinja::filters
