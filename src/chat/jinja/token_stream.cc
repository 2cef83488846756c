#include "chat/jinja/token_stream.h"

namespace verdict::chat::jinja {
namespace {

const char* describe(const Token& t) {
  switch (t.type) {
    case TokenType::Text: return "text";
    case TokenType::VarBegin: return "'{{'";
    case TokenType::VarEnd: return "'}}'";
    case TokenType::BlockBegin: return "'{%'";
    case TokenType::BlockEnd: return "'%}'";
    case TokenType::Name: return "name";
    case TokenType::String: return "string";
    case TokenType::Integer: return "integer";
    case TokenType::Float: return "float";
    case TokenType::Operator: return "operator";
    case TokenType::End: return "end of template";
  }
  return "token";
}

std::string token_text(const Token& t) {
  if (t.type == TokenType::Name || t.type == TokenType::Operator) return quote_name(t.text);
  return describe(t);
}

}  // namespace

bool one_of(std::string_view s, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

// Built by appends: GCC 12 reports a false -Wrestrict for "'" + std::string(...).
std::string quote_name(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('\'');
  out.append(s);
  out.push_back('\'');
  return out;
}

ExprPtr node(ExprKind kind, SourcePos pos) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->pos = pos;
  return e;
}

ExprPtr sealed(ExprPtr e) {
  int d = 0;
  if (e->target) d = std::max(d, e->target->depth);
  for (const auto& c : e->children)
    if (c) d = std::max(d, c->depth);
  for (const auto& a : e->args) d = std::max(d, a.value->depth);
  e->depth = d + 1;
  if (e->depth > kMaxExpressionDepth) throw SyntaxError(e->pos, "expression nested too deeply");
  return e;
}

Nesting::Nesting(int& counter, int limit, SourcePos pos, const char* what) : counter_(counter) {
  if (++counter_ > limit) {
    --counter_;
    throw SyntaxError(pos, std::string(what) + " nested too deeply");
  }
}

void TokenStream::fail(const Token& t, const std::string& message) const { throw SyntaxError(t.pos, message); }

void TokenStream::unexpected(const Token& t, const std::string& expected) const {
  fail(t, "unexpected " + token_text(t) + ", expected " + expected);
}

void TokenStream::expect_op(std::string_view op) {
  if (!at_op(op)) unexpected(peek(), quote_name(op));
  next();
}

std::string TokenStream::expect_name(const char* what) {
  if (peek().type != TokenType::Name) unexpected(peek(), what);
  return next().text;
}

void TokenStream::expect_block_end() {
  if (peek().type != TokenType::BlockEnd) unexpected(peek(), "'%}'");
  next();
}

}  // namespace verdict::chat::jinja
