// EngineService on its own thread: chunks are batched (<= ~30 signals per
// second), cancellation works between tokens, failures are reported, and the
// GUI thread keeps running while the engine loads and generates (a probe
// timer measures the longest stall).
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "engine_service/engine_service.h"
#include "engine_service/engine_service_client.h"

namespace hearth::app {
namespace {

using namespace std::chrono_literals;

// A ChatEngine double that takes real time like a model would: each load step
// and each token sleeps on the engine thread.
class SlowEngine final : public ChatEngine {
 public:
  int load_steps = 100;
  int tokens = 200;
  bool endless = false;  // generate until cancelled
  std::chrono::microseconds step = 1500us;

  Result<ui::ModelInfo> load(const ui::LoadRequest& request, const ProgressFn& progress,
                             const CancelledFn& cancelled) override {
    if (request.model_path.endsWith(QStringLiteral("bad.gguf"))) {
      return make_error(ErrorCode::InvalidFormat, "bad.gguf: not a GGUF file");
    }
    for (int i = 1; i <= load_steps; ++i) {
      if (cancelled()) return make_error(ErrorCode::Cancelled, "load cancelled");
      std::this_thread::sleep_for(step);
      progress(double(i) / load_steps);
    }
    ui::ModelInfo info;
    info.name = QStringLiteral("slow");
    info.context_max = 4096;
    return info;
  }
  void unload() override {}
  Result<ui::GenerationStats> generate(const ui::GenerationRequest&, const PieceFn& on_piece,
                                       const ContextEventFn&, const CancelledFn& cancelled) override {
    int produced = 0;
    for (; endless || produced < tokens; ++produced) {
      if (cancelled()) break;
      std::this_thread::sleep_for(step);
      on_piece(produced % 10 == 9 ? "é " : "ab ");
    }
    ui::GenerationStats stats;
    stats.generated_tokens = produced;
    stats.stop_reason = cancelled() ? QStringLiteral("cancelled") : QStringLiteral("eos");
    return stats;
  }
};

QString expected_text(int tokens) {
  QString out;
  for (int i = 0; i < tokens; ++i) out += i % 10 == 9 ? QStringLiteral("é ") : QStringLiteral("ab ");
  return out;
}

// Measures the longest gap between ticks of a 2 ms timer on the GUI thread.
class StallProbe {
 public:
  StallProbe() {
    timer_.setInterval(2);
    QObject::connect(&timer_, &QTimer::timeout, [this] {
      longest_ms_ = std::max(longest_ms_, since_.restart());
    });
    since_.start();
    timer_.start();
  }
  qint64 longest_ms() const { return longest_ms_; }

 private:
  QTimer timer_;
  QElapsedTimer since_;
  qint64 longest_ms_ = 0;
};

TEST(EngineService, LoadReportsProgressThenModel) {
  auto engine = std::make_unique<SlowEngine>();
  EngineServiceClient client(std::move(engine));
  QSignalSpy progress(&client, &ui::EngineClient::loadProgress);
  QSignalSpy loaded(&client, &ui::EngineClient::modelLoaded);
  StallProbe probe;
  ui::LoadRequest request;
  request.model_path = QStringLiteral("/models/slow.gguf");
  client.loadModel(request);
  ASSERT_TRUE(loaded.wait(5000));
  const auto info = loaded.at(0).at(0).value<ui::ModelInfo>();
  EXPECT_EQ(info.name, QStringLiteral("slow"));
  EXPECT_EQ(info.path, request.model_path);
  ASSERT_GE(progress.size(), 2);
  EXPECT_DOUBLE_EQ(progress.last().at(0).toDouble(), 1.0);
  // Progress is throttled like chunks: 100 steps of 1.5 ms give a handful of signals.
  EXPECT_LT(progress.size(), 20);
  std::printf("[ stall ] longest GUI-thread stall during load: %lld ms\n",
              static_cast<long long>(probe.longest_ms()));
  EXPECT_LT(probe.longest_ms(), 50);
}

TEST(EngineService, LoadFailureNamesTheFile) {
  EngineServiceClient client(std::make_unique<SlowEngine>());
  QSignalSpy failed(&client, &ui::EngineClient::loadFailed);
  ui::LoadRequest request;
  request.model_path = QStringLiteral("/models/bad.gguf");
  client.loadModel(request);
  ASSERT_TRUE(failed.wait(2000));
  EXPECT_EQ(failed.at(0).at(0).toString(), request.model_path);
  EXPECT_TRUE(failed.at(0).at(1).toString().contains(QStringLiteral("not a GGUF file")));
}

TEST(EngineService, ChunksAreBatchedAndCompleteAndGuiStaysResponsive) {
  auto engine = std::make_unique<SlowEngine>();
  engine->load_steps = 1;
  const int tokens = engine->tokens;
  EngineServiceClient client(std::move(engine));
  QSignalSpy loaded(&client, &ui::EngineClient::modelLoaded);
  client.loadModel(ui::LoadRequest{});
  ASSERT_TRUE(loaded.wait(2000));

  QString text;
  int chunks = 0;
  QObject::connect(&client, &ui::EngineClient::chunk, [&](ui::RequestId id, const QString& piece) {
    EXPECT_EQ(id, 7u);
    text += piece;
    ++chunks;
  });
  QSignalSpy finished(&client, &ui::EngineClient::finished);
  StallProbe probe;
  QElapsedTimer elapsed;
  elapsed.start();
  client.generate(7, ui::GenerationRequest{});
  ASSERT_TRUE(finished.wait(10000));
  const qint64 ms = elapsed.elapsed();

  EXPECT_EQ(text, expected_text(tokens));
  // Every chunk but the final flush waits kBatchIntervalMs after the previous one.
  EXPECT_LE(chunks, ms / EngineService::kBatchIntervalMs + 1);
  EXPECT_GE(chunks, 2);
  EXPECT_EQ(finished.at(0).at(1).value<ui::GenerationStats>().generated_tokens, tokens);
  std::printf("[ stall ] %d tokens in %lld ms as %d chunks; longest GUI-thread stall %lld ms\n",
              tokens, static_cast<long long>(ms), chunks, static_cast<long long>(probe.longest_ms()));
  EXPECT_LT(probe.longest_ms(), 50);
}

TEST(EngineService, CancelStopsBetweenTokensAndKeepsText) {
  auto engine = std::make_unique<SlowEngine>();
  engine->load_steps = 1;
  engine->endless = true;
  EngineServiceClient client(std::move(engine));
  QSignalSpy loaded(&client, &ui::EngineClient::modelLoaded);
  client.loadModel(ui::LoadRequest{});
  ASSERT_TRUE(loaded.wait(2000));
  QSignalSpy chunks(&client, &ui::EngineClient::chunk);
  QSignalSpy finished(&client, &ui::EngineClient::finished);
  client.generate(1, ui::GenerationRequest{});
  ASSERT_TRUE(chunks.wait(2000));
  client.cancel(1);
  ASSERT_TRUE(finished.wait(2000));
  const auto stats = finished.at(0).at(1).value<ui::GenerationStats>();
  EXPECT_EQ(stats.stop_reason, QStringLiteral("cancelled"));
  EXPECT_GT(stats.generated_tokens, 0);
}

TEST(EngineService, CancelBeforeStartStopsAtOnce) {
  auto engine = std::make_unique<SlowEngine>();
  engine->load_steps = 1;
  engine->endless = true;
  EngineServiceClient client(std::move(engine));
  QSignalSpy loaded(&client, &ui::EngineClient::modelLoaded);
  client.loadModel(ui::LoadRequest{});
  ASSERT_TRUE(loaded.wait(2000));
  QSignalSpy finished(&client, &ui::EngineClient::finished);
  // The cancel arrives before the worker thread picks the request up (it is
  // issued first, so the order is certain): not a single token is generated.
  client.cancel(3);
  client.generate(3, ui::GenerationRequest{});
  ASSERT_TRUE(finished.wait(2000));
  EXPECT_EQ(finished.at(0).at(1).value<ui::GenerationStats>().generated_tokens, 0);
}

TEST(EngineService, GenerateWithoutModelFails) {
  EngineServiceClient client(std::make_unique<SlowEngine>());
  QSignalSpy failed(&client, &ui::EngineClient::failed);
  client.generate(5, ui::GenerationRequest{});
  ASSERT_TRUE(failed.wait(2000));
  EXPECT_EQ(failed.at(0).at(0).value<ui::RequestId>(), 5u);
}

}  // namespace
}  // namespace hearth::app
