#include "chat/jinja/interpreter.h"

#include "chat/jinja/builtins.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/operators.h"
#include "chat/jinja/py_format.h"

namespace verdict::chat::jinja {

const Value* Scope::find(std::string_view name) const {
  for (const Scope* s = this; s != nullptr; s = s->parent_.get())
    for (const auto& [k, v] : s->vars_)
      if (k == name) return &v;
  return nullptr;
}

void Scope::set(std::string_view name, Value value) {
  for (auto& [k, v] : vars_)
    if (k == name) {
      v = std::move(value);
      return;
    }
  vars_.emplace_back(std::string(name), std::move(value));
}

namespace {

using ScopePtr = std::shared_ptr<Scope>;

class DepthGuard {
 public:
  DepthGuard(int& depth, int max) : depth_(depth) {
    if (++depth_ > max) {
      --depth_;
      throw RenderError("template nested too deeply (recursion limit " + std::to_string(max) + ")");
    }
  }
  ~DepthGuard() { --depth_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;

 private:
  int& depth_;
};

class Interpreter {
 public:
  Interpreter(const Program& program, const Limits& limits) : program_(program), rt_(limits) {}

  std::string run(const Value& context) {
    root_ = std::make_shared<Scope>(nullptr);
    if (context.is_object())
      for (const auto& [k, v] : context.as_object().entries()) root_->set(k, v);
    else if (!context.is_undefined() && !context.is_none())
      throw RenderError("the template context must be a mapping");
    std::string out;
    out_ = &out;
    exec_body(program_.body, root_);
    out_ = nullptr;
    root_.reset();
    return out;
  }

 private:
  enum class Flow : uint8_t { Normal, Break, Continue };

  void emit(std::string_view s) {
    out_->append(s);
    if (out_->size() > rt_.max_bytes())
      throw RenderError("output too large (limit " + std::to_string(rt_.max_bytes()) + " bytes)");
  }

  void emit_value(const Value& v) { append_str(*out_, v, rt_.max_bytes()); }

  // Output of `body` as a string (macro calls, set blocks, filter blocks).
  std::string capture(const Body& body, const ScopePtr& scope) {
    std::string buffer;
    std::string* saved = out_;
    out_ = &buffer;
    try {
      exec_body(body, scope);
    } catch (...) {
      out_ = saved;
      throw;
    }
    out_ = saved;
    return buffer;
  }

  Flow exec_body(const Body& body, const ScopePtr& scope) {
    for (const auto& s : body) {
      const Flow f = exec(*s, scope);
      if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
  }

  Flow exec(const Stmt& s, const ScopePtr& scope) {
    DepthGuard guard(depth_, rt_.limits().max_depth);
    rt_.charge(1);
    switch (s.kind) {
      case StmtKind::Text: emit(s.text); return Flow::Normal;
      case StmtKind::Print: emit_value(eval(*s.expr, scope)); return Flow::Normal;
      case StmtKind::If:
        for (const auto& b : s.branches)
          if (!b.condition || eval(*b.condition, scope).truthy()) return exec_body(b.body, scope);
        return Flow::Normal;
      case StmtKind::For: exec_for(s, scope); return Flow::Normal;
      case StmtKind::Set: assign(s.target, eval(*s.expr, scope), scope, s.pos); return Flow::Normal;
      case StmtKind::SetBlock: {
        Value v = Value::string(capture(s.body, scope));
        assign(s.target, apply_filters(s.filters, std::move(v), scope), scope, s.pos);
        return Flow::Normal;
      }
      case StmtKind::Macro: {
        auto macro = std::make_shared<Callable>();
        macro->kind = Callable::Kind::Macro;
        macro->name = s.text;
        macro->stmt = &s;
        macro->closure = scope;
        scope->set(s.text, Value::callable(std::move(macro)));
        return Flow::Normal;
      }
      case StmtKind::CallBlock: exec_call_block(s, scope); return Flow::Normal;
      case StmtKind::FilterBlock: {
        Value v = Value::string(capture(s.body, scope));
        emit_value(apply_filters(s.filters, std::move(v), scope));
        return Flow::Normal;
      }
      case StmtKind::With: {
        auto inner = std::make_shared<Scope>(scope);
        for (const auto& p : s.params) inner->set(p.name, eval(*p.value, scope));
        return exec_body(s.body, inner);
      }
      case StmtKind::Generation: return exec_body(s.body, scope);
      case StmtKind::Break: return Flow::Break;
      case StmtKind::Continue: return Flow::Continue;
    }
    return Flow::Normal;
  }

  void assign(const Target& target, Value value, const ScopePtr& scope, SourcePos pos) {
    try {
      if (target.object) {
        const Value object = eval(*target.object, scope);
        if (!object.is_object() || !object.as_object().is_namespace())
          throw RenderError("cannot assign attribute on non-namespace object");
        object.as_object().set(target.attribute, std::move(value));
      } else if (target.names.size() == 1) {
        scope->set(target.names[0], std::move(value));
      } else {
        const std::vector<Value> items = iterate(rt_, value);
        if (items.size() != target.names.size())
          throw RenderError(items.size() < target.names.size() ? "not enough values to unpack"
                                                               : "too many values to unpack");
        for (std::size_t i = 0; i < items.size(); ++i) scope->set(target.names[i], items[i]);
      }
    } catch (const RaisedException&) {
      throw;
    } catch (const RenderError& err) {
      if (err.has_pos()) throw;
      throw RenderError(err.bare_message(), pos);
    }
  }

  // Each iteration runs in a fresh scope under the loop's parent, so assignments in the body do not
  // carry over to the next iteration or out of the loop (as in Jinja2).
  void exec_for(const Stmt& s, const ScopePtr& scope) {
    const Value iterable = eval(*s.expr, scope);
    std::vector<Value> items;
    try {
      items = iterate(rt_, iterable);
    } catch (const RenderError& err) {
      throw RenderError(err.bare_message(), s.expr->pos);
    }
    if (s.condition) {
      std::vector<Value> kept;
      for (auto& item : items) {
        rt_.charge(1);
        auto probe = std::make_shared<Scope>(scope);
        assign(s.target, item, probe, s.pos);
        if (eval(*s.condition, probe).truthy()) kept.push_back(std::move(item));
      }
      items = std::move(kept);
    }
    if (items.empty()) {
      exec_body(s.else_body, std::make_shared<Scope>(scope));
      return;
    }
    const auto n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n; ++i) {
      rt_.charge(1);
      const auto k = static_cast<std::size_t>(i);
      auto iteration = std::make_shared<Scope>(scope);
      assign(s.target, items[k], iteration, s.pos);
      std::vector<std::pair<std::string, Value>> loop = {
          {"index", Value::integer(i + 1)},    {"index0", Value::integer(i)},
          {"revindex", Value::integer(n - i)}, {"revindex0", Value::integer(n - i - 1)},
          {"first", Value::boolean(i == 0)},   {"last", Value::boolean(i == n - 1)},
          {"length", Value::integer(n)},       {"depth", Value::integer(1)},
          {"depth0", Value::integer(0)},
      };
      if (i > 0) loop.emplace_back("previtem", items[k - 1]);
      if (i + 1 < n) loop.emplace_back("nextitem", items[k + 1]);
      iteration->set("loop", make_object(std::move(loop), Object::Flavor::Loop));
      if (exec_body(s.body, iteration) == Flow::Break) break;
    }
  }

  void exec_call_block(const Stmt& s, const ScopePtr& scope) {
    const Expr& call = *s.expr;
    auto caller = std::make_shared<Callable>();
    caller->kind = Callable::Kind::Caller;
    caller->name = "caller";
    caller->stmt = &s;
    caller->closure = scope;
    const Value callee = eval(*call.target, scope);
    CallArgs args = eval_args(call.args, scope);
    args.keyword.emplace_back("caller", Value::callable(std::move(caller)));
    emit_value(invoke(callee, std::move(args), call));
  }

  Value apply_filters(const std::vector<FilterCall>& filters, Value v, const ScopePtr& scope) {
    for (const auto& f : filters) {
      const FilterFn fn = find_filter(f.name);
      CallArgs args = eval_args(f.args, scope);
      try {
        v = fn(rt_, v, args);
      } catch (const RaisedException&) {
        throw;
      } catch (const RenderError& err) {
        if (err.has_pos()) throw;
        throw RenderError(err.bare_message(), f.pos);
      }
    }
    return v;
  }

  CallArgs eval_args(const std::vector<Arg>& args, const ScopePtr& scope) {
    CallArgs out;
    for (const auto& a : args) {
      if (a.name.empty())
        out.positional.push_back(eval(*a.value, scope));
      else
        out.keyword.emplace_back(a.name, eval(*a.value, scope));
    }
    return out;
  }

  Value eval(const Expr& e, const ScopePtr& scope) {
    DepthGuard guard(depth_, rt_.limits().max_depth);
    try {
      return eval_node(e, scope);
    } catch (const RaisedException&) {
      throw;
    } catch (const RenderError& err) {
      if (err.has_pos()) throw;
      throw RenderError(err.bare_message(), e.pos);
    }
  }

  Value eval_node(const Expr& e, const ScopePtr& scope) {
    switch (e.kind) {
      case ExprKind::Literal: return e.literal;
      case ExprKind::Name: return lookup(e.name, scope);
      case ExprKind::List:
      case ExprKind::Tuple: {
        rt_.check_items(e.children.size());
        std::vector<Value> items;
        items.reserve(e.children.size());
        for (const auto& c : e.children) items.push_back(eval(*c, scope));
        return Value::array(std::move(items));
      }
      case ExprKind::Dict: {
        auto object = std::make_shared<Object>();
        for (std::size_t i = 0; i + 1 < e.children.size(); i += 2) {
          const Value key = eval(*e.children[i], scope);
          if (!key.is_string()) throw RenderError("dict keys must be strings in templates");
          object->set(key.as_string(), eval(*e.children[i + 1], scope));
        }
        return Value::object(std::move(object));
      }
      case ExprKind::Attr: return get_attr(eval(*e.target, scope), e.name);
      case ExprKind::Item: return subscript(eval(*e.target, scope), eval(*e.children[0], scope));
      case ExprKind::Slice: {
        const Value v = eval(*e.target, scope);
        Value parts[3];
        for (std::size_t i = 0; i < 3; ++i)
          if (e.children[i]) parts[i] = eval(*e.children[i], scope);
        return slice(rt_, v, parts[0], parts[1], parts[2]);
      }
      case ExprKind::Call: {
        if (e.target->kind == ExprKind::Attr) {  // a method call: name the receiver's type on failure
          const Expr& attr = *e.target;
          const Value object = eval(*attr.target, scope);
          const Value callee = get_attr(object, attr.name);
          if (!callee.is_callable())
            throw RenderError(std::string("'") + object.type_name() + "' object has no method '" + attr.name + "'",
                              attr.pos);
          return invoke(callee, eval_args(e.args, scope), e);
        }
        const Value callee = eval(*e.target, scope);
        return invoke(callee, eval_args(e.args, scope), e);
      }
      case ExprKind::Filter: {
        Value operand = eval(*e.target, scope);
        return find_filter(e.name)(rt_, operand, eval_args(e.args, scope));
      }
      case ExprKind::Test: {
        const Value operand = eval(*e.target, scope);
        const bool result = find_test(e.name)(rt_, operand, eval_args(e.args, scope));
        return Value::boolean(result != e.negated);
      }
      case ExprKind::Neg: return negate(eval(*e.target, scope));
      case ExprKind::Pos: return unary_plus(eval(*e.target, scope));
      case ExprKind::Not: return Value::boolean(!eval(*e.target, scope).truthy());
      case ExprKind::And: {
        Value left = eval(*e.children[0], scope);
        return left.truthy() ? eval(*e.children[1], scope) : left;
      }
      case ExprKind::Or: {
        Value left = eval(*e.children[0], scope);
        return left.truthy() ? left : eval(*e.children[1], scope);
      }
      case ExprKind::Binary: {
        const Value left = eval(*e.children[0], scope);
        const Value right = eval(*e.children[1], scope);
        return binary_op(rt_, e.op, left, right);
      }
      case ExprKind::Compare: {
        Value left = eval(*e.children[0], scope);
        for (std::size_t i = 0; i < e.compare_ops.size(); ++i) {
          Value right = eval(*e.children[i + 1], scope);
          if (!compare(e.compare_ops[i], left, right)) return Value::boolean(false);
          left = std::move(right);
        }
        return Value::boolean(true);
      }
      case ExprKind::Concat: {
        std::string out;
        for (const auto& c : e.children) append_str(out, eval(*c, scope), rt_.max_bytes());
        rt_.charge_bytes(out.size());
        return Value::string(std::move(out));
      }
      case ExprKind::Cond:
        if (eval(*e.children[1], scope).truthy()) return eval(*e.children[0], scope);
        return e.children[2] ? eval(*e.children[2], scope) : Value();
    }
    return Value();
  }

  Value lookup(const std::string& name, const ScopePtr& scope) {
    if (const Value* v = scope->find(name)) return *v;
    if (const BuiltinFn fn = find_global(name)) {
      auto c = std::make_shared<Callable>();
      c->kind = Callable::Kind::Builtin;
      c->name = name;
      c->builtin = fn;
      return Value::callable(std::move(c));
    }
    return Value();
  }

  static Value get_attr(const Value& object, const std::string& name) {
    if (object.is_object())
      if (const Value* v = object.as_object().find(name)) return *v;
    if (const MethodFn m = find_method(object, name)) {
      auto c = std::make_shared<Callable>();
      c->kind = Callable::Kind::Method;
      c->name = name;
      c->method = m;
      c->receiver = object;
      return Value::callable(std::move(c));
    }
    return Value();
  }

  Value invoke(const Value& callee, CallArgs args, const Expr& call) {
    if (!callee.is_callable()) {
      const Expr& target = *call.target;
      if (target.kind == ExprKind::Name) throw RenderError("'" + target.name + "' is undefined or not callable");
      throw RenderError(std::string("'") + callee.type_name() + "' object is not callable");
    }
    const Callable& c = callee.as_callable();
    switch (c.kind) {
      case Callable::Kind::Builtin: return c.builtin(rt_, args);
      case Callable::Kind::Method: return c.method(rt_, c.receiver, args);
      case Callable::Kind::Macro:
      case Callable::Kind::Caller: return call_macro(c, std::move(args));
    }
    return Value();
  }

  Value call_macro(const Callable& c, CallArgs args) {
    DepthGuard guard(depth_, rt_.limits().max_depth);
    rt_.charge(1);
    const Stmt& m = *c.stmt;
    ScopePtr parent = c.closure.lock();
    if (!parent) parent = root_;
    auto scope = std::make_shared<Scope>(parent);
    const std::string& name = c.kind == Callable::Kind::Macro ? m.text : c.name;
    if (args.positional.size() > m.params.size())
      throw RenderError("macro '" + name + "' takes not more than " + std::to_string(m.params.size()) + " argument(s)");
    std::vector<bool> given(m.params.size(), false);
    for (std::size_t i = 0; i < args.positional.size(); ++i) {
      scope->set(m.params[i].name, std::move(args.positional[i]));
      given[i] = true;
    }
    for (auto& [key, value] : args.keyword) {
      if (key == "caller" && c.kind == Callable::Kind::Macro) {
        scope->set("caller", std::move(value));
        continue;
      }
      std::size_t i = 0;
      while (i < m.params.size() && m.params[i].name != key) ++i;
      if (i == m.params.size()) throw RenderError("macro '" + name + "' has no parameter '" + key + "'");
      if (given[i]) throw RenderError("macro '" + name + "' got multiple values for parameter '" + key + "'");
      scope->set(key, std::move(value));
      given[i] = true;
    }
    for (std::size_t i = 0; i < m.params.size(); ++i)
      if (!given[i]) scope->set(m.params[i].name, m.params[i].value ? eval(*m.params[i].value, scope) : Value());
    return Value::string(capture(m.body, scope));
  }

  const Program& program_;
  Runtime rt_;
  ScopePtr root_;
  std::string* out_ = nullptr;
  int depth_ = 0;
};

}  // namespace

std::string render_program(const Program& program, const Value& context, const Limits& limits) {
  return Interpreter(program, limits).run(context);
}

}  // namespace verdict::chat::jinja
