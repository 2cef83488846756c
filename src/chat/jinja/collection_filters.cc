// Filters on lists and dicts: first/last, join, map, select/reject(attr), sort, unique, min/max, sum,
// batch, dictsort, items, list, reverse (Jinja2's signatures and semantics).
#include <algorithm>
#include <utility>

#include "chat/jinja/errors.h"
#include "chat/jinja/filter_support.h"
#include "chat/jinja/py_format.h"
#include "chat/jinja/text.h"

namespace verdict::chat::jinja::filters {
namespace {

Value min_max(Runtime& rt, const Value& v, const CallArgs& args, bool want_max, const char* name) {
  const BoundArgs a(args, {"case_sensitive", "attribute"}, name);
  const bool case_sensitive = bool_arg(a, 0, false);
  const Items items = items_of(rt, v);
  if (items.empty()) return Value();
  std::size_t best = 0;
  for (std::size_t i = 1; i < items.size(); ++i) {
    const Value x = sort_key(items[i], a.get(1), case_sensitive);
    const Value b = sort_key(items[best], a.get(1), case_sensitive);
    if (want_max ? less(b, x) : less(x, b)) best = i;
  }
  return items[best];
}

// select/reject(test, args...) and selectattr/rejectattr(attribute, test, args...).
Value select_items(Runtime& rt, const Value& v, const CallArgs& args, bool keep, bool by_attribute, const char* name) {
  Items items = items_of(rt, v);
  std::size_t next = 0;
  std::string attribute;
  if (by_attribute) {
    if (args.positional.empty() || !args.positional[0].is_string())
      throw RenderError(std::string(name) + "() expects an attribute name");
    attribute = args.positional[0].as_string();
    next = 1;
  }
  TestFn test = nullptr;
  CallArgs rest;
  rest.keyword = args.keyword;
  if (next < args.positional.size()) {
    if (!args.positional[next].is_string()) throw RenderError(std::string(name) + "() expects a test name");
    test = find_test(args.positional[next].as_string());
    if (test == nullptr)
      throw RenderError(std::string(name) + "(): unknown test '" + args.positional[next].as_string() + "'");
    rest.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(next) + 1, args.positional.end());
  }
  Items out;
  for (auto& item : items) {
    const Value subject = by_attribute ? lookup_path(item, attribute) : item;
    const bool pass = test != nullptr ? test(rt, subject, rest) : subject.truthy();
    if (pass == keep) out.push_back(std::move(item));
  }
  return list_value(rt, std::move(out));
}

}  // namespace

Value f_batch(Runtime& rt, const Value& v, const CallArgs& args) {
  const BoundArgs a(args, {"linecount", "fill_with"}, "batch");
  const int64_t size = int_arg(a, 0, 0, "batch linecount");
  if (size <= 0) throw RenderError("batch linecount must be positive");
  Items items = items_of(rt, v);
  Items out, row;
  for (auto& item : items) {
    row.push_back(std::move(item));
    if (static_cast<int64_t>(row.size()) == size) out.push_back(Value::array(std::exchange(row, {})));
  }
  if (!row.empty()) {
    if (a.has(1) && !a.get(1)->is_none())
      while (static_cast<int64_t>(row.size()) < size) row.push_back(*a.get(1));
    out.push_back(Value::array(std::move(row)));
  }
  return list_value(rt, std::move(out));
}

Value f_dictsort(Runtime& rt, const Value& v, const CallArgs& args) {
  const BoundArgs a(args, {"case_sensitive", "by", "reverse"}, "dictsort");
  if (!v.is_object()) throw RenderError("dictsort() expects a mapping");
  const bool case_sensitive = bool_arg(a, 0, false);
  const std::string by = a.has(1) && a.get(1)->is_string() ? a.get(1)->as_string() : "key";
  if (by != "key" && by != "value") throw RenderError("dictsort() 'by' must be 'key' or 'value'");
  const std::size_t pos = by == "key" ? 0 : 1;
  Items pairs;
  for (const auto& [k, item] : v.as_object().entries()) pairs.push_back(Value::array({Value::string(k), item}));
  rt.charge(static_cast<int64_t>(pairs.size()));
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& x, const Value& y) {
    return less(sort_key(x.as_array()[pos], nullptr, case_sensitive),
                sort_key(y.as_array()[pos], nullptr, case_sensitive));
  });
  if (bool_arg(a, 2, false)) std::reverse(pairs.begin(), pairs.end());
  return list_value(rt, std::move(pairs));
}

Value f_first(Runtime& rt, const Value& v, const CallArgs&) {
  if (v.is_array()) return v.as_array().empty() ? Value() : v.as_array().front();
  Items items = items_of(rt, v);
  return items.empty() ? Value() : items.front();
}

Value f_last(Runtime& rt, const Value& v, const CallArgs&) {
  if (v.is_array()) return v.as_array().empty() ? Value() : v.as_array().back();
  Items items = items_of(rt, v);
  return items.empty() ? Value() : items.back();
}

Value f_items(Runtime& rt, const Value& v, const CallArgs&) {
  if (v.is_undefined()) return Value::array({});
  if (!v.is_object() || v.as_object().flavor() != Object::Flavor::Dict)
    throw RenderError("can only get item pairs from a mapping, got '" + std::string(v.type_name()) + "'");
  Items pairs;
  for (const auto& [k, item] : v.as_object().entries()) pairs.push_back(Value::array({Value::string(k), item}));
  rt.charge(static_cast<int64_t>(pairs.size()));
  return list_value(rt, std::move(pairs));
}

Value f_join(Runtime& rt, const Value& v, const CallArgs& args) {
  const BoundArgs a(args, {"d", "attribute"}, "join");
  const std::string sep = a.has(0) ? str(rt, *a.get(0)) : std::string();
  std::string out;
  bool first = true;
  for (const auto& item : items_of(rt, v)) {
    if (!first) out += sep;
    first = false;
    append_str(out, a.has(1) && !a.get(1)->is_none() ? lookup_path(item, str(rt, *a.get(1))) : item, rt.max_bytes());
  }
  rt.charge_bytes(out.size());
  return Value::string(std::move(out));
}

Value f_list(Runtime& rt, const Value& v, const CallArgs&) { return list_value(rt, items_of(rt, v)); }

Value f_map(Runtime& rt, const Value& v, const CallArgs& args) {
  Items items = items_of(rt, v);
  const Value* attribute = nullptr;
  const Value* fallback = nullptr;
  for (const auto& [k, value] : args.keyword) {
    if (k == "attribute")
      attribute = &value;
    else if (k == "default")
      fallback = &value;
  }
  if (attribute != nullptr) {
    if (!args.positional.empty()) throw RenderError("map() takes either a filter name or attribute=");
    for (const auto& [k, value] : args.keyword)
      if (k != "attribute" && k != "default") throw RenderError("map() got an unexpected keyword argument '" + k + "'");
    for (auto& item : items) {
      Value mapped = lookup_path(item, str(rt, *attribute));
      item = mapped.is_undefined() && fallback != nullptr ? *fallback : std::move(mapped);
    }
    return list_value(rt, std::move(items));
  }
  if (args.positional.empty() || !args.positional[0].is_string()) throw RenderError("map() expects a filter name");
  const FilterFn filter = find_filter(args.positional[0].as_string());
  if (filter == nullptr) throw RenderError("map(): unknown filter '" + args.positional[0].as_string() + "'");
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.keyword = args.keyword;
  for (auto& item : items) item = filter(rt, item, rest);
  return list_value(rt, std::move(items));
}

Value f_max(Runtime& rt, const Value& v, const CallArgs& args) { return min_max(rt, v, args, true, "max"); }

Value f_min(Runtime& rt, const Value& v, const CallArgs& args) { return min_max(rt, v, args, false, "min"); }

Value f_select(Runtime& rt, const Value& v, const CallArgs& a) { return select_items(rt, v, a, true, false, "select"); }

Value f_reject(Runtime& rt, const Value& v, const CallArgs& a) {
  return select_items(rt, v, a, false, false, "reject");
}

Value f_selectattr(Runtime& rt, const Value& v, const CallArgs& a) {
  return select_items(rt, v, a, true, true, "selectattr");
}

Value f_rejectattr(Runtime& rt, const Value& v, const CallArgs& a) {
  return select_items(rt, v, a, false, true, "rejectattr");
}

Value f_reverse(Runtime& rt, const Value& v, const CallArgs&) {
  if (v.is_string()) {
    const auto& s = v.as_string();
    const auto bounds = text::boundaries(s);
    std::string out;
    out.reserve(s.size());
    for (std::size_t k = bounds.size() - 1; k > 0; --k) out.append(s, bounds[k - 1], bounds[k] - bounds[k - 1]);
    return Value::string(std::move(out));
  }
  Items items = items_of(rt, v);
  std::reverse(items.begin(), items.end());
  return list_value(rt, std::move(items));
}

Value f_sort(Runtime& rt, const Value& v, const CallArgs& args) {
  const BoundArgs a(args, {"reverse", "case_sensitive", "attribute"}, "sort");
  const bool reverse = bool_arg(a, 0, false), case_sensitive = bool_arg(a, 1, false);
  Items items = items_of(rt, v);
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    const Value kx = sort_key(x, a.get(2), case_sensitive), ky = sort_key(y, a.get(2), case_sensitive);
    return reverse ? less(ky, kx) : less(kx, ky);
  });
  return list_value(rt, std::move(items));
}

Value f_sum(Runtime& rt, const Value& v, const CallArgs& args) {
  const BoundArgs a(args, {"attribute", "start"}, "sum");
  Value total = a.has(1) ? *a.get(1) : Value::integer(0);
  for (const auto& item : items_of(rt, v)) {
    const Value x = a.has(0) && !a.get(0)->is_none() ? lookup_path(item, str(rt, *a.get(0))) : item;
    if (!(x.is_number() || x.is_bool()) || !(total.is_number() || total.is_bool()))
      throw RenderError(std::string("unsupported operand type(s) for +: '") + total.type_name() + "' and '" +
                        x.type_name() + "'");
    if (total.is_float() || x.is_float()) {
      total = Value::number(total.as_double() + x.as_double());
    } else {
      int64_t r = 0;
      const int64_t l = total.is_bool() ? total.as_bool() : total.as_int();
      const int64_t rhs = x.is_bool() ? x.as_bool() : x.as_int();
      if (__builtin_add_overflow(l, rhs, &r)) throw RenderError("integer overflow");
      total = Value::integer(r);
    }
  }
  return total;
}

Value f_unique(Runtime& rt, const Value& v, const CallArgs& args) {
  const BoundArgs a(args, {"case_sensitive", "attribute"}, "unique");
  const bool case_sensitive = bool_arg(a, 0, false);
  Items out, keys;
  for (auto& item : items_of(rt, v)) {
    Value key = sort_key(item, a.get(1), case_sensitive);
    rt.charge(static_cast<int64_t>(keys.size() / 16) + 1);
    if (std::none_of(keys.begin(), keys.end(), [&](const Value& k) { return equals(k, key); })) {
      keys.push_back(std::move(key));
      out.push_back(std::move(item));
    }
  }
  return list_value(rt, std::move(out));
}

}  // namespace verdict::chat::jinja::filters
