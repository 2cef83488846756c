// The syntax tree of a parsed template. Nodes are immutable once parsed; a Program is shared by every
// render of its Template. Expression nodes record their depth (1 for a leaf), which the parser keeps
// under kMaxExpressionDepth so that evaluating or destroying a tree never recurses without bound.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chat/jinja/errors.h"
#include "chat/jinja/value.h"

namespace verdict::chat::jinja {

inline constexpr int kMaxExpressionDepth = 128;
inline constexpr int kMaxBlockDepth = 64;

enum class ExprKind : uint8_t {
  Literal,  // literal
  Name,     // name
  List,     // children: items
  Tuple,    // children: items
  Dict,     // children: key, value, key, value, ...
  Attr,     // target.name
  Item,     // target[children[0]]
  Slice,    // target[children[0] : children[1] : children[2]] (each may be null)
  Call,     // target(args)
  Filter,   // target | name(args)
  Test,     // target is [not] name(args)
  Neg,      // -target
  Pos,      // +target
  Not,      // not target
  And,      // children[0] and children[1]
  Or,       // children[0] or children[1]
  Binary,   // children[0] op children[1]
  Compare,  // children[0] ops[0] children[1] ops[1] children[2] ...
  Concat,   // children joined with ~
  Cond,     // children[0] if children[1] else children[2] (children[2] may be null)
};

enum class BinaryOp : uint8_t { Add, Sub, Mul, Div, FloorDiv, Mod, Pow };
enum class CompareOp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge, In, NotIn };

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

// A call argument: positional when `name` is empty.
struct Arg {
  std::string name;
  ExprPtr value;
};

struct Expr {
  ExprKind kind = ExprKind::Literal;
  SourcePos pos;
  int depth = 1;
  Value literal;
  std::string name;
  BinaryOp op = BinaryOp::Add;
  bool negated = false;  // `is not`
  ExprPtr target;
  std::vector<ExprPtr> children;
  std::vector<CompareOp> compare_ops;
  std::vector<Arg> args;
};

enum class StmtKind : uint8_t {
  Text,         // text
  Print,        // {{ expr }}
  If,           // branches
  For,          // for target in expr [if condition] body [else else_body]
  Set,          // set target = expr
  SetBlock,     // set target [| filters] body endset
  Macro,        // macro name(params) body endmacro
  CallBlock,    // call[(params)] expr body endcall
  FilterBlock,  // filter filters body endfilter
  With,         // with params body endwith
  Generation,   // generation body endgeneration (transformers' assistant-mask marker: renders its body)
  Break,
  Continue,
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

// An assignment target: one name, several names (unpacking), or `object.attribute` (namespaces).
struct Target {
  std::vector<std::string> names;
  ExprPtr object;
  std::string attribute;
};

// A macro or caller parameter with an optional default; for `with`, an assignment.
struct Param {
  std::string name;
  ExprPtr value;
};

struct Branch {
  ExprPtr condition;  // null for else
  Body body;
};

// One filter of a `set` block or `filter` block: name(args).
struct FilterCall {
  std::string name;
  std::vector<Arg> args;
  SourcePos pos;
};

struct Stmt {
  StmtKind kind = StmtKind::Text;
  SourcePos pos;
  std::string text;   // Text: the text; Macro: its name
  ExprPtr expr;       // Print, For (iterable), Set (value), CallBlock (the call)
  ExprPtr condition;  // For: the loop filter
  std::vector<Branch> branches;
  Target target;
  std::vector<Param> params;
  std::vector<FilterCall> filters;
  Body body;
  Body else_body;
};

struct Program {
  Body body;
  std::vector<std::string> macro_names;
  bool iterates_content = false;  // a for loop iterates a `content` (OpenAI content parts)
};

}  // namespace verdict::chat::jinja
