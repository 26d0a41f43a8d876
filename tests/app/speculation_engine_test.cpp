// The app's engine with speculative decoding as the settings choose it:
// n-gram drafts (the default) and a draft model give the greedy reply of
// decoding without them and report the drafts kept; a draft model with
// another vocabulary leaves speculation off and says why. A draft model on
// Vulkan (Mesa's software device in CI) gives the same greedy reply; one
// that cannot have the Vulkan device it asks for is not moved to the CPU.
#include <gtest/gtest.h>

#include <string>

#include "engine_service/chat_engine.h"

namespace hearth::app {
namespace {

const QString kStories = QStringLiteral(HEARTH_TEST_DATA_DIR "/models/stories260K.gguf");

struct Reply {
  std::string text;
  ui::GenerationStats stats;
  QString speculation;
};

Reply greedy_reply(const QString& mode, const QString& draft_model = {}, const QString& draft_backend = QStringLiteral("cpu"),
                   const QString& gpu_device = {}) {
  auto engine = make_default_chat_engine();
  ui::LoadRequest load;
  load.model_path = kStories;
  load.context_length = 1024;
  load.gpu_layers = 0;
  load.threads = 2;
  load.speculation = mode;
  load.draft_model_path = draft_model;
  load.draft_backend = draft_backend;
  load.gpu_device = gpu_device;
  auto info = engine->load(load, [](double) {}, [] { return false; });
  EXPECT_TRUE(info.ok()) << info.error().message;
  Reply out;
  if (!info.ok()) return out;
  out.speculation = info->speculation;
  ui::GenerationRequest r;
  r.turns.append({ui::ChatRole::User, QStringLiteral("Once upon a time, Lily saw a big dog. Lily saw a big dog.")});
  r.sampling.temperature = 0;
  r.sampling.repeat_penalty = 1.0;
  r.max_new_tokens = 120;
  r.conversation_id = 1;
  r.overflow_policy = QStringLiteral("stop");
  auto stats = engine->generate(r, [&](std::string_view p) { out.text += p; }, nullptr, nullptr, [] { return false; });
  EXPECT_TRUE(stats.ok()) << stats.error().message;
  if (stats.ok()) out.stats = *stats;
  return out;
}

TEST(AppSpeculation, NgramDraftsGiveThePlainGreedyReply) {
  const Reply off = greedy_reply(QStringLiteral("off"));
  const Reply ngram = greedy_reply(QStringLiteral("ngram"));
  EXPECT_EQ(off.speculation, QStringLiteral("off"));
  EXPECT_EQ(ngram.speculation, QStringLiteral("n-gram drafts"));
  ASSERT_FALSE(off.text.empty());
  EXPECT_EQ(ngram.text, off.text);
  EXPECT_LT(off.stats.draft_acceptance, 0) << "nothing is drafted with speculation off";
  // The story repeats itself: the n-gram drafter found drafts to verify.
  EXPECT_GE(ngram.stats.draft_acceptance, 0.0);
  EXPECT_LE(ngram.stats.draft_acceptance, 1.0);
}

TEST(AppSpeculation, ADraftModelGivesThePlainGreedyReply) {
  const Reply off = greedy_reply(QStringLiteral("off"));
  // The story model drafting for itself: every draft agrees.
  const Reply draft = greedy_reply(QStringLiteral("draft"), kStories);
  EXPECT_EQ(draft.speculation, QStringLiteral("draft model stories260K"));
  EXPECT_EQ(draft.text, off.text);
  EXPECT_DOUBLE_EQ(draft.stats.draft_acceptance, 1.0);
}

TEST(AppSpeculation, ADraftModelOnVulkanGivesThePlainGreedyReply) {
  const Reply off = greedy_reply(QStringLiteral("off"));
  const Reply draft = greedy_reply(QStringLiteral("draft"), kStories, QStringLiteral("vulkan"));
  // The status names the device, so a draft left on the CPU fails here.
  EXPECT_TRUE(draft.speculation.startsWith(QStringLiteral("draft model stories260K on Vulkan: ")))
      << draft.speculation.toStdString();
  ASSERT_FALSE(off.text.empty());
  EXPECT_EQ(draft.text, off.text);
  EXPECT_DOUBLE_EQ(draft.stats.draft_acceptance, 1.0);
}

TEST(AppSpeculation, ADraftModelThatCannotHaveItsVulkanDeviceLeavesSpeculationOffAndSaysWhy) {
  const Reply off = greedy_reply(QStringLiteral("off"));
  // The model itself runs on the CPU (gpu_layers 0); only the draft asks for the device.
  const Reply refused =
      greedy_reply(QStringLiteral("draft"), kStories, QStringLiteral("vulkan"), QStringLiteral("no such device 0x7f"));
  EXPECT_TRUE(refused.speculation.startsWith(QStringLiteral("off: stories260K: no Vulkan device for the draft model")))
      << refused.speculation.toStdString();
  EXPECT_EQ(refused.text, off.text);
  EXPECT_LT(refused.stats.draft_acceptance, 0) << "nothing is drafted: the draft did not move to the CPU";
}

TEST(AppSpeculation, ADraftModelWithAnotherVocabularyLeavesSpeculationOffAndSaysWhy) {
  const Reply off = greedy_reply(QStringLiteral("off"));
  const Reply refused =
      greedy_reply(QStringLiteral("draft"), QStringLiteral(HEARTH_TEST_DATA_DIR "/models/tiny-llama-f32.gguf"));
  EXPECT_TRUE(refused.speculation.startsWith(QStringLiteral("off: tiny-llama-f32: "))) << refused.speculation.toStdString();
  EXPECT_TRUE(refused.speculation.contains(QStringLiteral("vocabulary"))) << refused.speculation.toStdString();
  EXPECT_EQ(refused.text, off.text);
  EXPECT_LT(refused.stats.draft_acceptance, 0);
}

}  // namespace
}  // namespace hearth::app
