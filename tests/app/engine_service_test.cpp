// EngineService on its own thread: chunks are batched (<= ~30 signals per
// second), cancellation works between tokens, failures are reported, and the
// GUI thread keeps running while the engine loads and generates: every
// engine call runs off the GUI thread (asserted), and a probe timer prints
// the longest GUI stall as a report (wall-clock times are never asserted).
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <QTimer>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "engine_service/engine_service.h"
#include "engine_service/engine_service_client.h"

namespace hearth::app {
namespace {

using namespace std::chrono_literals;

// Counts engine calls and those of them that ran on the GUI thread.
struct CallThreads {
  std::atomic<int> calls{0};
  std::atomic<int> on_gui_thread{0};
  void note() {
    ++calls;
    if (QThread::currentThread() == QCoreApplication::instance()->thread()) ++on_gui_thread;
  }
};

// A ChatEngine double that takes real time like a model would: each load step
// and each token sleeps on the engine thread.
class SlowEngine final : public ChatEngine {
 public:
  explicit SlowEngine(std::shared_ptr<CallThreads> threads = std::make_shared<CallThreads>())
      : threads_(std::move(threads)) {}
  int load_steps = 100;
  int tokens = 200;
  bool endless = false;  // generate until cancelled
  int reasoning_tokens = 0;  // thinking pieces before the answer
  std::chrono::microseconds step = 1500us;

  Result<ui::ModelInfo> load(const ui::LoadRequest& request, const ProgressFn& progress,
                             const CancelledFn& cancelled) override {
    threads_->note();
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
                                       const PieceFn& on_reasoning, const ContextEventFn&,
                                       const CancelledFn& cancelled) override {
    threads_->note();
    for (int i = 0; i < reasoning_tokens && !cancelled(); ++i) {
      std::this_thread::sleep_for(step);
      on_reasoning("hm ");
    }
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

 private:
  std::shared_ptr<CallThreads> threads_;
};

QString expected_text(int tokens) {
  QString out;
  for (int i = 0; i < tokens; ++i) out += i % 10 == 9 ? QStringLiteral("é ") : QStringLiteral("ab ");
  return out;
}

// Measures the longest gap between ticks of a 2 ms timer on the GUI thread,
// for the printed report only.
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
  auto threads = std::make_shared<CallThreads>();
  auto engine = std::make_unique<SlowEngine>(threads);
  EngineServiceClient client(std::move(engine));
  QSignalSpy progress(&client, &ui::EngineClient::loadProgress);
  QSignalSpy loaded(&client, &ui::EngineClient::modelLoaded);
  StallProbe probe;
  QElapsedTimer elapsed;
  elapsed.start();
  ui::LoadRequest request;
  request.model_path = QStringLiteral("/models/slow.gguf");
  client.loadModel(request);
  ASSERT_TRUE(loaded.wait(10000));
  const qint64 ms = elapsed.elapsed();
  const auto info = loaded.at(0).at(0).value<ui::ModelInfo>();
  EXPECT_EQ(info.name, QStringLiteral("slow"));
  EXPECT_EQ(info.path, request.model_path);
  ASSERT_GE(progress.size(), 2);
  EXPECT_DOUBLE_EQ(progress.last().at(0).toDouble(), 1.0);
  // Progress is throttled like chunks: every signal but the last waits
  // kBatchIntervalMs after the previous one. The service's load ran inside
  // `ms`, so this holds however slow the machine is (no time limit).
  EXPECT_LE(progress.size(), ms / EngineService::kBatchIntervalMs + 1);
  EXPECT_EQ(threads->calls.load(), 1);
  EXPECT_EQ(threads->on_gui_thread.load(), 0);
  std::printf("[ stall ] longest GUI-thread stall during load: %lld ms (report only)\n",
              static_cast<long long>(probe.longest_ms()));
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
  auto threads = std::make_shared<CallThreads>();
  auto engine = std::make_unique<SlowEngine>(threads);
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
  EXPECT_LT(finished.at(0).at(1).value<ui::GenerationStats>().reasoning_ms, 0.0);  // it did not think
  // The load and the generation both ran on the engine thread.
  EXPECT_EQ(threads->calls.load(), 2);
  EXPECT_EQ(threads->on_gui_thread.load(), 0);
  std::printf("[ stall ] %d tokens in %lld ms as %d chunks; longest GUI-thread stall %lld ms (report only)\n",
              tokens, static_cast<long long>(ms), chunks, static_cast<long long>(probe.longest_ms()));
}

// A reasoning model's thinking goes out as its own signal, all of it before
// the answer's first chunk, and the finished reply says how long it thought.
TEST(EngineService, ReasoningPiecesComeApartAndFirst) {
  auto engine = std::make_unique<SlowEngine>();
  engine->load_steps = 1;
  engine->reasoning_tokens = 60;
  engine->tokens = 60;
  EngineServiceClient client(std::move(engine));
  QSignalSpy loaded(&client, &ui::EngineClient::modelLoaded);
  client.loadModel(ui::LoadRequest{});
  ASSERT_TRUE(loaded.wait(2000));
  QString reasoning, text;
  bool answer_started = false;
  bool reasoning_after_answer = false;
  QObject::connect(&client, &ui::EngineClient::reasoningChunk, [&](ui::RequestId, const QString& piece) {
    reasoning += piece;
    if (answer_started) reasoning_after_answer = true;
  });
  QObject::connect(&client, &ui::EngineClient::chunk, [&](ui::RequestId, const QString& piece) {
    text += piece;
    answer_started = true;
  });
  QSignalSpy finished(&client, &ui::EngineClient::finished);
  client.generate(3, ui::GenerationRequest{});
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_EQ(reasoning, QString(QStringLiteral("hm ")).repeated(60));
  EXPECT_EQ(text, expected_text(60));
  EXPECT_FALSE(reasoning_after_answer);
  EXPECT_GE(finished.at(0).at(1).value<ui::GenerationStats>().reasoning_ms, 0.0);
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
