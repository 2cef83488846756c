// Python's operators on template values: arithmetic (+ - * / // % **) with int/float promotion and
// overflow checks, string and list concatenation and repetition, comparisons, `in`, and iteration.
// Mismatched types are RenderErrors with Python's wording ("unsupported operand type(s) for +: ...").
#pragma once
#include <vector>

#include "chat/jinja/ast.h"
#include "chat/jinja/callable.h"

namespace verdict::chat::jinja {

Value binary_op(Runtime& rt, BinaryOp op, const Value& a, const Value& b);
Value negate(const Value& v);
Value unary_plus(const Value& v);
bool compare(CompareOp op, const Value& a, const Value& b);
// `item in container`; `x in undefined` is false (as @huggingface/jinja has it).
bool contains(const Value& container, const Value& item);
// What a for loop walks: list items, dict keys, string characters; undefined gives nothing.
std::vector<Value> iterate(Runtime& rt, const Value& v);
// Python slice v[start:stop:step] of a list or string (each bound may be None/undefined).
Value slice(Runtime& rt, const Value& v, const Value& start, const Value& stop, const Value& step);
// v[index] for lists and strings (negative indices count from the end), dict[key]; undefined when
// missing.
Value subscript(const Value& v, const Value& index);

}  // namespace verdict::chat::jinja
