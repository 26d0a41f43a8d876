// Statement half of the parser: blocks, loops, assignments, macros.
#include "parser.h"

#include <fmt/format.h>

#include <algorithm>

namespace hearth::chat {

ExprPtr make_expr(ExprKind kind, int line) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->line = line;
  return e;
}

Error Parser::fail_at(int line, std::string_view what) const {
  return make_error(ErrorCode::InvalidFormat, fmt::format("template line {}: {}", line, what));
}

Error Parser::fail(std::string_view what) const { return fail_at(peek().line, what); }

Error Parser::too_deep() const {
  return make_error(ErrorCode::LimitExceeded,
                    fmt::format("template line {}: nesting deeper than {} levels", peek().line, max_depth_));
}

Status Parser::check_deadline() {
  if ((++steps_ & 255) != 0 || std::chrono::steady_clock::now() <= clock_.deadline) return {};
  return make_error(ErrorCode::LimitExceeded, fmt::format("template line {}: parsing took longer than {} ms",
                                                          peek().line, clock_.limit.count()));
}

Status Parser::seal(Expr& e) {
  HEARTH_CHECK(check_deadline());
  int d = 0;
  for (const auto& a : e.args) if (a) d = std::max(d, a->depth);
  for (const auto& kv : e.kwargs) if (kv.second) d = std::max(d, kv.second->depth);
  e.depth = d + 1;
  if (e.depth > max_depth_) return too_deep();
  return {};
}

Status Parser::expect_op(std::string_view op) {
  if (!accept_op(op)) {
    const Token& t = peek();
    return fail(fmt::format("expected '{}' but found '{}'", op,
                            t.type == TokenType::End ? "end of template" : t.text));
  }
  return {};
}

Result<std::string> Parser::expect_identifier() {
  if (peek().type != TokenType::Name) return fail("expected a name");
  return next().text;
}

Status Parser::expect_block_end() {
  if (peek().type != TokenType::BlockEnd) {
    return fail(fmt::format("expected end of statement '%}}' but found '{}'", peek().text));
  }
  next();
  return {};
}

Result<TemplateAst> Parser::run() {
  TemplateAst ast;
  HEARTH_CHECK(parse_body(ast.body, {}));
  return ast;
}

Status Parser::parse_body(Body& body, std::initializer_list<std::string_view> terminators) {
  DepthGuard guard(*this);
  if (guard.exceeded()) return too_deep();
  while (true) {
    HEARTH_CHECK(check_deadline());
    const Token& t = peek();
    switch (t.type) {
      case TokenType::End:
        if (terminators.size() != 0) {
          return fail(fmt::format("unexpected end of template, expected '{}'", *(terminators.end() - 1)));
        }
        return {};
      case TokenType::Text: {
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::Text;
        s->line = t.line;
        s->text = next().text;
        body.push_back(std::move(s));
        break;
      }
      case TokenType::VarBegin: {
        const int line = next().line;
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::Output;
        s->line = line;
        HEARTH_TRY(s->expr, parse_tuple());
        if (peek().type != TokenType::VarEnd) {
          return fail(fmt::format("expected end of print statement '}}}}' but found '{}'", peek().text));
        }
        next();
        body.push_back(std::move(s));
        break;
      }
      case TokenType::BlockBegin: {
        const Token& word = peek(1);
        if (word.type == TokenType::Name &&
            std::find(terminators.begin(), terminators.end(), word.text) != terminators.end()) {
          return {};  // the caller consumes the terminator
        }
        next();
        HEARTH_TRY(StmtPtr s, parse_statement());
        body.push_back(std::move(s));
        break;
      }
      default:
        return fail(fmt::format("unexpected '{}'", t.text));
    }
  }
}

Result<StmtPtr> Parser::parse_statement() {
  const Token& t = peek();
  if (t.type != TokenType::Name) return fail("expected a statement name after '{%'");
  const std::string word = t.text;
  const int line = t.line;
  next();
  if (word == "if") return parse_if(line);
  if (word == "for") return parse_for(line);
  if (word == "set") return parse_set(line);
  if (word == "macro") return parse_macro(line);
  if (word == "call") return parse_call_block(line);
  if (word == "filter") return parse_filter_block(line);
  if (word == "break" || word == "continue") {
    auto s = std::make_unique<Stmt>();
    s->kind = word == "break" ? StmtKind::Break : StmtKind::Continue;
    s->line = line;
    HEARTH_CHECK(expect_block_end());
    return s;
  }
  if (word == "include" || word == "import" || word == "from" || word == "extends" || word == "block") {
    return make_error(ErrorCode::Unsupported,
                      fmt::format("template line {}: '{}' is not available in chat templates", line, word));
  }
  return fail_at(line, fmt::format("unknown statement '{}'", word));
}

// Consumes "{% name" of a closing or continuation tag.
static Status consume_tag(Parser& p, std::string_view name) {
  if (p.peek().type != TokenType::BlockBegin || !p.is_name(name, 1)) {
    return p.fail(fmt::format("expected '{}'", name));
  }
  p.next();
  p.next();
  return {};
}

Result<StmtPtr> Parser::parse_if(int line) {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::If;
  s->line = line;
  HEARTH_TRY(ExprPtr cond, parse_tuple());
  HEARTH_CHECK(expect_block_end());
  while (true) {
    Body body;
    HEARTH_CHECK(parse_body(body, {"elif", "else", "endif"}));
    s->branches.emplace_back(std::move(cond), std::move(body));
    next();  // {%
    const std::string word = next().text;
    if (word == "elif") {
      HEARTH_TRY(cond, parse_tuple());
      HEARTH_CHECK(expect_block_end());
      continue;
    }
    if (word == "else") {
      HEARTH_CHECK(expect_block_end());
      Body else_body;
      HEARTH_CHECK(parse_body(else_body, {"endif"}));
      s->branches.emplace_back(nullptr, std::move(else_body));
      HEARTH_CHECK(consume_tag(*this, "endif"));
    }
    HEARTH_CHECK(expect_block_end());
    return s;
  }
}

Result<Target> Parser::parse_target(bool allow_attribute) {
  Target target;
  const bool paren = accept_op("(");
  HEARTH_TRY(std::string first, expect_identifier());
  target.names.push_back(first);
  if (allow_attribute && !paren && accept_op(".")) {
    HEARTH_TRY(target.attribute, expect_identifier());
    return target;
  }
  while (accept_op(",")) {
    target.is_tuple = true;
    if (peek().type != TokenType::Name) break;  // trailing comma
    HEARTH_TRY(std::string more, expect_identifier());
    target.names.push_back(more);
  }
  if (paren) HEARTH_CHECK(expect_op(")"));
  return target;
}

Result<StmtPtr> Parser::parse_for(int line) {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::For;
  s->line = line;
  HEARTH_TRY(s->target, parse_target(false));
  if (!accept_name("in")) return fail("expected 'in' in for loop");
  HEARTH_TRY(s->expr, parse_tuple(false));
  if (accept_name("if")) {
    HEARTH_TRY(s->cond, parse_expression(false));
  }
  if (is_name("recursive")) return fail("recursive loops are not supported");
  HEARTH_CHECK(expect_block_end());
  const int loop_refs_before = loop_name_refs_;
  HEARTH_CHECK(parse_body(s->body, {"else", "endfor"}));
  s->uses_loop = loop_name_refs_ != loop_refs_before;
  next();
  if (next().text == "else") {
    HEARTH_CHECK(expect_block_end());
    HEARTH_CHECK(parse_body(s->else_body, {"endfor"}));
    HEARTH_CHECK(consume_tag(*this, "endfor"));
  }
  HEARTH_CHECK(expect_block_end());
  return s;
}

Result<StmtPtr> Parser::parse_set(int line) {
  auto s = std::make_unique<Stmt>();
  s->line = line;
  HEARTH_TRY(s->target, parse_target(true));
  if (accept_op("=")) {
    s->kind = StmtKind::Set;
    HEARTH_TRY(s->expr, parse_tuple());
    HEARTH_CHECK(expect_block_end());
    return s;
  }
  s->kind = StmtKind::SetBlock;
  HEARTH_CHECK(expect_block_end());
  HEARTH_CHECK(parse_body(s->body, {"endset"}));
  HEARTH_CHECK(consume_tag(*this, "endset"));
  HEARTH_CHECK(expect_block_end());
  return s;
}

Status Parser::parse_params(std::vector<Param>& params) {
  HEARTH_CHECK(expect_op("("));
  while (!accept_op(")")) {
    if (!params.empty()) HEARTH_CHECK(expect_op(","));
    if (accept_op(")")) break;  // trailing comma
    Param p;
    HEARTH_TRY(p.name, expect_identifier());
    if (accept_op("=")) {
      HEARTH_TRY(p.default_value, parse_expression());
    }
    params.push_back(std::move(p));
  }
  return {};
}

Result<StmtPtr> Parser::parse_macro(int line) {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::Macro;
  s->line = line;
  HEARTH_TRY(s->name, expect_identifier());
  HEARTH_CHECK(parse_params(s->params));
  HEARTH_CHECK(expect_block_end());
  HEARTH_CHECK(parse_body(s->body, {"endmacro"}));
  HEARTH_CHECK(consume_tag(*this, "endmacro"));
  if (peek().type == TokenType::Name) next();  // "{% endmacro name %}"
  HEARTH_CHECK(expect_block_end());
  return s;
}

Result<StmtPtr> Parser::parse_call_block(int line) {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::CallBlock;
  s->line = line;
  if (is_op("(")) HEARTH_CHECK(parse_params(s->params));
  HEARTH_TRY(s->expr, parse_expression());
  if (s->expr->kind != ExprKind::Call) return fail_at(line, "expected a macro call after 'call'");
  HEARTH_CHECK(expect_block_end());
  HEARTH_CHECK(parse_body(s->body, {"endcall"}));
  HEARTH_CHECK(consume_tag(*this, "endcall"));
  HEARTH_CHECK(expect_block_end());
  return s;
}

Result<StmtPtr> Parser::parse_filter_block(int line) {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::FilterBlock;
  s->line = line;
  // "{% filter upper | trim %}": the same chain as after "x |", with no subject.
  HEARTH_TRY(s->expr, parse_filter_chain(nullptr));
  HEARTH_CHECK(expect_block_end());
  HEARTH_CHECK(parse_body(s->body, {"endfilter"}));
  HEARTH_CHECK(consume_tag(*this, "endfilter"));
  HEARTH_CHECK(expect_block_end());
  return s;
}

Result<TemplateAst> parse_template(std::vector<Token> tokens, int max_nesting_depth, const ParseClock& clock) {
  Parser parser(std::move(tokens), max_nesting_depth, clock);
  return parser.run();
}

}  // namespace hearth::chat
