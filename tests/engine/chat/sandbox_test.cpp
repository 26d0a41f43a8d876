// Hostile templates and data must end with a clear LimitExceeded (or format)
// error, never hang, overflow the stack or exhaust memory.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "hearth/engine/chat/json.h"
#include "hearth/engine/chat/template.h"

namespace hearth::chat {
namespace {

struct Outcome {
  Result<std::string> result;
  double seconds;
};

// Tests of one limit give the clock plenty of room, so a slow (sanitized or
// loaded) machine hits the limit under test rather than the time limit.
RenderConfig patient() {
  RenderConfig config;
  config.limits.max_render_time = std::chrono::seconds(20);
  return config;
}

Outcome run(const std::string& source, const Value& context = make_object({}), const RenderConfig& config = patient()) {
  const auto start = std::chrono::steady_clock::now();
  auto result = render_template(source, context, config);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {std::move(result), seconds};
}

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// Termination bound for a hostile case: the render-time limit is 0.5 s, so
// anything near this bound means a limit is not being checked. Deliberately
// generous so a loaded CI machine does not fail it.
constexpr double kGenerousSeconds = 5.0;

void expect_limit(const Outcome& o, const std::string& fragment) {
  ASSERT_FALSE(o.result.ok()) << "rendered " << o.result->size() << " bytes";
  EXPECT_EQ(o.result.error().code, ErrorCode::LimitExceeded) << o.result.error().message;
  EXPECT_NE(o.result.error().message.find(fragment), std::string::npos) << o.result.error().message;
  EXPECT_LT(o.seconds, kGenerousSeconds);
}

TEST(Sandbox, InfiniteRecursionStopsAtCallDepth) {
  expect_limit(run("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"), "nested deeper");
}

TEST(Sandbox, MutualRecursionStops) {
  expect_limit(run("{% macro a(n) %}{{ b(n + 1) }}{% endmacro %}{% macro b(n) %}{{ a(n + 1) }}{% endmacro %}{{ a(0) }}"),
               "nested deeper");
}

TEST(Sandbox, HugeRangeIsRefused) {
  expect_limit(run("{% for i in range(10**9) %}x{% endfor %}"), "range");
  expect_limit(run("{{ range(100001) | length }}"), "range");
  auto ok = run("{{ range(100000) | length }}");  // the reference's bound itself is allowed
  ASSERT_TRUE(ok.result.ok()) << ok.result.error().message;
  EXPECT_EQ(*ok.result, "100000");
}

TEST(Sandbox, NestedLoopsHitTheIterationBudget) {
  // With the default limits, the iteration budget or the time limit ends it.
  expect_limit(run("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
                   make_object({}), RenderConfig{}),
               "");
  RenderConfig config = patient();
  config.limits.max_loop_iterations = 1000;
  expect_limit(run("{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}", make_object({}), config),
               "more than 1000 loop iterations");
}

TEST(Sandbox, QuadraticWorkHitsTheTimeLimit) {
  // Each step copies the growing list: ~5e9 element copies without a clock.
  expect_limit(run("{% set ns = namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = ns.l + [i] %}"
                   "{% endfor %}{{ ns.l | length }}",
                   make_object({}), RenderConfig{}),
               "longer than 500 ms");
}

TEST(Sandbox, TimeLimitIsConfigurable) {
  RenderConfig config;
  config.limits.max_render_time = std::chrono::milliseconds(20);
  auto o = run("{% set ns = namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = ns.l + [i] %}{% endfor %}",
               make_object({}), config);
  expect_limit(o, "longer than 20 ms");
}

TEST(Sandbox, StringRepetitionIsCapped) {
  expect_limit(run("{{ 'a' * 1000000000000 }}"), "bytes");
  expect_limit(run("{% set ns = namespace(s='abcd') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"),
               "bytes");
  expect_limit(run("{{ [1, 2] * 100000000000 }}"), "items");
}

TEST(Sandbox, OutputSizeIsCapped) {
  expect_limit(run("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}"), "output");
}

TEST(Sandbox, DeeplyNestedExpressionsFailToParse) {
  expect_limit(run("{{ " + repeat("(", 100000) + "1" + repeat(")", 100000) + " }}"), "nesting");
  expect_limit(run("{{ " + repeat("[", 100000) + repeat("]", 100000) + " }}"), "nesting");
  expect_limit(run("{{ " + repeat("not ", 100000) + "1 }}"), "nesting");
  expect_limit(run("{{ " + repeat("-", 100000) + "1 }}"), "nesting");
}

TEST(Sandbox, LongOperatorChainsFailToParse) {
  expect_limit(run("{{ 1" + repeat(" + 1", 100000) + " }}"), "nesting");
  expect_limit(run("{{ x" + repeat(".a", 100000) + " }}"), "nesting");
  expect_limit(run("{{ x" + repeat(" | first", 100000) + " }}"), "nesting");
}

TEST(Sandbox, DeeplyNestedBlocksFailToParse) {
  expect_limit(run(repeat("{% if true %}", 100000) + repeat("{% endif %}", 100000)), "nesting");
}

TEST(Sandbox, OversizedTemplateIsRefused) {
  auto t = Template::parse(std::string((4u << 20) + 1, 'x'));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::LimitExceeded);
}

TEST(Sandbox, ModerateNestingStillWorks) {
  auto o = run("{{ " + repeat("(", 100) + "1" + repeat(")", 100) + " }}" + repeat("{% if true %}", 100) + "y" +
               repeat("{% endif %}", 100));
  ASSERT_TRUE(o.result.ok()) << o.result.error().message;
  EXPECT_EQ(*o.result, "1y");
}

TEST(Sandbox, DeeplyNestedJsonIsRefused) {
  auto v = parse_json(repeat("[", 100000) + repeat("]", 100000), "deep.json");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, ErrorCode::LimitExceeded);
  EXPECT_NE(v.error().message.find("deep.json"), std::string::npos);
}

TEST(Sandbox, DeeplyNestedDataBuiltAtRunTimeIsRefused) {
  // Each recursion wraps the accumulator in one more list.
  expect_limit(run("{% macro f(n, acc) %}{% if n > 0 %}{{ f(n - 1, [[[[acc]]]]) }}{% else %}{{ acc | length }}"
                   "{% endif %}{% endmacro %}{{ f(90, []) }}"),
               "nested deeper");
  expect_limit(run("{% set ns = namespace(v=[]) %}{% for i in range(100000) %}{% set ns.v = [ns.v] %}{% endfor %}"),
               "nested deeper");
}

TEST(Sandbox, DeepContextIsRefused) {
  Value deep = Value::array({});
  for (int i = 0; i < 1000; ++i) deep = Value::array({deep});
  expect_limit(run("{{ v }}", make_object({{"v", deep}})), "nested deeper");
}

TEST(Sandbox, SelfReferencingNamespaceDoesNotHang) {
  auto o = run("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}");
  ASSERT_FALSE(o.result.ok());
  EXPECT_EQ(o.result.error().code, ErrorCode::LimitExceeded);
  EXPECT_LT(o.seconds, kGenerousSeconds);
}

TEST(Sandbox, IntegerOverflowIsAnError) {
  auto o = run("{{ 10 ** 10 ** 10 }}");
  ASSERT_FALSE(o.result.ok());
  EXPECT_NE(o.result.error().message.find("integer overflow"), std::string::npos);
  o = run("{{ 9223372036854775807 + 1 }}");
  ASSERT_FALSE(o.result.ok());
}

TEST(Sandbox, NoHostAccess) {
  // There is no way to name a file, the environment or a module.
  for (const char* src : {"{% include '/etc/passwd' %}", "{% import 'x' as y %}", "{% extends 'base' %}",
                          "{% from 'x' import y %}"}) {
    auto o = run(src);
    ASSERT_FALSE(o.result.ok()) << src;
    EXPECT_EQ(o.result.error().code, ErrorCode::Unsupported) << src;
  }
  auto o = run("{{ self }}{{ cycler }}{{ os }}{{ config }}{{ request }}");
  ASSERT_TRUE(o.result.ok());
  EXPECT_EQ(*o.result, "");
}

}  // namespace
}  // namespace hearth::chat
