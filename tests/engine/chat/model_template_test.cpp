// choose_model_template: a model keeps its own chat template when it works,
// and falls back to a built-in one, with a warning naming the cause, when the
// template is missing, hostile (hangs, exhausts memory) or broken.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "hearth/engine/chat/chat_template.h"
#include "hearth/engine/chat/json.h"

namespace hearth::chat {
namespace {

nlohmann::ordered_json load(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return nlohmann::ordered_json::parse(ss.str());
}

std::vector<std::filesystem::path> real_templates() {
  std::vector<std::filesystem::path> out;
  for (const char* dir : {"/templates", "/templates2"}) {
    for (const auto& entry : std::filesystem::directory_iterator(std::string(HEARTH_TEST_DATA_DIR) + dir)) {
      if (entry.path().extension() == ".json") out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

const std::vector<std::string> kChatMLVocab = {"<unk>", "<|im_start|>", "<|im_end|>"};
const std::vector<std::string> kLlama3Vocab = {"<|begin_of_text|>", "<|start_header_id|>", "<|eot_id|>"};

void expect_fallback(const ModelTemplateChoice& choice, BuiltinTemplate kind, const std::string& cause) {
  ASSERT_TRUE(choice.chat_template.builtin_kind().has_value()) << "kept the model's template";
  EXPECT_EQ(*choice.chat_template.builtin_kind(), kind);
  EXPECT_NE(choice.warning.find(cause), std::string::npos) << choice.warning;
  EXPECT_NE(choice.warning.find(std::string("using the built-in ") + to_string(kind) + " template"), std::string::npos)
      << choice.warning;
}

TEST(ModelTemplate, RealTemplatesAreKeptAndRenderAsTheReference) {
  const auto paths = real_templates();
  ASSERT_EQ(paths.size(), 13u);  // ten in templates/, gpt-oss, SmolLM3 and Qwen3-Coder in templates2/
  RenderConfig config;
  config.local_time = [] {  // the reference's date, 29 Nov 2026
    std::tm t{};
    t.tm_year = 2026 - 1900;
    t.tm_mon = 10;
    t.tm_mday = 29;
    t.tm_wday = 0;
    t.tm_yday = 332;
    return t;
  };
  for (const auto& path : paths) {
    SCOPED_TRACE(path.filename().string());
    const auto fixture = load(path);
    const std::string source = fixture.at("template").get<std::string>();
    const ModelTemplateChoice choice = choose_model_template(source, kChatMLVocab);
    EXPECT_EQ(choice.warning, "");
    EXPECT_FALSE(choice.chat_template.builtin_kind().has_value());
    EXPECT_EQ(choice.chat_template.compiled().source(), source);
    // The kept template renders the reference's conversations exactly.
    size_t compared = 0;
    for (const auto& c : fixture.at("cases")) {
      if (c.contains("error")) continue;
      auto messages = parse_json(c.at("messages").dump(), "messages");
      ASSERT_TRUE(messages.ok()) << messages.error().message;
      const Value context = make_object({
          {"messages", *messages},
          {"add_generation_prompt", Value::boolean(c.at("add_generation_prompt").get<bool>())},
          {"bos_token", Value::string(fixture.at("bos_token").get<std::string>())},
          {"eos_token", Value::string(fixture.at("eos_token").get<std::string>())},
      });
      auto rendered = choice.chat_template.compiled().render(context, config);
      ASSERT_TRUE(rendered.ok()) << rendered.error().message;
      EXPECT_EQ(*rendered, c.at("output").get<std::string>());
      ++compared;
    }
    EXPECT_GT(compared, 0u);
  }
}

TEST(ModelTemplate, TemplateRejectingTheSystemRoleIsKept) {
  // Gemma 2's real template raises "System role not supported": a refusal of
  // one conversation shape, not a broken template.
  const auto fixture = load(std::string(HEARTH_TEST_DATA_DIR) + "/templates/gemma-2-2b-it.json");
  const std::string source = fixture.at("template").get<std::string>();
  ASSERT_NE(source.find("System role not supported"), std::string::npos);
  const ModelTemplateChoice choice = choose_model_template(source, kChatMLVocab);
  EXPECT_EQ(choice.warning, "");
  EXPECT_FALSE(choice.chat_template.builtin_kind().has_value());
  // Strict alternation that refuses anything but a single user turn is kept too.
  const std::string strict =
      "{% if messages | length != 1 %}{{ raise_exception('one message only') }}{% endif %}"
      "{{ messages[0].content }}";
  const ModelTemplateChoice strict_choice = choose_model_template(strict, kChatMLVocab);
  EXPECT_EQ(strict_choice.warning, "");
  EXPECT_FALSE(strict_choice.chat_template.builtin_kind().has_value());
}

TEST(ModelTemplate, MissingTemplateUsesTheBuiltInForTheVocabulary) {
  const ModelTemplateChoice none = choose_model_template(std::nullopt, kLlama3Vocab);
  expect_fallback(none, BuiltinTemplate::Llama3, "no chat template");
  const ModelTemplateChoice empty = choose_model_template(std::string_view(), kChatMLVocab);
  expect_fallback(empty, BuiltinTemplate::ChatML, "no chat template");
}

TEST(ModelTemplate, HangingTemplateFallsBack) {
  const std::string hang =
      "{% for m in messages %}{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
      "{% endfor %}";
  const ModelTemplateChoice choice = choose_model_template(hang, kLlama3Vocab);
  expect_fallback(choice, BuiltinTemplate::Llama3, "the model's chat template cannot be used (template line 1: ");
  // The clock or the iteration budget ends it, whichever the machine reaches first.
  EXPECT_TRUE(choice.warning.find("loop iterations") != std::string::npos ||
              choice.warning.find("longer than") != std::string::npos ||
              choice.warning.find("work budget") != std::string::npos)
      << choice.warning;
}

TEST(ModelTemplate, MemoryBombFallsBack) {
  const std::string bomb =
      "{% set s = 'x' * 8000000 %}{% set ns = namespace(a=[]) %}\n"
      "{% for i in range(64) %}{% set ns.a = ns.a + [s | list] %}{% endfor %}{{ ns.a | length }}";
  const ModelTemplateChoice choice = choose_model_template(bomb, kChatMLVocab);
  expect_fallback(choice, BuiltinTemplate::ChatML, "template line 2: a collection of 8000000 items exceeds");
}

TEST(ModelTemplate, SyntaxErrorFallsBackNamingTheLine) {
  const std::string broken = "{% for m in messages %}\n{{ m.content }}\n{% if m.role == %}x{% endif %}\n{% endfor %}";
  const ModelTemplateChoice choice = choose_model_template(broken, kChatMLVocab);
  expect_fallback(choice, BuiltinTemplate::ChatML, "the model's chat template cannot be used (template line 3: ");
}

TEST(ModelTemplate, UnsupportedAndAlwaysRaisingTemplatesFallBack) {
  expect_fallback(choose_model_template("{% include 'other.jinja' %}", kChatMLVocab), BuiltinTemplate::ChatML,
                  "cannot be used");
  expect_fallback(choose_model_template("{{ raise_exception('this model cannot chat') }}", kChatMLVocab),
                  BuiltinTemplate::ChatML, "template line 1: this model cannot chat");
}

TEST(ModelTemplate, LimitsAreTheCallers) {
  // A template fine under the defaults fails under a tighter output cap.
  Limits limits;
  limits.max_output_bytes = 10;
  const ModelTemplateChoice choice =
      choose_model_template("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}", kChatMLVocab, limits);
  expect_fallback(choice, BuiltinTemplate::ChatML, "output exceeds 10 bytes");
}

}  // namespace
}  // namespace hearth::chat
