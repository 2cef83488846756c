// The parser's view of the token list: lookahead, consumption and uniform error messages. Also the
// small helpers both parsers share (node construction with the depth check, nesting guards).
#pragma once
#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja/ast.h"
#include "chat/jinja/lexer.h"

namespace verdict::chat::jinja {

bool one_of(std::string_view s, std::initializer_list<std::string_view> set);
// "'name'".
std::string quote_name(std::string_view s);

// A new node (its depth is set by sealed()).
ExprPtr node(ExprKind kind, SourcePos pos);
// Sets the node's depth from its children; SyntaxError past kMaxExpressionDepth.
ExprPtr sealed(ExprPtr e);

// Counts nesting for as long as it lives; SyntaxError("<what> nested too deeply") past `limit`.
class Nesting {
 public:
  Nesting(int& counter, int limit, SourcePos pos, const char* what);
  ~Nesting() { --counter_; }
  Nesting(const Nesting&) = delete;
  Nesting& operator=(const Nesting&) = delete;

 private:
  int& counter_;
};

class TokenStream {
 public:
  explicit TokenStream(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  const Token& peek(std::size_t k = 0) const { return tokens_[std::min(pos_ + k, tokens_.size() - 1)]; }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool at_op(std::string_view op, std::size_t k = 0) const {
    return peek(k).type == TokenType::Operator && peek(k).text == op;
  }
  bool at_name(std::string_view name, std::size_t k = 0) const {
    return peek(k).type == TokenType::Name && peek(k).text == name;
  }
  [[noreturn]] void fail(const Token& t, const std::string& message) const;
  // "unexpected <t>, expected <expected>".
  [[noreturn]] void unexpected(const Token& t, const std::string& expected) const;
  void expect_op(std::string_view op);
  std::string expect_name(const char* what);
  void expect_block_end();

 private:
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
};

// The TokenStream calls under short names, for the two parsers that read one stream.
class TokenReader {
 protected:
  explicit TokenReader(TokenStream& ts) : ts_(ts) {}

  const Token& peek(std::size_t k = 0) const { return ts_.peek(k); }
  const Token& next() { return ts_.next(); }
  bool at_op(std::string_view op, std::size_t k = 0) const { return ts_.at_op(op, k); }
  bool at_name(std::string_view name, std::size_t k = 0) const { return ts_.at_name(name, k); }
  [[noreturn]] void fail(const Token& t, const std::string& message) const { ts_.fail(t, message); }
  [[noreturn]] void unexpected(const Token& t, const std::string& expected) const { ts_.unexpected(t, expected); }
  void expect_op(std::string_view op) { ts_.expect_op(op); }
  std::string expect_name(const char* what) { return ts_.expect_name(what); }
  void expect_block_end() { ts_.expect_block_end(); }

  TokenStream& ts_;
};

}  // namespace verdict::chat::jinja
