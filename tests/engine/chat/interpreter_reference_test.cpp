// Small templates exercising each interpreter feature (whitespace control,
// operators, filters, tests, methods, loops, macros, ...), compared with the
// reference's own renderings in tests/data/jinja/reference_cases.json
// (written by make_reference_cases.py with Jinja2 configured as the fixtures
// README describes).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "hearth/engine/chat/json.h"
#include "hearth/engine/chat/template.h"

namespace hearth::chat {
namespace {

nlohmann::ordered_json load_cases() {
  std::ifstream in(HEARTH_TEST_DATA_DIR "/jinja/reference_cases.json", std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return nlohmann::ordered_json::parse(ss.str());
}

TEST(InterpreterReference, EveryCaseMatchesJinja2) {
  const auto data = load_cases();
  auto context = parse_json(data.at("context").dump(), "context");
  ASSERT_TRUE(context.ok()) << context.error().message;
  const auto& cases = data.at("cases");
  ASSERT_GT(cases.size(), 50u);
  size_t errors_expected = 0;
  for (const auto& c : cases) {
    const std::string source = c.at("template").get<std::string>();
    SCOPED_TRACE("template: " + source);
    auto rendered = render_template(source, *context);
    if (c.contains("error")) {
      ++errors_expected;
      EXPECT_FALSE(rendered.ok()) << "reference failed with " << c.at("error").get<std::string>()
                                  << " but Hearth rendered: " << *rendered;
      if (!rendered.ok()) {
        // Every failure names the template line.
        EXPECT_EQ(rendered.error().message.rfind("template line ", 0), 0u) << rendered.error().message;
      }
    } else {
      ASSERT_TRUE(rendered.ok()) << rendered.error().message;
      EXPECT_EQ(*rendered, c.at("output").get<std::string>());
    }
  }
  EXPECT_GT(errors_expected, 5u);
}

}  // namespace
}  // namespace hearth::chat
