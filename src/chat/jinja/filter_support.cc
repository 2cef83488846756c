#include "chat/jinja/filter_support.h"

#include "chat/jinja/errors.h"
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
  switch (v.kind()) {
    case Value::Kind::Array: rt.charge(static_cast<int64_t>(v.as_array().size())); return v.as_array();
    case Value::Kind::Undefined: return {};
    case Value::Kind::String: {
      Items out;
      const auto& s = v.as_string();
      const auto bounds = text::boundaries(s);
      rt.charge(static_cast<int64_t>(bounds.size()));
      for (std::size_t k = 0; k + 1 < bounds.size(); ++k)
        out.push_back(Value::string(s.substr(bounds[k], bounds[k + 1] - bounds[k])));
      return out;
    }
    case Value::Kind::Object:
      if (v.as_object().flavor() == Object::Flavor::Dict) {
        Items out;
        for (const auto& [k, item] : v.as_object().entries()) out.push_back(Value::string(k));
        rt.charge(static_cast<int64_t>(out.size()));
        return out;
      }
      break;
    default: break;
  }
  throw RenderError(std::string("'") + v.type_name() + "' object is not iterable");
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
