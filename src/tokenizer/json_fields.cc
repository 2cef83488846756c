#include "tokenizer/json_fields.h"

#include "core/error.h"

namespace verdict::tokenizer::detail {

void fail(const std::string& where, const std::string& message) { throw Error(where + ": " + message); }

const Json* member(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

void require_object(const Json& obj, const std::string& where) {
  if (!obj.is_object()) fail(where, "expected an object, got " + show(obj));
}

std::string type_of(const Json& obj, const std::string& where) {
  require_object(obj, where);
  const Json* t = member(obj, "type");
  if (t == nullptr) fail(where, "missing \"type\"");
  if (!t->is_string()) fail(where, "\"type\" must be a string, got " + show(*t));
  return t->get<std::string>();
}

std::string get_string(const Json& obj, const char* key, const std::string& where) {
  const Json* v = member(obj, key);
  if (v == nullptr) fail(where, std::string("missing \"") + key + "\"");
  if (!v->is_string()) fail(where, std::string("\"") + key + "\" must be a string, got " + show(*v));
  return v->get<std::string>();
}

std::string get_optional_string(const Json& obj, const char* key, const std::string& where) {
  const Json* v = member(obj, key);
  if (v == nullptr) return "";
  if (!v->is_string()) fail(where, std::string("\"") + key + "\" must be a string or null, got " + show(*v));
  return v->get<std::string>();
}

bool get_bool(const Json& obj, const char* key, bool fallback, const std::string& where) {
  const Json* v = member(obj, key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) fail(where, std::string("\"") + key + "\" must be a boolean, got " + show(*v));
  return v->get<bool>();
}

std::string show(const Json& value) {
  std::string s = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

}  // namespace verdict::tokenizer::detail
