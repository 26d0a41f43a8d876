// render_chat with tools and tool calls, the built-in fallback templates,
// their choice from a vocabulary, error line numbers, numbers and the clock.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "hearth/engine/chat/chat_template.h"
#include "hearth/engine/chat/json.h"

namespace hearth::chat {
namespace {

nlohmann::ordered_json load(const std::string& relative) {
  std::ifstream in(std::string(HEARTH_TEST_DATA_DIR) + "/" + relative, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return nlohmann::ordered_json::parse(ss.str());
}

std::vector<ChatMessage> to_messages(const nlohmann::ordered_json& list) {
  std::vector<ChatMessage> out;
  for (const auto& m : list) {
    ChatMessage msg;
    msg.role = m.at("role").get<std::string>();
    msg.content = m.at("content").get<std::string>();
    nlohmann::ordered_json extra = nlohmann::ordered_json::object();
    for (const auto& [key, value] : m.items()) {
      if (key != "role" && key != "content") extra[key] = value;
    }
    if (!extra.empty()) msg.extra = parse_json(extra.dump()).value();
    out.push_back(std::move(msg));
  }
  return out;
}

// Tool definitions, tool calls and tool results through real templates,
// against the reference's renderings (tests/data/jinja/tool_cases.json).
TEST(RenderChat, ToolCallingTemplatesMatchReference) {
  const auto data = load("jinja/tool_cases.json");
  ASSERT_GE(data.at("cases").size(), 10u);
  for (const auto& c : data.at("cases")) {
    const auto fixture = load("templates/" + c.at("template_file").get<std::string>());
    SCOPED_TRACE(c.at("template_file").get<std::string>() + " with " + std::to_string(c.at("messages").size()) +
                 " messages");
    auto tmpl = ChatTemplate::from_source(fixture.at("template").get<std::string>());
    ASSERT_TRUE(tmpl.ok()) << tmpl.error().message;
    RenderOptions options;
    options.generation_prompt = GenerationPrompt::Add;
    options.bos_token = fixture.at("bos_token").get<std::string>();
    options.eos_token = fixture.at("eos_token").get<std::string>();
    options.extra_context = make_object({{"tools", parse_json(c.at("tools").dump()).value()}});
    auto rendered = render_chat(*tmpl, to_messages(c.at("messages")), options);
    if (c.contains("error")) {
      EXPECT_FALSE(rendered.ok()) << "reference failed with " << c.at("error").get<std::string>();
    } else {
      ASSERT_TRUE(rendered.ok()) << rendered.error().message;
      EXPECT_EQ(*rendered, c.at("output").get<std::string>());
    }
  }
}

// A built-in template must render like the model's own template (from the
// fixtures) on the conversations both handle the same way.
void expect_builtin_matches(BuiltinTemplate kind, const std::string& fixture_file, bool only_with_generation_prompt) {
  auto tmpl = ChatTemplate::builtin(kind);
  ASSERT_TRUE(tmpl.ok()) << tmpl.error().message;
  const auto fixture = load("templates/" + fixture_file);
  int compared = 0;
  for (const auto& c : fixture.at("cases")) {
    if (c.contains("error")) continue;
    const bool agp = c.at("add_generation_prompt").get<bool>();
    if (only_with_generation_prompt && !agp) continue;
    const auto messages = to_messages(c.at("messages"));
    RenderOptions options;
    options.generation_prompt = agp ? GenerationPrompt::Add : GenerationPrompt::Omit;
    options.bos_token = fixture.at("bos_token").get<std::string>();
    options.eos_token = fixture.at("eos_token").get<std::string>();
    auto rendered = render_chat(*tmpl, messages, options);
    ASSERT_TRUE(rendered.ok()) << rendered.error().message;
    EXPECT_EQ(*rendered, c.at("output").get<std::string>()) << fixture_file;
    ++compared;
  }
  EXPECT_GE(compared, 3) << fixture_file;
}

TEST(BuiltinTemplates, Llama3MatchesLlama3Instruct) {
  // The model's template always opens an assistant turn, so compare those cases.
  expect_builtin_matches(BuiltinTemplate::Llama3, "llama3-8b-instruct.json", true);
}

TEST(BuiltinTemplates, Phi3MatchesPhi35) {
  expect_builtin_matches(BuiltinTemplate::Phi3, "phi-3.5-mini-instruct.json", false);
}

TEST(BuiltinTemplates, GemmaMatchesGemma2) {
  // The model's template refuses system messages; those cases are skipped as errors.
  expect_builtin_matches(BuiltinTemplate::Gemma, "gemma-2-2b-it.json", false);
}

TEST(BuiltinTemplates, MistralMatchesMistralNemo) {
  expect_builtin_matches(BuiltinTemplate::Mistral, "mistral-nemo-instruct.json", false);
}

TEST(BuiltinTemplates, ChatMLMatchesQwenWhenASystemPromptIsGiven) {
  // Qwen's template only differs by inventing a system prompt when none is given.
  auto tmpl = ChatTemplate::builtin(BuiltinTemplate::ChatML);
  ASSERT_TRUE(tmpl.ok());
  const auto fixture = load("templates/qwen2.5-7b-instruct.json");
  int compared = 0;
  for (const auto& c : fixture.at("cases")) {
    const auto messages = to_messages(c.at("messages"));
    if (messages.front().role != "system") continue;
    RenderOptions options;
    options.generation_prompt = c.at("add_generation_prompt").get<bool>() ? GenerationPrompt::Add : GenerationPrompt::Omit;
    auto rendered = render_chat(*tmpl, messages, options);
    ASSERT_TRUE(rendered.ok());
    EXPECT_EQ(*rendered, c.at("output").get<std::string>());
    ++compared;
  }
  EXPECT_EQ(compared, 4);
}

TEST(BuiltinTemplates, Llama2FollowsMetasFormat) {
  auto tmpl = ChatTemplate::builtin(BuiltinTemplate::Llama2);
  ASSERT_TRUE(tmpl.ok()) << tmpl.error().message;
  RenderOptions options;
  options.bos_token = "<s>";
  options.eos_token = "</s>";
  auto rendered = render_chat(*tmpl,
                              {{"system", "Be kind.", {}}, {"user", "Hi", {}}, {"assistant", "Hello!", {}},
                               {"user", "Bye", {}}},
                              options);
  ASSERT_TRUE(rendered.ok()) << rendered.error().message;
  // <s>[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST] {answer} </s><s>[INST] {user} [/INST]
  EXPECT_EQ(*rendered,
            "<s>[INST] <<SYS>>\nBe kind.\n<</SYS>>\n\nHi [/INST] Hello! </s><s>[INST] Bye [/INST]");
}

TEST(BuiltinTemplates, ChosenFromVocabularyTokens) {
  using T = BuiltinTemplate;
  EXPECT_EQ(choose_builtin_template({"<unk>", "<|im_start|>", "<|im_end|>"}), T::ChatML);
  EXPECT_EQ(choose_builtin_template({"<|begin_of_text|>", "<|start_header_id|>", "<|eot_id|>"}), T::Llama3);
  // Hermes 2 Pro adds ChatML tokens to a Llama 3 vocabulary and is tuned on ChatML.
  EXPECT_EQ(choose_builtin_template({"<|start_header_id|>", "<|im_start|>"}), T::ChatML);
  EXPECT_EQ(choose_builtin_template({"<bos>", "<start_of_turn>", "<end_of_turn>"}), T::Gemma);
  EXPECT_EQ(choose_builtin_template({"<s>", "</s>", "<|user|>", "<|assistant|>", "<|end|>"}), T::Phi3);
  EXPECT_EQ(choose_builtin_template({"<s>", "</s>", "[INST]", "[/INST]"}), T::Mistral);
  // No chat marker: a completion model (<s> and </s> alone say nothing).
  EXPECT_EQ(choose_builtin_template({"<unk>", "<s>", "</s>", "▁the"}), T::Completion);
  EXPECT_EQ(choose_builtin_template({"a", "b"}), T::Completion);
  EXPECT_EQ(choose_builtin_template({}), T::Completion);
}

TEST(Errors, NameTheTemplateLine) {
  auto syntax = Template::parse("line one\n{% if x %}\n{{ 1 + }}\n{% endif %}");
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.error().code, ErrorCode::InvalidFormat);
  EXPECT_EQ(syntax.error().message.rfind("template line 3: ", 0), 0u) << syntax.error().message;

  auto unclosed = Template::parse("a\nb\n{% for m in messages %}\nc");
  ASSERT_FALSE(unclosed.ok());
  EXPECT_NE(unclosed.error().message.find("endfor"), std::string::npos) << unclosed.error().message;

  auto raised = render_template("one\ntwo\n\n{{ raise_exception('no system role') }}", make_object({}));
  ASSERT_FALSE(raised.ok());
  EXPECT_EQ(raised.error().code, ErrorCode::InvalidArgument);
  EXPECT_EQ(raised.error().message, "template line 4: no system role");
  EXPECT_EQ(raised_message(raised.error()), "no system role");

  auto runtime = render_template("x\n{% set a = 1 %}\n{{ a + 'b' }}", make_object({}));
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(runtime.error().code, ErrorCode::InvalidFormat);
  EXPECT_EQ(runtime.error().message.rfind("template line 3: ", 0), 0u) << runtime.error().message;
  EXPECT_EQ(raised_message(runtime.error()), "");

  auto undefined = render_template("\n\n{{ nothing.here }}", make_object({}));
  ASSERT_FALSE(undefined.ok());
  EXPECT_EQ(undefined.error().message, "template line 3: 'nothing' is undefined");
}

TEST(Values, FloatsPrintAsPythonReprs) {
  // Python's str(float) for each value.
  const std::pair<double, const char*> cases[] = {
      {0.1, "0.1"}, {1e16, "1e+16"}, {1e-05, "1e-05"}, {123456789.0, "123456789.0"}, {1.5e300, "1.5e+300"},
      {5e-324, "5e-324"}, {0.1 + 0.2, "0.30000000000000004"}, {1e22, "1e+22"},
      {12345678901234567.0, "1.2345678901234568e+16"}, {-2.5, "-2.5"}, {100.0, "100.0"},
      {1e15, "1000000000000000.0"}, {9999999999999998.0, "9999999999999998.0"}, {0.0001, "0.0001"},
      {0.00012345, "0.00012345"}, {1.0 / 3.0, "0.3333333333333333"}, {1.4142135623730951, "1.4142135623730951"},
      {-0.0, "-0.0"}, {1e100, "1e+100"}};
  for (const auto& [d, text] : cases) {
    auto out = render_template("{{ v }}", make_object({{"v", Value::number(d)}}));
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(*out, text);
  }
}

TEST(Values, JsonRoundTripKeepsOrderAndUnicode) {
  const std::string text = R"({"z":1,"a":[true,null,2.5,"é\n\"q\"",{"k":-3}],"m":{}})";
  auto v = parse_json(text);
  ASSERT_TRUE(v.ok());
  auto one_line = to_json(*v);
  ASSERT_TRUE(one_line.ok());
  // json.dumps(json.loads(text), ensure_ascii=False)
  EXPECT_EQ(*one_line, R"({"z": 1, "a": [true, null, 2.5, "é\n\"q\"", {"k": -3}], "m": {}})");
  EXPECT_FALSE(parse_json("{\"a\": ", "broken.json").ok());
  EXPECT_NE(parse_json("[1,", "broken.json").error().message.find("broken.json"), std::string::npos);
}

TEST(Clock, StrftimeNowUsesTheInjectedClock) {
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
  auto out = render_template("{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%A %Y-%m-%d') }}", make_object({}),
                             config);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out, "29 Nov 2026|Sunday 2026-11-29");
  // Without an injected clock the real date is used: at least a 4-digit year.
  auto real = render_template("{{ strftime_now('%Y') }}", make_object({}));
  ASSERT_TRUE(real.ok());
  EXPECT_EQ(real->size(), 4u);
}

TEST(RenderChat, ContextCarriesOptionsAndExtras) {
  auto tmpl = ChatTemplate::from_source(
      "{{ bos_token }}{% for m in messages %}{{ m.role }}:{{ m.content }}{% if m.name is defined %}({{ m.name }})"
      "{% endif %};{% endfor %}{{ add_generation_prompt }}{{ eos_token }}{{ date_string }}");
  ASSERT_TRUE(tmpl.ok()) << tmpl.error().message;
  RenderOptions options;
  options.generation_prompt = GenerationPrompt::Omit;
  options.bos_token = "<B>";
  options.eos_token = "<E>";
  options.extra_context = make_object({{"date_string", Value::string("1 Jan 2027")}});
  auto out = render_chat(*tmpl,
                         {{"user", "hi", make_object({{"name", Value::string("ann")}})}, {"assistant", "yo", {}}},
                         options);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out, "<B>user:hi(ann);assistant:yo;False<E>1 Jan 2027");
}

}  // namespace
}  // namespace hearth::chat
