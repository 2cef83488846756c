// Shared by the filter implementations: argument helpers, and the filters on lists and dicts
// (collection_filters.cc) that the registry in filters.cc lists.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "chat/jinja/builtins.h"

namespace verdict::chat::jinja::filters {

using Items = std::vector<Value>;

// Python str(v).
std::string str(Runtime& rt, const Value& v);
bool bool_arg(const BoundArgs& a, std::size_t i, bool fallback);
// An int argument (None/absent: fallback); RenderError naming `what` otherwise.
int64_t int_arg(const BoundArgs& a, std::size_t i, int64_t fallback, const char* what);
// The items a filter iterates: list items, a string's characters, a dict's keys; undefined is empty.
Items items_of(Runtime& rt, const Value& v);
// A list value, within the item limit.
Value list_value(Runtime& rt, Items items);
// A sort/compare key: the attribute (if any), lowercased when comparing case-insensitively.
Value sort_key(const Value& item, const Value* attribute, bool case_sensitive);

Value f_batch(Runtime& rt, const Value& v, const CallArgs& args);
Value f_dictsort(Runtime& rt, const Value& v, const CallArgs& args);
Value f_first(Runtime& rt, const Value& v, const CallArgs& args);
Value f_last(Runtime& rt, const Value& v, const CallArgs& args);
Value f_items(Runtime& rt, const Value& v, const CallArgs& args);
Value f_join(Runtime& rt, const Value& v, const CallArgs& args);
Value f_list(Runtime& rt, const Value& v, const CallArgs& args);
Value f_map(Runtime& rt, const Value& v, const CallArgs& args);
Value f_max(Runtime& rt, const Value& v, const CallArgs& args);
Value f_min(Runtime& rt, const Value& v, const CallArgs& args);
Value f_select(Runtime& rt, const Value& v, const CallArgs& args);
Value f_reject(Runtime& rt, const Value& v, const CallArgs& args);
Value f_selectattr(Runtime& rt, const Value& v, const CallArgs& args);
Value f_rejectattr(Runtime& rt, const Value& v, const CallArgs& args);
Value f_reverse(Runtime& rt, const Value& v, const CallArgs& args);
Value f_sort(Runtime& rt, const Value& v, const CallArgs& args);
Value f_sum(Runtime& rt, const Value& v, const CallArgs& args);
Value f_unique(Runtime& rt, const Value& v, const CallArgs& args);

}  // namespace verdict::chat::jinja::filters
