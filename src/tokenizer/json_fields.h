// Typed access to tokenizer.json fields with errors that say where in which file ("<file>: <path>: ...").
#pragma once
#include <string>

#include "core/json.h"

namespace verdict::tokenizer::detail {

// Throws verdict::Error("<where>: <message>").
[[noreturn]] void fail(const std::string& where, const std::string& message);

// The member `key` of object `obj`, or nullptr when absent or null.
const Json* member(const Json& obj, const char* key);

// Requires `obj` to be an object.
void require_object(const Json& obj, const std::string& where);

// obj["type"] as a string (required).
std::string type_of(const Json& obj, const std::string& where);

std::string get_string(const Json& obj, const char* key, const std::string& where);
// An optional string: "" when absent or null.
std::string get_optional_string(const Json& obj, const char* key, const std::string& where);
bool get_bool(const Json& obj, const char* key, bool fallback, const std::string& where);

// A JSON value shown for messages, cut to a reasonable length.
std::string show(const Json& value);

}  // namespace verdict::tokenizer::detail
