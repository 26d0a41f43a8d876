// Builds the syntax tree from the token stream. Nesting (blocks inside blocks,
// parentheses, brackets, unary chains) is bounded so a hostile template cannot
// exhaust the stack while being parsed.
#pragma once

#include <chrono>
#include <string_view>
#include <vector>

#include "ast.h"
#include "hearth/core/result.h"
#include "lexer.h"

namespace hearth::chat {

// Parsing stops with LimitExceeded once clock.deadline passes.
Result<TemplateAst> parse_template(std::vector<Token> tokens, int max_nesting_depth, const ParseClock& clock = {});

// Internal to the parser's two source files.
class Parser {
 public:
  Parser(std::vector<Token> tokens, int max_depth, const ParseClock& clock)
      : tokens_(std::move(tokens)), max_depth_(max_depth), clock_(clock) {}
  Result<TemplateAst> run();

  // Expressions (parser_expr.cpp).
  Result<ExprPtr> parse_expression(bool with_condexpr = true);
  Result<ExprPtr> parse_tuple(bool with_condexpr = true);  // "a, b" without parentheses
  Result<ExprPtr> parse_filter_chain(ExprPtr subject);

 private:
  // Statements (parser.cpp).
  Status parse_body(Body& body, std::initializer_list<std::string_view> terminators);
  Result<StmtPtr> parse_statement();
  Result<StmtPtr> parse_if(int line);
  Result<StmtPtr> parse_for(int line);
  Result<StmtPtr> parse_set(int line);
  Result<StmtPtr> parse_macro(int line);
  Result<StmtPtr> parse_call_block(int line);
  Result<StmtPtr> parse_filter_block(int line);
  Status parse_params(std::vector<Param>& params);
  Result<Target> parse_target(bool allow_attribute);
  Status expect_block_end();

  // Expression levels, loosest first.
  Result<ExprPtr> parse_or();
  Result<ExprPtr> parse_and();
  Result<ExprPtr> parse_not();
  Result<ExprPtr> parse_compare();
  Result<ExprPtr> parse_math1();
  Result<ExprPtr> parse_concat();
  Result<ExprPtr> parse_math2();
  Result<ExprPtr> parse_pow();
  Result<ExprPtr> parse_unary(bool with_filter);
  Result<ExprPtr> parse_primary();
  Result<ExprPtr> parse_postfix(ExprPtr node);
  Result<ExprPtr> parse_filter_expr(ExprPtr node);
  Result<ExprPtr> parse_subscript(ExprPtr node);
  Status parse_call_args(Expr& call);
  Result<ExprPtr> parse_test(ExprPtr node);

 public:
  // Token access shared by both halves.
  const Token& peek(size_t ahead = 0) const {
    const size_t i = pos_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  const Token& next() { const Token& t = peek(); if (pos_ < tokens_.size() - 1) ++pos_; return t; }
  bool is_op(std::string_view op, size_t ahead = 0) const {
    return peek(ahead).type == TokenType::Operator && peek(ahead).text == op;
  }
  bool is_name(std::string_view name, size_t ahead = 0) const {
    return peek(ahead).type == TokenType::Name && peek(ahead).text == name;
  }
  bool accept_op(std::string_view op) { if (!is_op(op)) return false; next(); return true; }
  bool accept_name(std::string_view name) { if (!is_name(name)) return false; next(); return true; }
  Status expect_op(std::string_view op);
  Result<std::string> expect_identifier();
  Error fail(std::string_view what) const;
  Error fail_at(int line, std::string_view what) const;

  // RAII depth counter: every recursive descent step enters one.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser& p) : p_(p) { ++p_.depth_; }
    ~DepthGuard() { --p_.depth_; }
    bool exceeded() const { return p_.depth_ > p_.max_depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
   private:
    Parser& p_;
  };
  Error too_deep() const;
  // Records a composite node's height and fails when it passes the limit, so
  // left-leaning chains (a+a+a..., x.a.a...) cannot grow a tree too deep to walk.
  Status seal(Expr& e);
  // Every few hundred steps, fails once the parse deadline has passed.
  Status check_deadline();
  int max_depth() const { return max_depth_; }

 private:
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  int max_depth_;
  int loop_name_refs_ = 0;  // how many times the name `loop` was parsed so far
  ParseClock clock_;
  uint32_t steps_ = 0;
};

ExprPtr make_expr(ExprKind kind, int line);

}  // namespace hearth::chat
