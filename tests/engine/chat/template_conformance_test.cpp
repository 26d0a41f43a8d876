// Every case of every reference template in tests/data/templates must render
// byte-exactly to the reference output, or raise exactly the reference error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "hearth/engine/chat/json.h"
#include "hearth/engine/chat/template.h"

namespace hearth::chat {
namespace {

std::vector<std::filesystem::path> template_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(HEARTH_TEST_DATA_DIR "/templates")) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class TemplateConformance : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(TemplateConformance, EveryCaseMatchesReference) {
  const auto fixture = nlohmann::ordered_json::parse(read_file(GetParam()));
  const std::string source = fixture.at("template").get<std::string>();
  auto parsed = Template::parse(source);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;

  // strftime_now is pinned to the reference's date.
  RenderConfig config;
  config.local_time = [] {
    std::tm t{};
    t.tm_year = 2026 - 1900;
    t.tm_mon = 10;
    t.tm_mday = 29;
    t.tm_wday = 0;
    t.tm_yday = 332;
    return t;
  };

  const auto& cases = fixture.at("cases");
  ASSERT_FALSE(cases.empty());
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    SCOPED_TRACE("case " + std::to_string(i));
    auto messages = parse_json(c.at("messages").dump(), "messages");
    ASSERT_TRUE(messages.ok()) << messages.error().message;
    const Value context = make_object({
        {"messages", *messages},
        {"add_generation_prompt", Value::boolean(c.at("add_generation_prompt").get<bool>())},
        {"bos_token", Value::string(fixture.at("bos_token").get<std::string>())},
        {"eos_token", Value::string(fixture.at("eos_token").get<std::string>())},
    });
    auto rendered = parsed->render(context, config);
    if (c.contains("error")) {
      ASSERT_FALSE(rendered.ok()) << "expected error '" << c.at("error").get<std::string>() << "', got output";
      EXPECT_EQ(raised_message(rendered.error()), c.at("error").get<std::string>()) << rendered.error().message;
    } else {
      ASSERT_TRUE(rendered.ok()) << rendered.error().message;
      EXPECT_EQ(*rendered, c.at("output").get<std::string>());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TemplateConformance, ::testing::ValuesIn(template_files()),
                         [](const auto& param_info) {
                           std::string name = param_info.param.stem().string();
                           for (char& ch : name) if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

TEST(TemplateConformanceSet, AllTenFixturesPresent) {
  EXPECT_EQ(template_files().size(), 10u);
}

}  // namespace
}  // namespace hearth::chat
