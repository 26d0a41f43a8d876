// Reasoning kept apart from the answer: detection from the real templates,
// the switch variables, a message's reasoning rendered as the reference's
// Jinja2 rendering shows it, and the streaming splitter against hand-written
// splits of each format (every split point of the text, one byte at a time).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "hearth/engine/chat/chat_template.h"
#include "hearth/engine/chat/json.h"
#include "hearth/engine/chat/reasoning.h"

namespace hearth::chat {
namespace {

nlohmann::ordered_json load(const std::string& relative) {
  std::ifstream in(std::string(HEARTH_TEST_DATA_DIR) + "/" + relative, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return nlohmann::ordered_json::parse(ss.str());
}

struct Split {
  std::string reasoning;
  std::string answer;
};

// Feeds `parts` in order; a part starting with "\x01" is a control token.
Split run(ReasoningSplitter splitter, const std::vector<std::string>& parts) {
  std::vector<ReasoningSplitter::Piece> pieces;
  for (const auto& p : parts) {
    if (!p.empty() && p[0] == '\x01') {
      splitter.push_control(p.substr(1), pieces);
    } else {
      splitter.push_text(p, pieces);
    }
  }
  splitter.finish(pieces);
  Split out;
  for (const auto& p : pieces) (p.reasoning ? out.reasoning : out.answer) += p.text;
  return out;
}

// Every way of cutting `text` into two pieces, plus one byte at a time.
std::vector<std::vector<std::string>> cuttings(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  for (size_t at = 0; at <= text.size(); ++at) out.push_back({text.substr(0, at), text.substr(at)});
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  out.push_back(bytes);
  return out;
}

TEST(Reasoning, DetectsTheRealTemplatesFormats) {
  const auto gpt_oss = detect_reasoning(load("templates2/gpt-oss.json").at("template").get<std::string>());
  EXPECT_EQ(gpt_oss.syntax, ReasoningSyntax::Harmony);
  EXPECT_TRUE(gpt_oss.effort_levels);
  EXPECT_TRUE(gpt_oss.offers(ReasoningChoice::High));

  const auto smollm3 = detect_reasoning(load("templates2/smollm3.json").at("template").get<std::string>());
  EXPECT_EQ(smollm3.syntax, ReasoningSyntax::ThinkTags);
  EXPECT_TRUE(smollm3.thinking_switch);
  EXPECT_TRUE(smollm3.offers(ReasoningChoice::Off));
  EXPECT_FALSE(smollm3.offers(ReasoningChoice::High));

  const auto r1 = detect_reasoning(load("templates/deepseek-r1-distill-qwen.json").at("template").get<std::string>());
  EXPECT_EQ(r1.syntax, ReasoningSyntax::ThinkTags);
  EXPECT_FALSE(r1.offers(ReasoningChoice::Off));  // R1 always thinks

  const auto llama = detect_reasoning(load("templates/llama-3.1-8b-instruct.json").at("template").get<std::string>());
  EXPECT_EQ(llama.syntax, ReasoningSyntax::None);
  EXPECT_FALSE(llama.offers(ReasoningChoice::On));
}

TEST(Reasoning, SwitchVariablesFollowTheTemplate) {
  ReasoningStyle qwen3{ReasoningSyntax::ThinkTags, true, false, false};
  const Value off = reasoning_variables(qwen3, ReasoningChoice::Off);
  ASSERT_TRUE(off.is_object());
  ASSERT_NE(off.as_object().find("enable_thinking"), nullptr);
  EXPECT_FALSE(off.as_object().find("enable_thinking")->truthy());
  EXPECT_TRUE(reasoning_variables(qwen3, ReasoningChoice::Default).is_undefined());
  EXPECT_TRUE(reasoning_variables(qwen3, ReasoningChoice::High).is_undefined());

  ReasoningStyle harmony{ReasoningSyntax::Harmony, false, true, false};
  const Value high = reasoning_variables(harmony, ReasoningChoice::High);
  ASSERT_TRUE(high.is_object());
  EXPECT_EQ(high.as_object().find("reasoning_effort")->as_string(), "high");
  EXPECT_EQ(reasoning_variables(harmony, ReasoningChoice::Off).as_object().find("reasoning_effort")->as_string(), "low");
}

TEST(Reasoning, SmolLM3TemplateWithThinkingOffRendersAsTheReference) {
  // The reference renders SmolLM3 with a "/no_think" system prompt; the
  // switch variable must give the same header.
  const auto fixture = load("templates2/smollm3.json");
  auto tmpl = ChatTemplate::from_source(fixture.at("template").get<std::string>());
  ASSERT_TRUE(tmpl.ok()) << tmpl.error().message;
  RenderOptions with_flag, with_switch;
  with_switch.extra_context = reasoning_variables(detect_reasoning(fixture.at("template").get<std::string>()),
                                                  ReasoningChoice::Off);
  auto a = render_chat(*tmpl, {{"system", "Be brief. /no_think", {}}, {"user", "Hi", {}}}, with_flag);
  auto b = render_chat(*tmpl, {{"system", "Be brief.", {}}, {"user", "Hi", {}}}, with_switch);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(b->find("/no_think"), std::string::npos);
}

TEST(Reasoning, MessageReasoningRendersAsTheReferenceConversations) {
  // The fixture conversations carrying reasoning give it as both
  // `reasoning_content` and `thinking`; ChatMessage::reasoning must render
  // the same bytes as Jinja2 did.
  size_t compared = 0;
  for (const char* name : {"templates2/gpt-oss.json", "templates2/smollm3.json", "templates2/qwen3-coder.json"}) {
    SCOPED_TRACE(name);
    const auto fixture = load(name);
    auto tmpl = ChatTemplate::from_source(fixture.at("template").get<std::string>());
    ASSERT_TRUE(tmpl.ok()) << tmpl.error().message;
    for (const auto& c : fixture.at("cases")) {
      if (c.contains("error")) continue;
      bool has_reasoning = false;
      std::vector<ChatMessage> messages;
      for (const auto& m : c.at("messages")) {
        ChatMessage msg{m.at("role").get<std::string>(), m.value("content", std::string()), {}};
        if (m.contains("reasoning_content")) {
          msg.reasoning = m.at("reasoning_content").get<std::string>();
          has_reasoning = true;
        }
        nlohmann::ordered_json rest = m;
        for (const char* key : {"role", "content", "reasoning_content", "thinking"}) rest.erase(key);
        if (!rest.empty()) {
          auto extra = parse_json(rest.dump(), "message");
          ASSERT_TRUE(extra.ok());
          msg.extra = *extra;
        }
        messages.push_back(std::move(msg));
      }
      if (!has_reasoning) continue;
      RenderOptions options;
      options.generation_prompt =
          c.at("add_generation_prompt").get<bool>() ? GenerationPrompt::Add : GenerationPrompt::Omit;
      options.bos_token = fixture.at("bos_token").get<std::string>();
      options.eos_token = fixture.at("eos_token").get<std::string>();
      options.config.local_time = [] {
        std::tm t{};
        t.tm_year = 2026 - 1900;
        t.tm_mon = 10;
        t.tm_mday = 29;
        t.tm_yday = 332;
        return t;
      };
      auto out = render_chat(*tmpl, messages, options);
      ASSERT_TRUE(out.ok()) << out.error().message;
      EXPECT_EQ(*out, c.at("output").get<std::string>());
      ++compared;
    }
  }
  EXPECT_EQ(compared, 6u);
}

TEST(ReasoningSplitter, ThinkTagsAtEverySplitPoint) {
  const std::string reply = "<think>\nLet me add 2 and 2.\n</think>\n\nIt is 4.";
  for (const auto& parts : cuttings(reply)) {
    const Split s = run(ReasoningSplitter(ReasoningSyntax::ThinkTags, false), parts);
    EXPECT_EQ(s.reasoning, "Let me add 2 and 2.\n");
    EXPECT_EQ(s.answer, "It is 4.");
  }
}

TEST(ReasoningSplitter, PromptThatOpensTheReasoning) {
  // DeepSeek-R1 distills: the generation prompt ends in "<think>\n".
  const std::string reply = "The user greets.</think>Hello!";
  for (const auto& parts : cuttings(reply)) {
    const Split s = run(ReasoningSplitter(ReasoningSyntax::ThinkTags, true), parts);
    EXPECT_EQ(s.reasoning, "The user greets.");
    EXPECT_EQ(s.answer, "Hello!");
  }
}

TEST(ReasoningSplitter, TextThatOnlyLooksLikeATagIsTheAnswer) {
  for (const std::string& reply : {std::string("<thin air"), std::string("<b>bold</b>"), std::string("x <think>")}) {
    for (const auto& parts : cuttings(reply)) {
      const Split s = run(ReasoningSplitter(ReasoningSyntax::ThinkTags, false), parts);
      EXPECT_EQ(s.reasoning, "");
      EXPECT_EQ(s.answer, reply);
    }
  }
  // An unclosed block is all reasoning (the reply hit its limit while thinking).
  const Split open = run(ReasoningSplitter(ReasoningSyntax::ThinkTags, false), {"<think>still </thi"});
  EXPECT_EQ(open.reasoning, "still </thi");
  EXPECT_EQ(open.answer, "");
}

TEST(ReasoningSplitter, HarmonyChannels) {
  // A gpt-oss reply after the "<|start|>assistant" generation prompt.
  const std::vector<std::string> parts = {
      "\x01<|channel|>", "analysis", "\x01<|message|>", "User says hi.", " Reply politely.", "\x01<|end|>",
      "\x01<|start|>",   "assistant", "\x01<|channel|>", "final",         "\x01<|message|>", "Hello",
      " there!",         "\x01<|return|>", "ignored"};
  const Split s = run(ReasoningSplitter(ReasoningSyntax::Harmony, false), parts);
  EXPECT_EQ(s.reasoning, "User says hi. Reply politely.");
  EXPECT_EQ(s.answer, "Hello there!");

  // A commentary channel with a recipient is not reasoning.
  const Split tool = run(ReasoningSplitter(ReasoningSyntax::Harmony, false),
                         {"\x01<|channel|>", "commentary to=functions.get", "\x01<|message|>", "{}"});
  EXPECT_EQ(tool.reasoning, "");
  EXPECT_EQ(tool.answer, "{}");

  // A model that ignores the format still shows its text.
  const Split plain = run(ReasoningSplitter(ReasoningSyntax::Harmony, false), {"just text"});
  EXPECT_EQ(plain.answer, "just text");
}

TEST(ReasoningSplitter, NoSyntaxPassesEverythingThrough) {
  const Split s = run(ReasoningSplitter(ReasoningSyntax::None, false), {"<think>", "a", "</think>b"});
  EXPECT_EQ(s.reasoning, "");
  EXPECT_EQ(s.answer, "<think>a</think>b");
}

TEST(Reasoning, ChoicesParseAndPrint) {
  for (const char* text : {"default", "off", "on", "low", "medium", "high"}) {
    const auto c = parse_reasoning_choice(text);
    ASSERT_TRUE(c.has_value()) << text;
    EXPECT_STREQ(to_string(*c), text);
  }
  EXPECT_FALSE(parse_reasoning_choice("maybe").has_value());
}

}  // namespace
}  // namespace hearth::chat
