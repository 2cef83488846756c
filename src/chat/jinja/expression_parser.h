// Expressions (Jinja2's grammar and precedence, lowest first): `a if c else b`, or, and, not,
// comparisons (chained; `in`, `not in`), + -, ~, * / // %, ** (left-associative, as in Jinja2),
// unary - +, then primaries with postfix `.attr`, `[index]`, `[a:b:c]`, `(args)`, `| filter(args)`
// and `is [not] test(args)`. Nesting is bounded: kMaxExpressionDepth for the tree, and as deep for
// the recursion that builds it.
#pragma once
#include <string>
#include <vector>

#include "chat/jinja/token_stream.h"

namespace verdict::chat::jinja {

class ExpressionParser : private TokenReader {
 public:
  explicit ExpressionParser(TokenStream& ts) : TokenReader(ts) {}

  // A full expression (conditional expressions included).
  ExprPtr parse_expression();
  // An expression, or a tuple when commas follow (`{{ a, b }}`, `set x = 1, 2`); without
  // conditional expressions when `with_condition` is false (a for loop's iterable, where `if`
  // starts the loop filter).
  ExprPtr parse_tuple(bool with_condition);
  // Call arguments after '(' up to and including ')'.
  std::vector<Arg> parse_args();
  // A filter name: `name` or `name.name`.
  std::string dotted_name();

 private:
  ExprPtr parse_or();
  ExprPtr binary(ExprKind kind, ExprPtr left, ExprPtr right, SourcePos pos, BinaryOp op = BinaryOp::Add);
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter);
  ExprPtr parse_primary();
  ExprPtr parse_parenthesized();
  ExprPtr parse_list();
  ExprPtr parse_dict();
  ExprPtr parse_postfix(ExprPtr e);
  ExprPtr parse_subscript(ExprPtr target);
  ExprPtr parse_call(ExprPtr callee);
  ExprPtr parse_filter_expr(ExprPtr e);
  bool starts_test_argument() const;

  int nesting_ = 0;
};

}  // namespace verdict::chat::jinja
