#include "chat/jinja/parser.h"

#include "chat/jinja/expression_parser.h"
#include "chat/jinja/token_stream.h"

namespace verdict::chat::jinja {
namespace {

bool is_closing_tag(std::string_view name) {
  return one_of(name, {"elif", "else", "endif", "endfor", "endset", "endmacro", "endcall", "endfilter", "endwith",
                       "endgeneration", "endraw", "endblock"});
}

// The token stream a Parser owns, as a base so that it exists before the TokenReader base reads it.
struct OwnedTokens {
  explicit OwnedTokens(std::vector<Token> tokens) : stream(std::move(tokens)) {}
  TokenStream stream;
};

// Statements; expressions go to the ExpressionParser on the same token stream.
class Parser : private OwnedTokens, private TokenReader {
 public:
  explicit Parser(std::vector<Token> tokens)
      : OwnedTokens(std::move(tokens)), TokenReader(stream), expressions_(stream) {}

  std::unique_ptr<Program> run() {
    auto program = std::make_unique<Program>();
    std::string stopped;
    program->body = parse_body({}, stopped);
    return program;
  }

 private:
  ExprPtr parse_expression() { return expressions_.parse_expression(); }
  ExprPtr parse_tuple(bool with_condition) { return expressions_.parse_tuple(with_condition); }
  std::vector<Arg> parse_args() { return expressions_.parse_args(); }
  std::string dotted_name() { return expressions_.dotted_name(); }

  // Consumes `{% name %}` for an end tag.
  void expect_end_tag(std::string_view name) {
    next();  // {%
    const Token& t = next();
    if (t.text != name) unexpected(t, quote_name(name));
    expect_block_end();
  }

  // Statements until `{% <one of stop> %}` (left unconsumed; its name goes to `stopped`) or the end.
  Body parse_body(std::initializer_list<std::string_view> stop, std::string& stopped) {
    Nesting guard(block_depth_, kMaxBlockDepth, peek().pos, "blocks");
    Body body;
    for (;;) {
      const Token& t = peek();
      switch (t.type) {
        case TokenType::End: stopped.clear(); return body;
        case TokenType::Text: {
          auto s = std::make_unique<Stmt>();
          s->kind = StmtKind::Text;
          s->pos = t.pos;
          s->text = next().text;
          body.push_back(std::move(s));
          break;
        }
        case TokenType::VarBegin: {
          auto s = std::make_unique<Stmt>();
          s->kind = StmtKind::Print;
          s->pos = next().pos;
          s->expr = parse_tuple(true);
          if (peek().type != TokenType::VarEnd) unexpected(peek(), "'}}'");
          next();
          body.push_back(std::move(s));
          break;
        }
        case TokenType::BlockBegin: {
          const Token& name = peek(1);
          if (name.type != TokenType::Name) unexpected(name, "a tag name");
          if (one_of(name.text, stop)) {
            stopped = name.text;
            return body;
          }
          if (stop.size() > 0 && is_closing_tag(name.text)) {
            std::string expected;
            for (const auto s : stop) expected += (expected.empty() ? "" : " or ") + quote_name(s);
            fail(name, "unexpected " + quote_name(name.text) + ", expected " + expected);
          }
          next();
          body.push_back(parse_statement());
          break;
        }
        default: unexpected(t, "text or a tag");
      }
    }
  }

  // Like parse_body, but the template must reach one of `stop`.
  Body parse_until(std::initializer_list<std::string_view> stop, std::string& stopped, const Token& opener,
                   const char* closer) {
    Body body = parse_body(stop, stopped);
    if (stopped.empty())
      fail(peek(), "unexpected end of template: missing '" + std::string(closer) + "' for the '" + opener.text +
                       "' at line " + std::to_string(opener.pos.line));
    return body;
  }

  StmtPtr parse_statement() {
    const Token& tag = next();
    auto s = std::make_unique<Stmt>();
    s->pos = tag.pos;
    const std::string& name = tag.text;
    if (name == "if") return parse_if(tag, std::move(s));
    if (name == "for") return parse_for(tag, std::move(s));
    if (name == "set") return parse_set(tag, std::move(s));
    if (name == "macro") return parse_macro(tag, std::move(s));
    if (name == "call") return parse_call_block(tag, std::move(s));
    if (name == "filter") return parse_filter_block(tag, std::move(s));
    if (name == "with") return parse_with(tag, std::move(s));
    if (name == "generation") {
      s->kind = StmtKind::Generation;
      expect_block_end();
      std::string stopped;
      s->body = parse_until({"endgeneration"}, stopped, tag, "endgeneration");
      expect_end_tag("endgeneration");
      return s;
    }
    if (name == "break" || name == "continue") {
      if (loop_depth_ == 0) fail(tag, "'" + name + "' outside of a loop");
      s->kind = name == "break" ? StmtKind::Break : StmtKind::Continue;
      expect_block_end();
      return s;
    }
    if (one_of(name,
               {"include", "import", "from", "extends", "block", "do", "autoescape", "trans", "pluralize", "raw"}))
      fail(tag, "the '" + name + "' tag is not supported");
    if (is_closing_tag(name)) fail(tag, "unexpected '" + name + "' (no open block it could close)");
    fail(tag, "unknown tag '" + name + "'");
  }

  StmtPtr parse_if(const Token& tag, StmtPtr s) {
    s->kind = StmtKind::If;
    Branch first;
    first.condition = parse_expression();
    expect_block_end();
    std::string stopped;
    first.body = parse_until({"elif", "else", "endif"}, stopped, tag, "endif");
    s->branches.push_back(std::move(first));
    while (stopped == "elif") {
      next();
      next();
      Branch b;
      b.condition = parse_expression();
      expect_block_end();
      b.body = parse_until({"elif", "else", "endif"}, stopped, tag, "endif");
      s->branches.push_back(std::move(b));
    }
    if (stopped == "else") {
      next();
      next();
      expect_block_end();
      Branch b;
      b.body = parse_until({"endif"}, stopped, tag, "endif");
      s->branches.push_back(std::move(b));
    }
    expect_end_tag("endif");
    return s;
  }

  StmtPtr parse_for(const Token& tag, StmtPtr s) {
    s->kind = StmtKind::For;
    s->target = parse_target(false);
    if (!at_name("in")) unexpected(peek(), "'in'");
    next();
    s->expr = parse_tuple(false);
    if (at_name("if")) {
      next();
      s->condition = parse_expression();
    }
    if (at_name("recursive")) fail(peek(), "recursive loops are not supported");
    expect_block_end();
    std::string stopped;
    ++loop_depth_;
    s->body = parse_until({"else", "endfor"}, stopped, tag, "endfor");
    --loop_depth_;
    if (stopped == "else") {
      next();
      next();
      expect_block_end();
      s->else_body = parse_until({"endfor"}, stopped, tag, "endfor");
    }
    expect_end_tag("endfor");
    return s;
  }

  StmtPtr parse_set(const Token& tag, StmtPtr s) {
    s->target = parse_target(true);
    if (at_op("=")) {
      next();
      s->kind = StmtKind::Set;
      s->expr = parse_tuple(true);
      expect_block_end();
      return s;
    }
    if (s->target.names.size() != 1) unexpected(peek(), "'='");
    s->kind = StmtKind::SetBlock;
    while (at_op("|")) {
      next();
      s->filters.push_back(parse_filter_call());
    }
    expect_block_end();
    std::string stopped;
    s->body = parse_until({"endset"}, stopped, tag, "endset");
    expect_end_tag("endset");
    return s;
  }

  StmtPtr parse_macro(const Token& tag, StmtPtr s) {
    s->kind = StmtKind::Macro;
    s->text = expect_name("a macro name");
    expect_op("(");
    s->params = parse_params();
    expect_block_end();
    std::string stopped;
    const int saved_loops = loop_depth_;
    loop_depth_ = 0;
    s->body = parse_until({"endmacro"}, stopped, tag, "endmacro");
    loop_depth_ = saved_loops;
    next();
    next();
    if (peek().type == TokenType::Name && peek().text == s->text) next();
    expect_block_end();
    return s;
  }

  StmtPtr parse_call_block(const Token& tag, StmtPtr s) {
    s->kind = StmtKind::CallBlock;
    if (at_op("(")) {
      next();
      s->params = parse_params();
    }
    s->expr = parse_expression();
    if (s->expr->kind != ExprKind::Call) fail(tag, "'call' needs a macro call, e.g. {% call m(x) %}");
    expect_block_end();
    std::string stopped;
    const int saved_loops = loop_depth_;
    loop_depth_ = 0;
    s->body = parse_until({"endcall"}, stopped, tag, "endcall");
    loop_depth_ = saved_loops;
    expect_end_tag("endcall");
    return s;
  }

  StmtPtr parse_filter_block(const Token& tag, StmtPtr s) {
    s->kind = StmtKind::FilterBlock;
    s->filters.push_back(parse_filter_call());
    while (at_op("|")) {
      next();
      s->filters.push_back(parse_filter_call());
    }
    expect_block_end();
    std::string stopped;
    s->body = parse_until({"endfilter"}, stopped, tag, "endfilter");
    expect_end_tag("endfilter");
    return s;
  }

  StmtPtr parse_with(const Token& tag, StmtPtr s) {
    s->kind = StmtKind::With;
    while (peek().type != TokenType::BlockEnd) {
      if (!s->params.empty()) expect_op(",");
      Param p;
      p.name = expect_name("a variable name");
      expect_op("=");
      p.value = parse_expression();
      s->params.push_back(std::move(p));
    }
    expect_block_end();
    std::string stopped;
    s->body = parse_until({"endwith"}, stopped, tag, "endwith");
    expect_end_tag("endwith");
    return s;
  }

  // Macro / caller parameters after '(' up to and including ')'.
  std::vector<Param> parse_params() {
    std::vector<Param> params;
    bool defaults = false;
    while (!at_op(")")) {
      if (!params.empty()) expect_op(",");
      if (at_op(")")) break;
      Param p;
      const Token& t = peek();
      p.name = expect_name("a parameter name");
      if (at_op("=")) {
        next();
        p.value = parse_expression();
        defaults = true;
      } else if (defaults) {
        fail(t, "parameter without a default follows one with a default");
      }
      for (const auto& q : params)
        if (q.name == p.name) fail(t, "duplicate parameter '" + p.name + "'");
      params.push_back(std::move(p));
    }
    next();
    return params;
  }

  // for/set targets: name, `a, b` (parenthesised or not), or (set only) `ns.attr`.
  Target parse_target(bool allow_attribute) {
    Target target;
    const bool paren = at_op("(");
    if (paren) next();
    const Token& first = peek();
    target.names.push_back(expect_name("a variable name"));
    if (allow_attribute && !paren && at_op(".")) {
      next();
      auto object = node(ExprKind::Name, first.pos);
      object->name = target.names[0];
      target.object = sealed(std::move(object));
      target.attribute = expect_name("an attribute name");
      target.names.clear();
      return target;
    }
    while (at_op(",")) {
      next();
      if (paren && at_op(")")) break;
      target.names.push_back(expect_name("a variable name"));
    }
    if (paren) expect_op(")");
    return target;
  }

  FilterCall parse_filter_call() {
    FilterCall f;
    f.pos = peek().pos;
    f.name = dotted_name();
    if (at_op("(")) {
      next();
      f.args = parse_args();
    }
    return f;
  }

  ExpressionParser expressions_;
  int block_depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

std::unique_ptr<Program> parse_program(std::string_view source, const LexOptions& options) {
  return Parser(tokenize(source, options)).run();
}

}  // namespace verdict::chat::jinja
