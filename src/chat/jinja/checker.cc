#include "chat/jinja/checker.h"

#include <algorithm>
#include <set>
#include <string>

#include "chat/jinja/builtins.h"

namespace verdict::chat::jinja {
namespace {

class Checker {
 public:
  explicit Checker(Program& program) : program_(program) {}

  void run() {
    collect(program_.body);
    for (const auto& name : macros_) program_.macro_names.push_back(name);
    check_body(program_.body);
  }

 private:
  // Names a template binds (macros, set/for/with targets, parameters): calling one of them is legal.
  void collect(const Body& body) {
    for (const auto& s : body) {
      if (s->kind == StmtKind::Macro) macros_.insert(s->text);
      for (const auto& n : s->target.names) bound_.insert(n);
      for (const auto& p : s->params) bound_.insert(p.name);
      collect(s->body);
      collect(s->else_body);
      for (const auto& b : s->branches) collect(b.body);
    }
  }

  void check_body(const Body& body) {
    for (const auto& s : body) check_stmt(*s);
  }

  void check_stmt(const Stmt& s) {
    check_expr(s.expr.get());
    check_expr(s.condition.get());
    check_expr(s.target.object.get());
    for (const auto& b : s.branches) {
      check_expr(b.condition.get());
      check_body(b.body);
    }
    for (const auto& p : s.params) check_expr(p.value.get());
    for (const auto& f : s.filters) check_filter(f.name, f.args, f.pos);
    if (s.kind == StmtKind::For && s.expr && names_content(*s.expr)) program_.iterates_content = true;
    check_body(s.body);
    check_body(s.else_body);
  }

  static bool names_content(const Expr& e) {
    if (e.kind == ExprKind::Name || e.kind == ExprKind::Attr) return e.name == "content";
    if (e.kind == ExprKind::Item && e.children[0] && e.children[0]->kind == ExprKind::Literal &&
        e.children[0]->literal.is_string())
      return e.children[0]->literal.as_string() == "content";
    return false;
  }

  static const Expr* positional(const std::vector<Arg>& args, std::size_t i) {
    std::size_t k = 0;
    for (const auto& a : args) {
      if (!a.name.empty()) continue;
      if (k++ == i) return a.value.get();
    }
    return nullptr;
  }

  static const std::string* literal_string(const Expr* e) {
    return e != nullptr && e->kind == ExprKind::Literal && e->literal.is_string() ? &e->literal.as_string() : nullptr;
  }

  void check_filter(const std::string& name, const std::vector<Arg>& args, SourcePos pos) {
    if (find_filter(name) == nullptr) throw SyntaxError(pos, "unknown filter '" + name + "'");
    // Filters that name another filter or a test in a string argument.
    if (name == "map") {
      const bool by_attribute =
          std::any_of(args.begin(), args.end(), [](const Arg& a) { return a.name == "attribute"; });
      if (const std::string* f = literal_string(positional(args, 0)); f && !by_attribute && find_filter(*f) == nullptr)
        throw SyntaxError(pos, "unknown filter '" + *f + "' in map()");
    } else if (name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr") {
      const std::size_t i = name == "select" || name == "reject" ? 0 : 1;
      if (const std::string* t = literal_string(positional(args, i)); t && find_test(*t) == nullptr)
        throw SyntaxError(pos, "unknown test '" + *t + "' in " + name + "()");
    }
    for (const auto& a : args) check_expr(a.value.get());
  }

  void check_expr(const Expr* e) {
    if (e == nullptr) return;
    switch (e->kind) {
      case ExprKind::Filter: check_filter(e->name, e->args, e->pos); break;
      case ExprKind::Test:
        if (find_test(e->name) == nullptr) throw SyntaxError(e->pos, "unknown test '" + e->name + "'");
        break;
      case ExprKind::Call: check_call(*e); break;
      default: break;
    }
    check_expr(e->target.get());
    for (const auto& c : e->children) check_expr(c.get());
    if (e->kind != ExprKind::Filter)
      for (const auto& a : e->args) check_expr(a.value.get());
  }

  void check_call(const Expr& e) {
    const Expr& callee = *e.target;
    if (callee.kind == ExprKind::Name) {
      const std::string& n = callee.name;
      if (find_global(n) || macros_.count(n) || n == "caller" || bound_.count(n)) return;
      throw SyntaxError(callee.pos, "unknown function '" + n + "'");
    }
    if (callee.kind == ExprKind::Attr) {
      if (is_method_name(callee.name)) return;
      throw SyntaxError(callee.pos, "unknown method '" + callee.name + "'");
    }
    throw SyntaxError(e.pos, "unsupported call: only functions, macros and methods can be called");
  }

  Program& program_;
  std::set<std::string> macros_;
  std::set<std::string> bound_;
};

}  // namespace

void check_program(Program& program) { Checker(program).run(); }

}  // namespace verdict::chat::jinja
