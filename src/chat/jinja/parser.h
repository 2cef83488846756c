// Jinja2 syntax → Program. Grammar and operator precedence follow Jinja2's parser (lowest first):
// `a if c else b`, or, and, not, comparisons (chained, `in`, `not in`), + -, ~, * / // %, **,
// unary - +, then primaries with postfix `.attr`, `[index]`, `[a:b:c]`, `(args)`, `| filter` and
// `is [not] test`.
//
// Statements: if/elif/else, for (tuple targets, `if` filter, else), set (=, namespace attributes,
// unpacking, block form with filters), macro, call, filter, with, break/continue, generation, raw.
// Anything else (include, import, extends, block, do, recursive loops, ...) is a SyntaxError naming
// the tag, at its line and column.
#pragma once
#include <memory>
#include <string_view>

#include "chat/jinja/ast.h"
#include "chat/jinja/lexer.h"

namespace verdict::chat::jinja {

std::unique_ptr<Program> parse_program(std::string_view source, const LexOptions& options);

}  // namespace verdict::chat::jinja
