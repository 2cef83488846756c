#include "chat/jinja/expression_parser.h"

namespace verdict::chat::jinja {

std::string ExpressionParser::dotted_name() {
  std::string name = expect_name("a filter name");
  while (at_op(".") && peek(1).type == TokenType::Name) {
    next();
    name += "." + next().text;
  }
  return name;
}

// Call arguments after '(' up to and including ')'.
std::vector<Arg> ExpressionParser::parse_args() {
  std::vector<Arg> args;
  bool keywords = false;
  while (!at_op(")")) {
    if (!args.empty()) expect_op(",");
    if (at_op(")")) break;
    if (at_op("*") || at_op("**")) fail(peek(), "*args and **kwargs in calls are not supported");
    Arg a;
    if (peek().type == TokenType::Name && at_op("=", 1)) {
      a.name = next().text;
      next();
      keywords = true;
    } else if (keywords) {
      fail(peek(), "positional argument follows keyword argument");
    }
    a.value = parse_expression();
    args.push_back(std::move(a));
  }
  next();
  return args;
}

// An expression, or a tuple when commas follow (`{{ a, b }}`, `set x = 1, 2`).
ExprPtr ExpressionParser::parse_tuple(bool with_condition) {
  const SourcePos pos = peek().pos;
  ExprPtr first = with_condition ? parse_expression() : parse_or();
  if (!at_op(",")) return first;
  auto tuple = node(ExprKind::Tuple, pos);
  tuple->children.push_back(std::move(first));
  while (at_op(",")) {
    next();
    const Token& t = peek();
    if (t.type == TokenType::VarEnd || t.type == TokenType::BlockEnd || at_name("if") || at_op(")")) break;
    tuple->children.push_back(with_condition ? parse_expression() : parse_or());
  }
  return sealed(std::move(tuple));
}

ExprPtr ExpressionParser::parse_expression() {
  Nesting guard(nesting_, kMaxExpressionDepth, peek().pos, "expression");
  ExprPtr e = parse_or();
  while (at_name("if")) {
    const SourcePos pos = next().pos;
    auto cond = node(ExprKind::Cond, pos);
    ExprPtr test = parse_or();
    ExprPtr otherwise;
    if (at_name("else")) {
      next();
      otherwise = parse_expression();
    }
    cond->children.push_back(std::move(e));
    cond->children.push_back(std::move(test));
    cond->children.push_back(std::move(otherwise));
    e = sealed(std::move(cond));
  }
  return e;
}

ExprPtr ExpressionParser::binary(ExprKind kind, ExprPtr left, ExprPtr right, SourcePos pos, BinaryOp op) {
  auto e = node(kind, pos);
  e->op = op;
  e->children.push_back(std::move(left));
  e->children.push_back(std::move(right));
  return sealed(std::move(e));
}

ExprPtr ExpressionParser::parse_or() {
  ExprPtr e = parse_and();
  while (at_name("or")) {
    const SourcePos pos = next().pos;
    e = binary(ExprKind::Or, std::move(e), parse_and(), pos);
  }
  return e;
}

ExprPtr ExpressionParser::parse_and() {
  ExprPtr e = parse_not();
  while (at_name("and")) {
    const SourcePos pos = next().pos;
    e = binary(ExprKind::And, std::move(e), parse_not(), pos);
  }
  return e;
}

ExprPtr ExpressionParser::parse_not() {
  if (at_name("not")) {
    Nesting guard(nesting_, kMaxExpressionDepth, peek().pos, "expression");
    auto e = node(ExprKind::Not, next().pos);
    e->target = parse_not();
    return sealed(std::move(e));
  }
  return parse_compare();
}

ExprPtr ExpressionParser::parse_compare() {
  const SourcePos pos = peek().pos;
  ExprPtr first = parse_math1();
  std::vector<CompareOp> ops;
  std::vector<ExprPtr> operands;
  operands.push_back(std::move(first));
  for (;;) {
    CompareOp op;
    if (at_op("=="))
      op = CompareOp::Eq;
    else if (at_op("!="))
      op = CompareOp::Ne;
    else if (at_op("<"))
      op = CompareOp::Lt;
    else if (at_op("<="))
      op = CompareOp::Le;
    else if (at_op(">"))
      op = CompareOp::Gt;
    else if (at_op(">="))
      op = CompareOp::Ge;
    else if (at_name("in"))
      op = CompareOp::In;
    else if (at_name("not") && at_name("in", 1)) {
      next();
      op = CompareOp::NotIn;
    } else
      break;
    next();
    ops.push_back(op);
    operands.push_back(parse_math1());
  }
  if (ops.empty()) return std::move(operands[0]);
  auto e = node(ExprKind::Compare, pos);
  e->compare_ops = std::move(ops);
  e->children = std::move(operands);
  return sealed(std::move(e));
}

ExprPtr ExpressionParser::parse_math1() {
  ExprPtr e = parse_concat();
  while (at_op("+") || at_op("-")) {
    const Token& t = next();
    const BinaryOp op = t.text == "+" ? BinaryOp::Add : BinaryOp::Sub;
    e = binary(ExprKind::Binary, std::move(e), parse_concat(), t.pos, op);
  }
  return e;
}

ExprPtr ExpressionParser::parse_concat() {
  const SourcePos pos = peek().pos;
  ExprPtr first = parse_math2();
  if (!at_op("~")) return first;
  auto e = node(ExprKind::Concat, pos);
  e->children.push_back(std::move(first));
  while (at_op("~")) {
    next();
    e->children.push_back(parse_math2());
  }
  return sealed(std::move(e));
}

ExprPtr ExpressionParser::parse_math2() {
  ExprPtr e = parse_pow();
  for (;;) {
    BinaryOp op;
    if (at_op("*"))
      op = BinaryOp::Mul;
    else if (at_op("/"))
      op = BinaryOp::Div;
    else if (at_op("//"))
      op = BinaryOp::FloorDiv;
    else if (at_op("%"))
      op = BinaryOp::Mod;
    else
      break;
    const SourcePos pos = next().pos;
    e = binary(ExprKind::Binary, std::move(e), parse_pow(), pos, op);
  }
  return e;
}

ExprPtr ExpressionParser::parse_pow() {
  ExprPtr e = parse_unary(true);
  while (at_op("**")) {
    const SourcePos pos = next().pos;
    e = binary(ExprKind::Binary, std::move(e), parse_unary(true), pos, BinaryOp::Pow);
  }
  return e;
}

ExprPtr ExpressionParser::parse_unary(bool with_filter) {
  ExprPtr e;
  if (at_op("-") || at_op("+")) {
    Nesting guard(nesting_, kMaxExpressionDepth, peek().pos, "expression");
    const Token& t = next();
    auto u = node(t.text == "-" ? ExprKind::Neg : ExprKind::Pos, t.pos);
    u->target = parse_unary(false);
    e = sealed(std::move(u));
  } else {
    e = parse_primary();
  }
  e = parse_postfix(std::move(e));
  if (with_filter) e = parse_filter_expr(std::move(e));
  return e;
}

ExprPtr ExpressionParser::parse_primary() {
  const Token& t = peek();
  switch (t.type) {
    case TokenType::Name: {
      next();
      auto e = node(ExprKind::Literal, t.pos);
      if (t.text == "true" || t.text == "True")
        e->literal = Value::boolean(true);
      else if (t.text == "false" || t.text == "False")
        e->literal = Value::boolean(false);
      else if (t.text == "none" || t.text == "None")
        e->literal = Value::none();
      else {
        e->kind = ExprKind::Name;
        e->name = t.text;
      }
      return sealed(std::move(e));
    }
    case TokenType::String: {
      auto e = node(ExprKind::Literal, t.pos);
      std::string s = next().text;
      while (peek().type == TokenType::String) s += next().text;  // adjacent literals concatenate
      e->literal = Value::string(std::move(s));
      return sealed(std::move(e));
    }
    case TokenType::Integer: {
      auto e = node(ExprKind::Literal, t.pos);
      e->literal = Value::integer(next().int_value);
      return sealed(std::move(e));
    }
    case TokenType::Float: {
      auto e = node(ExprKind::Literal, t.pos);
      e->literal = Value::number(next().float_value);
      return sealed(std::move(e));
    }
    case TokenType::Operator:
      if (t.text == "(") return parse_parenthesized();
      if (t.text == "[") return parse_list();
      if (t.text == "{") return parse_dict();
      break;
    default: break;
  }
  unexpected(t, "an expression");
}

ExprPtr ExpressionParser::parse_parenthesized() {
  const SourcePos pos = next().pos;
  if (at_op(")")) {
    next();
    return sealed(node(ExprKind::Tuple, pos));
  }
  ExprPtr first = parse_expression();
  if (at_op(")")) {
    next();
    return first;
  }
  auto tuple = node(ExprKind::Tuple, pos);
  tuple->children.push_back(std::move(first));
  while (at_op(",")) {
    next();
    if (at_op(")")) break;
    tuple->children.push_back(parse_expression());
  }
  expect_op(")");
  return sealed(std::move(tuple));
}

ExprPtr ExpressionParser::parse_list() {
  auto list = node(ExprKind::List, next().pos);
  while (!at_op("]")) {
    if (!list->children.empty()) expect_op(",");
    if (at_op("]")) break;
    list->children.push_back(parse_expression());
  }
  next();
  return sealed(std::move(list));
}

ExprPtr ExpressionParser::parse_dict() {
  auto dict = node(ExprKind::Dict, next().pos);
  while (!at_op("}")) {
    if (!dict->children.empty()) expect_op(",");
    if (at_op("}")) break;
    dict->children.push_back(parse_expression());
    expect_op(":");
    dict->children.push_back(parse_expression());
  }
  next();
  return sealed(std::move(dict));
}

ExprPtr ExpressionParser::parse_postfix(ExprPtr e) {
  for (;;) {
    if (at_op(".")) {
      next();
      const Token& t = peek();
      if (t.type == TokenType::Name) {
        auto a = node(ExprKind::Attr, t.pos);
        a->name = next().text;
        a->target = std::move(e);
        e = sealed(std::move(a));
      } else if (t.type == TokenType::Integer) {
        auto item = node(ExprKind::Item, t.pos);
        auto index = node(ExprKind::Literal, t.pos);
        index->literal = Value::integer(next().int_value);
        item->target = std::move(e);
        item->children.push_back(sealed(std::move(index)));
        e = sealed(std::move(item));
      } else {
        unexpected(t, "an attribute name");
      }
    } else if (at_op("[")) {
      e = parse_subscript(std::move(e));
    } else if (at_op("(")) {
      e = parse_call(std::move(e));
    } else {
      return e;
    }
  }
}

ExprPtr ExpressionParser::parse_subscript(ExprPtr target) {
  const SourcePos pos = next().pos;
  ExprPtr parts[3];
  bool slice = false;
  if (!at_op(":")) parts[0] = parse_expression();
  if (at_op(":")) {
    slice = true;
    next();
    if (!at_op("]") && !at_op(":")) parts[1] = parse_expression();
    if (at_op(":")) {
      next();
      if (!at_op("]")) parts[2] = parse_expression();
    }
  }
  if (at_op(",")) fail(peek(), "multiple subscripts are not supported");
  expect_op("]");
  auto e = node(slice ? ExprKind::Slice : ExprKind::Item, pos);
  e->target = std::move(target);
  if (slice) {
    for (auto& p : parts) e->children.push_back(std::move(p));
  } else {
    e->children.push_back(std::move(parts[0]));
  }
  return sealed(std::move(e));
}

ExprPtr ExpressionParser::parse_call(ExprPtr callee) {
  const SourcePos pos = next().pos;
  auto e = node(ExprKind::Call, pos);
  e->target = std::move(callee);
  e->args = parse_args();
  return sealed(std::move(e));
}

ExprPtr ExpressionParser::parse_filter_expr(ExprPtr e) {
  for (;;) {
    if (at_op("|")) {
      next();
      auto f = node(ExprKind::Filter, peek().pos);
      f->name = dotted_name();
      if (at_op("(")) {
        next();
        f->args = parse_args();
      }
      f->target = std::move(e);
      e = sealed(std::move(f));
    } else if (at_name("is")) {
      next();
      auto t = node(ExprKind::Test, peek().pos);
      if (at_name("not")) {
        next();
        t->negated = true;
        t->pos = peek().pos;
      }
      t->name = expect_name("a test name");
      if (at_op("(")) {
        next();
        t->args = parse_args();
      } else if (starts_test_argument()) {
        Arg a;
        a.value = parse_postfix(parse_primary());
        t->args.push_back(std::move(a));
      }
      t->target = std::move(e);
      e = sealed(std::move(t));
    } else if (at_op("(")) {
      e = parse_call(std::move(e));
    } else {
      return e;
    }
  }
}

// `x is divisibleby 3`: a test may take one argument without parentheses.
bool ExpressionParser::starts_test_argument() const {
  const Token& t = peek();
  if (t.type == TokenType::Name) return !one_of(t.text, {"else", "or", "and", "if", "is", "in", "not"});
  if (t.type == TokenType::String || t.type == TokenType::Integer || t.type == TokenType::Float) return true;
  return at_op("[") || at_op("{");
}

}  // namespace verdict::chat::jinja
