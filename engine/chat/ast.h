// The syntax tree of a parsed template. One node type for expressions and one
// for statements keeps the tree walker small; which fields are used depends on
// the kind and is noted beside each field.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hearth/engine/chat/value.h"

namespace hearth::chat {

enum class ExprKind {
  Literal,    // literal
  Name,       // name
  List,       // args: items
  Tuple,      // args: items
  Dict,       // args: key0, value0, key1, value1, ...
  Attr,       // args[0].name
  Item,       // args[0][args[1]]
  Slice,      // args[0][args[1]:args[2]:args[3]], absent parts are null
  Call,       // args[0](args[1..], kwargs)
  Filter,     // args[0] | name(args[1..], kwargs); args[0] null inside {% filter %}
  Test,       // args[0] is [not] name(args[1..])
  Not,        // not args[0]
  Neg,        // -args[0]
  Pos,        // +args[0]
  Binary,     // args[0] op args[1]: + - * / // % ** ~
  Compare,    // args[0] ops[0] args[1] ops[1] args[2] ... (chained)
  And,        // args[0] and args[1]
  Or,         // args[0] or args[1]
  Cond,       // args[0] if args[1] else args[2] (args[2] may be null)
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind = ExprKind::Literal;
  int line = 0;
  Value literal;
  std::string name;                 // Name, Attr, Filter, Test; operator for Binary
  std::vector<std::string> ops;     // Compare: "==", "!=", "<", "<=", ">", ">=", "in", "notin"
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  bool negated = false;             // Test: "is not"
  int depth = 1;                    // height of this subtree, bounded by the parser
};

enum class StmtKind {
  Text,         // text
  Output,       // {{ expr }}
  If,           // branches (cond null for else)
  For,          // target, expr (iterable), cond (optional filter), body, else_body
  Set,          // target = expr
  SetBlock,     // {% set target %}body{% endset %}
  Macro,        // name, params, body
  CallBlock,    // expr (the call), params (of caller), body
  FilterBlock,  // expr (a Filter chain whose innermost subject is null), body
  Break,
  Continue,
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

// Assignment target: one name, several names (tuple unpacking) or ns.attr.
struct Target {
  std::vector<std::string> names;
  bool is_tuple = false;
  std::string attribute;  // set when assigning to names[0].attribute
};

struct Param {
  std::string name;
  ExprPtr default_value;  // may be null
};

struct Stmt {
  StmtKind kind = StmtKind::Text;
  int line = 0;
  std::string text;
  std::string name;
  ExprPtr expr;
  ExprPtr cond;
  Target target;
  std::vector<Param> params;
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body;
  Body else_body;
  bool uses_loop = true;  // For: the body names `loop` (else the loop object is not built)
};

struct TemplateAst {
  Body body;
};

}  // namespace hearth::chat
