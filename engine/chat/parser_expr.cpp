// Expression half of the parser. Precedence follows the reference, loosest
// first: conditional, or, and, not, comparisons, + -, ~, * / // %, **, unary
// minus, then postfix (attribute, item, call) and filters/tests, which bind
// tighter than every binary operator ("a + b | trim" trims b only).
#include <fmt/format.h>

#include <algorithm>

#include "parser.h"

namespace hearth::chat {

#define HEARTH_SEAL(node) HEARTH_CHECK(seal(*(node)))

Result<ExprPtr> Parser::parse_tuple(bool with_condexpr) {
  const int line = peek().line;
  HEARTH_TRY(ExprPtr first, parse_expression(with_condexpr));
  if (!is_op(",")) return first;
  auto tuple = make_expr(ExprKind::Tuple, line);
  tuple->args.push_back(std::move(first));
  while (accept_op(",")) {
    const Token& t = peek();
    if (t.type == TokenType::VarEnd || t.type == TokenType::BlockEnd || t.type == TokenType::End ||
        is_op(")") || is_name("if")) {
      break;
    }
    HEARTH_TRY(ExprPtr item, parse_expression(with_condexpr));
    tuple->args.push_back(std::move(item));
  }
  HEARTH_SEAL(tuple);
  return tuple;
}

Result<ExprPtr> Parser::parse_expression(bool with_condexpr) {
  DepthGuard guard(*this);
  if (guard.exceeded()) return too_deep();
  HEARTH_TRY(ExprPtr expr, parse_or());
  if (!with_condexpr) return expr;
  while (is_name("if")) {
    const int line = next().line;
    auto cond = make_expr(ExprKind::Cond, line);
    HEARTH_TRY(ExprPtr test, parse_or());
    ExprPtr otherwise;
    if (accept_name("else")) {
      HEARTH_TRY(otherwise, parse_expression());
    }
    cond->args.push_back(std::move(expr));
    cond->args.push_back(std::move(test));
    cond->args.push_back(std::move(otherwise));
    expr = std::move(cond);
    HEARTH_SEAL(expr);
  }
  return expr;
}

namespace {
ExprPtr binary(ExprKind kind, int line, ExprPtr a, ExprPtr b, std::string op = {}) {
  auto e = make_expr(kind, line);
  e->name = std::move(op);
  e->args.push_back(std::move(a));
  e->args.push_back(std::move(b));
  return e;
}
}  // namespace


Result<ExprPtr> Parser::parse_or() {
  HEARTH_TRY(ExprPtr left, parse_and());
  while (is_name("or")) {
    const int line = next().line;
    HEARTH_TRY(ExprPtr right, parse_and());
    left = binary(ExprKind::Or, line, std::move(left), std::move(right));
    HEARTH_SEAL(left);
  }
  return left;
}

Result<ExprPtr> Parser::parse_and() {
  HEARTH_TRY(ExprPtr left, parse_not());
  while (is_name("and")) {
    const int line = next().line;
    HEARTH_TRY(ExprPtr right, parse_not());
    left = binary(ExprKind::And, line, std::move(left), std::move(right));
    HEARTH_SEAL(left);
  }
  return left;
}

Result<ExprPtr> Parser::parse_not() {
  if (is_name("not")) {
    DepthGuard guard(*this);
    if (guard.exceeded()) return too_deep();
    const int line = next().line;
    HEARTH_TRY(ExprPtr operand, parse_not());
    auto e = make_expr(ExprKind::Not, line);
    e->args.push_back(std::move(operand));
    HEARTH_SEAL(e);
    return e;
  }
  return parse_compare();
}

Result<ExprPtr> Parser::parse_compare() {
  const int line = peek().line;
  HEARTH_TRY(ExprPtr first, parse_math1());
  ExprPtr cmp;
  while (true) {
    std::string op;
    const Token& t = peek();
    if (t.type == TokenType::Operator &&
        (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == "<=" || t.text == ">" || t.text == ">=")) {
      op = t.text;
      next();
    } else if (is_name("in")) {
      op = "in";
      next();
    } else if (is_name("not") && is_name("in", 1)) {
      op = "notin";
      next();
      next();
    } else {
      break;
    }
    if (!cmp) {
      cmp = make_expr(ExprKind::Compare, line);
      cmp->depth = first->depth + 1;
      cmp->args.push_back(std::move(first));
    }
    HEARTH_TRY(ExprPtr operand, parse_math1());
    // The height grows with each operand, not by re-walking all of them (a
    // chain of 200k comparisons would otherwise parse in quadratic time).
    cmp->depth = std::max(cmp->depth, operand->depth + 1);
    cmp->ops.push_back(op);
    cmp->args.push_back(std::move(operand));
    if (cmp->depth > max_depth()) return too_deep();
    // Real templates chain two or three comparisons; a long chain is an attack.
    if (cmp->ops.size() > static_cast<size_t>(max_depth())) {
      return make_error(ErrorCode::LimitExceeded, fmt::format("template line {}: a chain of more than {} comparisons",
                                                              line, max_depth()));
    }
    HEARTH_CHECK(check_deadline());
  }
  return cmp ? std::move(cmp) : std::move(first);
}

Result<ExprPtr> Parser::parse_math1() {
  HEARTH_TRY(ExprPtr left, parse_concat());
  while (is_op("+") || is_op("-")) {
    const Token& t = next();
    HEARTH_TRY(ExprPtr right, parse_concat());
    left = binary(ExprKind::Binary, t.line, std::move(left), std::move(right), t.text);
    HEARTH_SEAL(left);
  }
  return left;
}

Result<ExprPtr> Parser::parse_concat() {
  HEARTH_TRY(ExprPtr left, parse_math2());
  while (is_op("~")) {
    const int line = next().line;
    HEARTH_TRY(ExprPtr right, parse_math2());
    left = binary(ExprKind::Binary, line, std::move(left), std::move(right), "~");
    HEARTH_SEAL(left);
  }
  return left;
}

Result<ExprPtr> Parser::parse_math2() {
  HEARTH_TRY(ExprPtr left, parse_pow());
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const Token& t = next();
    HEARTH_TRY(ExprPtr right, parse_pow());
    left = binary(ExprKind::Binary, t.line, std::move(left), std::move(right), t.text);
    HEARTH_SEAL(left);
  }
  return left;
}

Result<ExprPtr> Parser::parse_pow() {
  HEARTH_TRY(ExprPtr left, parse_unary(true));
  while (is_op("**")) {
    const int line = next().line;
    HEARTH_TRY(ExprPtr right, parse_unary(true));
    left = binary(ExprKind::Binary, line, std::move(left), std::move(right), "**");
    HEARTH_SEAL(left);
  }
  return left;
}

Result<ExprPtr> Parser::parse_unary(bool with_filter) {
  DepthGuard guard(*this);
  if (guard.exceeded()) return too_deep();
  ExprPtr node;
  if (is_op("-") || is_op("+")) {
    const Token& t = next();
    HEARTH_TRY(ExprPtr operand, parse_unary(false));
    node = make_expr(t.text == "-" ? ExprKind::Neg : ExprKind::Pos, t.line);
    node->args.push_back(std::move(operand));
    HEARTH_SEAL(node);
  } else {
    HEARTH_TRY(node, parse_primary());
  }
  HEARTH_TRY(node, parse_postfix(std::move(node)));
  if (with_filter) {
    HEARTH_TRY(node, parse_filter_expr(std::move(node)));
  }
  return node;
}

Result<ExprPtr> Parser::parse_primary() {
  const Token& t = peek();
  const int line = t.line;
  switch (t.type) {
    case TokenType::Name: {
      next();
      auto e = make_expr(ExprKind::Literal, line);
      if (t.text == "true" || t.text == "True") { e->literal = Value::boolean(true); return e; }
      if (t.text == "false" || t.text == "False") { e->literal = Value::boolean(false); return e; }
      if (t.text == "none" || t.text == "None") { e->literal = Value::none(); return e; }
      e->kind = ExprKind::Name;
      e->name = t.text;
      if (e->name == "loop") ++loop_name_refs_;
      return e;
    }
    case TokenType::String: {
      std::string text;
      while (peek().type == TokenType::String) text += next().text;  // "a" "b" joins
      auto e = make_expr(ExprKind::Literal, line);
      e->literal = Value::string(std::move(text));
      return e;
    }
    case TokenType::Integer: {
      auto e = make_expr(ExprKind::Literal, line);
      e->literal = Value::integer(next().int_value);
      return e;
    }
    case TokenType::Float: {
      auto e = make_expr(ExprKind::Literal, line);
      e->literal = Value::number(next().float_value);
      return e;
    }
    case TokenType::Operator: break;
    default: return fail(fmt::format("unexpected '{}'", t.type == TokenType::End ? "end of template" : t.text));
  }
  if (accept_op("(")) {
    if (accept_op(")")) return make_expr(ExprKind::Tuple, line);
    HEARTH_TRY(ExprPtr inner, parse_expression());
    if (accept_op(")")) return inner;
    auto tuple = make_expr(ExprKind::Tuple, line);
    tuple->args.push_back(std::move(inner));
    while (accept_op(",")) {
      if (is_op(")")) break;
      HEARTH_TRY(ExprPtr item, parse_expression());
      tuple->args.push_back(std::move(item));
    }
    HEARTH_CHECK(expect_op(")"));
    HEARTH_SEAL(tuple);
    return tuple;
  }
  if (accept_op("[")) {
    auto list = make_expr(ExprKind::List, line);
    while (!accept_op("]")) {
      if (!list->args.empty()) {
        HEARTH_CHECK(expect_op(","));
        if (accept_op("]")) break;
      }
      HEARTH_TRY(ExprPtr item, parse_expression());
      list->args.push_back(std::move(item));
    }
    HEARTH_SEAL(list);
    return list;
  }
  if (accept_op("{")) {
    auto dict = make_expr(ExprKind::Dict, line);
    while (!accept_op("}")) {
      if (!dict->args.empty()) {
        HEARTH_CHECK(expect_op(","));
        if (accept_op("}")) break;
      }
      HEARTH_TRY(ExprPtr key, parse_expression());
      HEARTH_CHECK(expect_op(":"));
      HEARTH_TRY(ExprPtr value, parse_expression());
      dict->args.push_back(std::move(key));
      dict->args.push_back(std::move(value));
    }
    HEARTH_SEAL(dict);
    return dict;
  }
  return fail(fmt::format("unexpected '{}'", t.text));
}

Result<ExprPtr> Parser::parse_postfix(ExprPtr node) {
  while (true) {
    if (is_op(".") || is_op("[")) {
      HEARTH_TRY(node, parse_subscript(std::move(node)));
    } else if (is_op("(")) {
      auto call = make_expr(ExprKind::Call, peek().line);
      call->args.push_back(std::move(node));
      HEARTH_CHECK(parse_call_args(*call));
      HEARTH_SEAL(call);
      node = std::move(call);
    } else {
      return node;
    }
  }
}

Result<ExprPtr> Parser::parse_subscript(ExprPtr node) {
  const int line = peek().line;
  if (accept_op(".")) {
    const Token& t = next();
    if (t.type == TokenType::Name) {
      auto e = make_expr(ExprKind::Attr, line);
      e->name = t.text;
      e->args.push_back(std::move(node));
      HEARTH_SEAL(e);
      return e;
    }
    if (t.type == TokenType::Integer) {  // "x.0" is x[0]
      auto e = make_expr(ExprKind::Item, line);
      auto index = make_expr(ExprKind::Literal, line);
      index->literal = Value::integer(t.int_value);
      e->args.push_back(std::move(node));
      e->args.push_back(std::move(index));
      HEARTH_SEAL(e);
      return e;
    }
    return fail_at(line, "expected an attribute name after '.'");
  }
  HEARTH_CHECK(expect_op("["));
  // Either an index expression or a slice [start:stop:step].
  ExprPtr parts[3];
  int part = 0;
  bool is_slice = false;
  while (true) {
    if (is_op(":")) {
      next();
      is_slice = true;
      if (++part > 2) return fail_at(line, "too many ':' in slice");
      continue;
    }
    if (is_op("]")) break;
    if (parts[part]) return fail_at(line, "expected ']' or ':' in subscript");
    HEARTH_TRY(parts[part], parse_expression());
  }
  next();  // ]
  if (is_slice) {
    auto e = make_expr(ExprKind::Slice, line);
    e->args.push_back(std::move(node));
    for (auto& p : parts) e->args.push_back(std::move(p));
    HEARTH_SEAL(e);
    return e;
  }
  if (!parts[0]) return fail_at(line, "empty subscript");
  auto e = make_expr(ExprKind::Item, line);
  e->args.push_back(std::move(node));
  e->args.push_back(std::move(parts[0]));
  HEARTH_SEAL(e);
  return e;
}

Status Parser::parse_call_args(Expr& call) {
  HEARTH_CHECK(expect_op("("));
  bool first = true;
  while (!accept_op(")")) {
    if (!first) {
      HEARTH_CHECK(expect_op(","));
      if (accept_op(")")) break;
    }
    first = false;
    if (is_op("*") || is_op("**")) return fail("*args and **kwargs are not supported");
    if (peek().type == TokenType::Name && is_op("=", 1)) {
      std::string key = next().text;
      next();
      HEARTH_TRY(ExprPtr value, parse_expression());
      call.kwargs.emplace_back(std::move(key), std::move(value));
    } else {
      if (!call.kwargs.empty()) return fail("positional argument after keyword argument");
      HEARTH_TRY(ExprPtr value, parse_expression());
      call.args.push_back(std::move(value));
    }
  }
  return {};
}

Result<ExprPtr> Parser::parse_filter_chain(ExprPtr subject) {
  ExprPtr node = std::move(subject);
  do {
    const int line = peek().line;
    HEARTH_TRY(std::string name, expect_identifier());
    while (accept_op(".")) {  // dotted filter names
      HEARTH_TRY(std::string part, expect_identifier());
      name += "." + part;
    }
    auto f = make_expr(ExprKind::Filter, line);
    f->name = std::move(name);
    f->args.push_back(std::move(node));
    if (is_op("(")) HEARTH_CHECK(parse_call_args(*f));
    HEARTH_SEAL(f);
    node = std::move(f);
  } while (accept_op("|"));
  return node;
}

Result<ExprPtr> Parser::parse_filter_expr(ExprPtr node) {
  while (true) {
    if (accept_op("|")) {
      const int line = peek().line;
      HEARTH_TRY(std::string name, expect_identifier());
      auto f = make_expr(ExprKind::Filter, line);
      f->name = std::move(name);
      f->args.push_back(std::move(node));
      if (is_op("(")) HEARTH_CHECK(parse_call_args(*f));
      HEARTH_SEAL(f);
      node = std::move(f);
    } else if (is_name("is")) {
      HEARTH_TRY(node, parse_test(std::move(node)));
    } else if (is_op("(")) {
      auto call = make_expr(ExprKind::Call, peek().line);
      call->args.push_back(std::move(node));
      HEARTH_CHECK(parse_call_args(*call));
      HEARTH_SEAL(call);
      node = std::move(call);
    } else {
      return node;
    }
  }
}

Result<ExprPtr> Parser::parse_test(ExprPtr node) {
  const int line = next().line;  // "is"
  auto test = make_expr(ExprKind::Test, line);
  test->negated = accept_name("not");
  HEARTH_TRY(test->name, expect_identifier());
  test->args.push_back(std::move(node));
  const Token& t = peek();
  if (is_op("(")) {
    HEARTH_CHECK(parse_call_args(*test));
  } else if ((t.type == TokenType::Name || t.type == TokenType::String || t.type == TokenType::Integer ||
              t.type == TokenType::Float || is_op("[") || is_op("{")) &&
             !is_name("else") && !is_name("or") && !is_name("and") && !is_name("if")) {
    if (is_name("is")) return fail("tests cannot be chained with 'is'");
    HEARTH_TRY(ExprPtr arg, parse_primary());
    HEARTH_TRY(arg, parse_postfix(std::move(arg)));
    test->args.push_back(std::move(arg));
  }
  HEARTH_SEAL(test);
  return test;
}

}  // namespace hearth::chat
