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

class ExpressionParser {
 public:
  explicit ExpressionParser(TokenStream& ts) : ts_(ts) {}

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
  const Token& peek(std::size_t k = 0) const { return ts_.peek(k); }
  const Token& next() { return ts_.next(); }
  bool at_op(std::string_view op, std::size_t k = 0) const { return ts_.at_op(op, k); }
  bool at_name(std::string_view name, std::size_t k = 0) const { return ts_.at_name(name, k); }
  [[noreturn]] void fail(const Token& t, const std::string& message) const { ts_.fail(t, message); }
  [[noreturn]] void unexpected(const Token& t, const std::string& expected) const { ts_.unexpected(t, expected); }
  void expect_op(std::string_view op) { ts_.expect_op(op); }
  std::string expect_name(const char* what) { return ts_.expect_name(what); }

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

  TokenStream& ts_;
  int nesting_ = 0;
};

}  // namespace verdict::chat::jinja
