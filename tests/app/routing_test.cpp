// The "Auto" model on two fixture models through the real engine: the
// TinyStories model (small: it knows children's stories and nothing else) and
// the tiny llama fixture (large). A scripted mix of prompts goes where it
// should: stories to the small model (the question is familiar and its draft
// confident); code, long messages, long conversations and an explicit request
// to the large one by rule; text the small model has never seen (noise, rare
// words, another language) to the large one by its familiarity score, though
// its draft stays confident (the story model writes a story after anything).
// The probe's log-probability is checked against the reference engine's
// logits in the first test; the familiarity score in the session tests.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <fstream>
#include <vector>

#include "engine_service/chat_engine.h"
#include "engine_service/auto_chat_engine.h"

namespace hearth::app {
namespace {

const QString kSmall = QStringLiteral(HEARTH_TEST_DATA_DIR "/models/stories260K.gguf");
const QString kLarge = QStringLiteral(HEARTH_TEST_DATA_DIR "/models/tiny-llama-f32.gguf");

ui::LoadRequest load_of(const QString& path) {
  ui::LoadRequest r;
  r.model_path = path;
  r.context_length = 1024;
  r.gpu_layers = 0;
  r.threads = 2;
  r.speculation = QStringLiteral("off");
  return r;
}

ui::GenerationRequest ask(const QString& text, int turns_before = 0) {
  ui::GenerationRequest r;
  for (int i = 0; i < turns_before; ++i) {
    r.turns.append({i % 2 == 0 ? ui::ChatRole::User : ui::ChatRole::Assistant, QStringLiteral("Lily played.")});
  }
  r.turns.append({ui::ChatRole::User, text});
  r.sampling.temperature = 0;
  r.sampling.repeat_penalty = 1.0;
  r.max_new_tokens = 24;
  r.conversation_id = 7;
  r.overflow_policy = QStringLiteral("stop");
  return r;
}

class RoutingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RouterRules rules;
    rules.long_prompt_chars = 400;
    rules.long_history_turns = 10;
    rules.probe_tokens = 12;
    rules.min_mean_logprob = -2.5;
    rules.min_familiarity = -4.0;
    engine = std::make_unique<AutoChatEngine>(make_default_chat_engine(), make_default_chat_engine(), rules);
    auto info = engine->load_pair(load_of(kSmall), load_of(kLarge), nullptr, [] { return false; });
    ASSERT_TRUE(info.ok()) << info.error().message;
    EXPECT_TRUE(info->name.startsWith(QStringLiteral("Auto ("))) << info->name.toStdString();
    pair_name = info->name;
  }
  ui::GenerationStats run(const ui::GenerationRequest& r, std::string* text = nullptr) {
    std::string out;
    auto stats = engine->generate(r, [&](std::string_view p) { out += p; }, [](std::string_view) {}, nullptr,
                                  [] { return false; });
    EXPECT_TRUE(stats.ok()) << stats.error().message;
    if (text) *text = out;
    return stats.ok() ? *stats : ui::GenerationStats{};
  }
  std::unique_ptr<AutoChatEngine> engine;
  QString pair_name;  // "Auto (small's name / large's name)"
};

TEST(RoutingProbe, TheMeanLogProbabilityIsTheModelsOwn) {
  // The probe's score for one greedy token after the reference prompt equals
  // log-softmax of the reference engine's logits at the greedy token.
  auto engine = make_default_chat_engine();
  ASSERT_TRUE(engine->load(load_of(kSmall), [](double) {}, [] { return false; }).ok());
  ui::GenerationRequest r = ask(QStringLiteral("Once upon a time"));
  r.collect_logprobs = true;
  r.max_new_tokens = 1;
  auto stats = engine->generate(r, [](std::string_view) {}, [](std::string_view) {}, nullptr, [] { return false; });
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  // The reference logits after the prompt's 5 tokens (5 x 512 float32): the
  // greedy token's log-softmax.
  std::ifstream in(HEARTH_TEST_DATA_DIR "/models/stories260K.gguf.logits.f32", std::ios::binary);
  std::vector<float> logits(5 * 512);
  in.read(reinterpret_cast<char*>(logits.data()), static_cast<std::streamsize>(logits.size() * sizeof(float)));
  ASSERT_TRUE(in.good());
  const float* last = logits.data() + 4 * 512;
  const float top = *std::max_element(last, last + 512);
  double sum = 0;
  for (int i = 0; i < 512; ++i) sum += std::exp(static_cast<double>(last[i] - top));
  const double expected = -std::log(sum);  // log p(argmax)
  EXPECT_NEAR(stats->mean_logprob, expected, 1e-3);
  ui::GenerationRequest plain = ask(QStringLiteral("Once upon a time"));
  auto without = engine->generate(plain, [](std::string_view) {}, [](std::string_view) {}, nullptr, [] { return false; });
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(without->mean_logprob, 0.0);  // not asked for
}

TEST_F(RoutingTest, AScriptedMixGoesToTheExpectedModels) {
  struct Case {
    QString prompt;
    int turns_before;
    bool escalate;
    const char* expected;
    const char* why;
  };
  const QString long_story = QString(QStringLiteral("Lily and Ben went to the park. ")).repeated(20);
  const Case cases[] = {
      {QStringLiteral("Once upon a time, there was a little girl named Lily."), 0, false, "small", "confident"},
      {QStringLiteral("Lily saw a big dog in the park."), 0, false, "small", "confident"},
      {QStringLiteral("One day, Tom went to the park with his mom."), 0, false, "small", "confident"},
      {QStringLiteral("Fix this:\n```python\nprint(1\n```"), 0, false, "large", "code block"},
      {long_story, 0, false, "large", "long message"},
      {QStringLiteral("Lily played with her ball."), 12, false, "large", "long conversation"},
      {QStringLiteral("Once upon a time"), 0, true, "large", "asked for the large model"},
  };
  for (const Case& c : cases) {
    ui::GenerationRequest r = ask(c.prompt, c.turns_before);
    r.escalate = c.escalate;
    std::string text;
    const ui::GenerationStats stats = run(r, &text);
    std::printf("[ route ] %-6s draft %7.3f familiarity %7.3f  %s  <- %s\n", stats.routed_to.toStdString().c_str(),
                stats.route_score, stats.route_familiarity, stats.route_reason.toStdString().c_str(),
                c.prompt.left(40).toStdString().c_str());
    EXPECT_EQ(stats.routed_to.toStdString(), c.expected) << c.prompt.toStdString() << ": " << stats.route_reason.toStdString();
    EXPECT_NE(stats.route_reason.toStdString().find(c.why), std::string::npos) << stats.route_reason.toStdString();
    EXPECT_FALSE(text.empty()) << c.prompt.toStdString();
  }
  // Text the small model never saw: its draft is as confident as after a
  // story, so only the question's familiarity sends it to the large model.
  for (const QString& unseen : {QStringLiteral("qzv xjw kpq 8841 vvxq zzkj wqpx jjq 0x7f3e qqzx"),
                                QStringLiteral("Xylophonic quaternions zymurgically bifurcate isomorphic yttrium"),
                                QStringLiteral("Der Quantencomputer berechnet die Eigenwerte der Matrix.")}) {
    const ui::GenerationStats stats = run(ask(unseen));
    std::printf("[ route ] %-6s draft %7.3f familiarity %7.3f  %s  <- %s (unseen text)\n",
                stats.routed_to.toStdString().c_str(), stats.route_score, stats.route_familiarity,
                stats.route_reason.toStdString().c_str(), unseen.left(40).toStdString().c_str());
    EXPECT_EQ(stats.routed_to.toStdString(), "large") << unseen.toStdString();
    EXPECT_NE(stats.route_reason.toStdString().find("unfamiliar"), std::string::npos) << stats.route_reason.toStdString();
    EXPECT_GT(stats.route_score, -2.5) << "the draft alone would have kept it small";
    // The reply names the large model as the one that answered.
    EXPECT_FALSE(stats.answered_by.isEmpty());
    EXPECT_TRUE(pair_name.endsWith(QStringLiteral(" / ") + stats.answered_by + QStringLiteral(")")))
        << stats.answered_by.toStdString() << " in " << pair_name.toStdString();
  }
}

TEST_F(RoutingTest, TheRoutedReplyIsTheChosenModelsOwnReply) {
  // The small model's reply through the router equals its reply alone: the
  // probe leaves nothing behind in the conversation.
  auto alone = make_default_chat_engine();
  ASSERT_TRUE(alone->load(load_of(kSmall), [](double) {}, [] { return false; }).ok());
  const ui::GenerationRequest r = ask(QStringLiteral("Once upon a time, there was a little girl named Lily."));
  std::string direct;
  ASSERT_TRUE(alone->generate(r, [&](std::string_view p) { direct += p; }, [](std::string_view) {}, nullptr, [] { return false; }).ok());
  std::string routed;
  const ui::GenerationStats stats = run(r, &routed);
  EXPECT_EQ(stats.routed_to, QStringLiteral("small"));
  EXPECT_EQ(routed, direct);
}

}  // namespace
}  // namespace hearth::app

namespace hearth::app {
namespace {

TEST(RouterRulesTest, AScoreBelowTheThresholdGoesLargeAndRulesComeFirst) {
  RouterRules rules;
  rules.min_mean_logprob = -1.5;
  rules.min_familiarity = -4.0;
  auto draft = [&](double d) { return chat::route_by_scores(ProbeScores{d, std::nullopt}, rules); };
  EXPECT_EQ(draft(-1.6).target, RouteTarget::Large);
  EXPECT_EQ(draft(-1.4).target, RouteTarget::Small);
  EXPECT_EQ(draft(-1.6).score, std::optional<double>(-1.6));
  // An unfamiliar question goes large however sure the draft is; a familiar
  // one still needs a confident draft.
  EXPECT_EQ(chat::route_by_scores(ProbeScores{-0.1, -4.5}, rules).target, RouteTarget::Large);
  EXPECT_EQ(chat::route_by_scores(ProbeScores{-1.6, -2.0}, rules).target, RouteTarget::Large);
  EXPECT_EQ(chat::route_by_scores(ProbeScores{-1.4, -3.9}, rules).target, RouteTarget::Small);
  EXPECT_EQ(chat::route_by_scores(ProbeScores{}, rules).target, RouteTarget::Small);  // nothing measured
  ui::GenerationRequest r;
  r.turns.append({ui::ChatRole::User, QStringLiteral("Tell me a story")});
  EXPECT_FALSE(chat::route_by_rules(route_input(r), rules).has_value());  // left to the scores
  rules.code_goes_large = false;
  r.turns.last().text = QStringLiteral("```\ncode\n```");
  EXPECT_FALSE(chat::route_by_rules(route_input(r), rules).has_value());
  r.escalate = true;
  ASSERT_TRUE(chat::route_by_rules(route_input(r), rules).has_value());
  EXPECT_EQ(chat::route_by_rules(route_input(r), rules)->target, RouteTarget::Large);
  // Length counts characters: 300 Cyrillic letters are 600 bytes.
  rules.long_prompt_chars = 400;
  r.escalate = false;
  QString cyrillic;
  for (int i = 0; i < 300; ++i) cyrillic += QChar(0x0434);
  r.turns.last().text = cyrillic;
  EXPECT_FALSE(chat::route_by_rules(route_input(r), rules).has_value());
}

}  // namespace
}  // namespace hearth::app
