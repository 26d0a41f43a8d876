// The response cache in front of the real engine on the demo model, with the
// cache in a real SQLite file: a repeated deterministic request gets the first
// reply's text without the model running (the inner engine's calls are counted),
// sampled or uncached requests always run it, a stopped reply is not kept, the
// cache survives a restart, and a changed model file never gets an old answer.
// How much faster a hit is gets printed as a report, not asserted.
#include <QElapsedTimer>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "engine_service/caching_chat_engine.h"

namespace hearth::app {
namespace {

// Counts generate() calls that reach the model.
class CountingEngine final : public ChatEngine {
 public:
  CountingEngine(std::unique_ptr<ChatEngine> inner, std::shared_ptr<std::atomic<int>> calls)
      : inner_(std::move(inner)), calls_(std::move(calls)) {}
  Result<ui::ModelInfo> load(const ui::LoadRequest& r, const ProgressFn& p, const CancelledFn& c) override {
    return inner_->load(r, p, c);
  }
  void unload() override { inner_->unload(); }
  Result<ui::GenerationStats> generate(const ui::GenerationRequest& r, const PieceFn& piece, const PieceFn& reasoning,
                                       const ContextEventFn& event, const CancelledFn& cancelled) override {
    ++*calls_;
    return inner_->generate(r, piece, reasoning, event, cancelled);
  }

 private:
  std::unique_ptr<ChatEngine> inner_;
  std::shared_ptr<std::atomic<int>> calls_;
};

struct Reply {
  std::string text;
  ui::GenerationStats stats;
  double ms = 0;
};

class ResponseCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir.isValid());
    model = dir.filePath(QStringLiteral("stories.gguf"));
    std::filesystem::copy_file(HEARTH_TEST_DATA_DIR "/models/stories260K.gguf", model.toStdString());
    start();
  }
  void start() {
    engine = std::make_unique<CachingChatEngine>(std::make_unique<CountingEngine>(make_default_chat_engine(), calls),
                                                 dir.filePath(QStringLiteral("cache.sqlite3")).toStdString());
    ui::LoadRequest load;
    load.model_path = model;
    load.context_length = 512;
    load.gpu_layers = 0;
    load.threads = 2;
    auto info = engine->load(load, [](double) {}, [] { return false; });
    ASSERT_TRUE(info.ok()) << info.error().message;
  }
  static ui::GenerationRequest request(const QString& text, double temperature = 0, bool cached = true) {
    ui::GenerationRequest r;
    r.turns.append({ui::ChatRole::User, text});
    r.sampling.temperature = temperature;
    r.sampling.repeat_penalty = 1.0;
    r.max_new_tokens = 60;
    r.conversation_id = 1;
    r.use_response_cache = cached;
    return r;
  }
  Reply ask(const ui::GenerationRequest& r, int stop_after_pieces = -1) {
    Reply out;
    int pieces = 0;
    QElapsedTimer clock;
    clock.start();
    auto stats = engine->generate(
        r, [&](std::string_view p) { out.text += p; ++pieces; }, [](std::string_view) {}, nullptr,
        [&] { return stop_after_pieces >= 0 && pieces >= stop_after_pieces; });
    out.ms = static_cast<double>(clock.nsecsElapsed()) / 1e6;
    EXPECT_TRUE(stats.ok()) << stats.error().message;
    if (stats.ok()) out.stats = *stats;
    return out;
  }

  QTemporaryDir dir;
  QString model;
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
  std::unique_ptr<CachingChatEngine> engine;
};

TEST_F(ResponseCacheTest, ARepeatedDeterministicRequestGetsTheSameTextWithoutRunningTheModel) {
  const Reply first = ask(request(QStringLiteral("Once upon a time")));
  ASSERT_FALSE(first.text.empty());
  EXPECT_FALSE(first.stats.from_cache);
  EXPECT_EQ(calls->load(), 1);
  const Reply again = ask(request(QStringLiteral("Once upon a time")));
  EXPECT_EQ(again.text, first.text);
  EXPECT_TRUE(again.stats.from_cache);
  EXPECT_EQ(again.stats.generated_tokens, first.stats.generated_tokens);
  EXPECT_EQ(calls->load(), 1);  // the model did not run
  std::printf("[ report ] first request %.1f ms, repeated %.3f ms (%.2f%%)\n", first.ms, again.ms,
              100.0 * again.ms / first.ms);

  // Another question, a sampled request or one that does not ask for the cache runs the model.
  ask(request(QStringLiteral("Once upon a time there was")));
  EXPECT_EQ(calls->load(), 2);
  ask(request(QStringLiteral("Once upon a time"), 0.8));
  EXPECT_EQ(calls->load(), 3);
  ask(request(QStringLiteral("Once upon a time"), 0, false));
  EXPECT_EQ(calls->load(), 4);

  // After a restart the cache file still answers.
  engine.reset();
  start();
  const Reply restarted = ask(request(QStringLiteral("Once upon a time")));
  EXPECT_EQ(restarted.text, first.text);
  EXPECT_EQ(calls->load(), 4);
}

TEST_F(ResponseCacheTest, AStoppedReplyIsNotKept) {
  const Reply stopped = ask(request(QStringLiteral("Lily went")), 2);
  EXPECT_EQ(stopped.stats.stop_reason, QStringLiteral("cancelled"));
  const Reply full = ask(request(QStringLiteral("Lily went")));
  EXPECT_FALSE(full.stats.from_cache);
  EXPECT_EQ(calls->load(), 2);
  EXPECT_GT(full.text.size(), stopped.text.size());
}

TEST_F(ResponseCacheTest, AChangedModelFileNeverGetsAnOldAnswer) {
  ask(request(QStringLiteral("Once upon a time")));
  EXPECT_EQ(calls->load(), 1);
  // The file changes (one byte appended past the tensors; its size and time move).
  engine.reset();
  { std::ofstream(model.toStdString(), std::ios::app | std::ios::binary) << '\0'; }
  std::filesystem::last_write_time(model.toStdString(),
                                   std::filesystem::last_write_time(model.toStdString()) + std::chrono::seconds(2));
  start();
  const Reply after = ask(request(QStringLiteral("Once upon a time")));
  EXPECT_FALSE(after.stats.from_cache);
  EXPECT_EQ(calls->load(), 2);
}

}  // namespace
}  // namespace hearth::app
