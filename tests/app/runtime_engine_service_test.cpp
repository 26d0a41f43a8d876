// EngineService over the real engine (stories260K, CPU) driving the runtime's
// Conversation: with a context far smaller than the chat, evict drops the
// oldest whole exchanges (events name the messages, oldest first, contiguous)
// and the chat keeps answering; stop refuses the turn that does not fit with a
// reason; a regenerated reply rewinds to its turn; summarize runs the summary as background
// steps after a reply and reports a Summarized event; a reply that arrives
// while the summary runs pre-empts it after at most one step, and its
// pause_ms covers the step it waited for.
//
// The service is used on the test's thread: generate() runs synchronously and
// background steps are queued on this thread's event loop, which makes the
// scheduling order observable and deterministic (it is the same queue
// discipline as on the engine thread).
#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include <hearth/engine/kv/prefix_disk_cache.h>

#include "engine_service/engine_service.h"

namespace hearth::app {
namespace {

// Forwards to the real engine and records the order of the calls.
class LoggingEngine final : public ChatEngine {
 public:
  explicit LoggingEngine(std::unique_ptr<ChatEngine> inner) : inner_(std::move(inner)) {}
  Result<ui::ModelInfo> load(const ui::LoadRequest& request, const ProgressFn& progress,
                             const CancelledFn& cancelled) override {
    return inner_->load(request, progress, cancelled);
  }
  void unload() override { inner_->unload(); }
  Result<ui::GenerationStats> generate(const ui::GenerationRequest& request, const PieceFn& on_piece,
                                       const PieceFn& on_reasoning, const ContextEventFn& on_event,
                                       const CancelledFn& cancelled) override {
    log.push_back("generate");
    auto r = inner_->generate(request, on_piece, on_reasoning, on_event, cancelled);
    log.push_back("generated");
    return r;
  }
  bool has_background_work() const override { return inner_->has_background_work(); }
  Status background_step(const ContextEventFn& on_event) override {
    log.push_back("step");
    QElapsedTimer t;
    t.start();
    Status st = inner_->background_step(on_event);
    step_ms.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
    return st;
  }

  std::vector<std::string> log;
  std::vector<double> step_ms;  // each step's duration, in order

 private:
  std::unique_ptr<ChatEngine> inner_;
};

QString reference_continuation(const QString& prompt) {
  QFile f(QStringLiteral(HEARTH_TEST_DATA_DIR "/models/stories260K.greedy-text.txt"));
  EXPECT_TRUE(f.open(QIODevice::ReadOnly));
  const QString text = QString::fromUtf8(f.readAll());
  EXPECT_TRUE(text.startsWith(prompt));
  return text.mid(prompt.size()).trimmed();
}

qint64 steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const QStringList kMessages = {
    QStringLiteral("Once upon a time"),
    QStringLiteral("Lily went to the park with her dog."),
    QStringLiteral("Then the sun came out and they played."),
    QStringLiteral("Tom had a big red ball."),
    QStringLiteral("The bird sang a happy song."),
};

class RuntimeService : public ::testing::Test {
 protected:
  void start(int context_length) {
    auto engine = std::make_unique<LoggingEngine>(make_default_chat_engine());
    logging = engine.get();
    service = std::make_unique<EngineService>(std::move(engine));
    QObject::connect(service.get(), &EngineService::contextEvent,
                     [this](ui::RequestId, const ui::ContextEvent& e) { events.push_back(e); });
    QObject::connect(service.get(), &EngineService::chunk,
                     [this](ui::RequestId, const QString& text) { reply += text; });
    QObject::connect(service.get(), &EngineService::finished,
                     [this](ui::RequestId, const ui::GenerationStats& s) { stats.push_back(s); });
    QObject::connect(service.get(), &EngineService::failed, [this](ui::RequestId, const QString& message) {
      failures.push_back(message);
    });
    QSignalSpy loaded(service.get(), &EngineService::modelLoaded);
    ui::LoadRequest load;
    load.model_path = QStringLiteral(HEARTH_TEST_DATA_DIR "/models/stories260K.gguf");
    load.context_length = context_length;
    load.gpu_layers = 0;
    load.threads = 2;
    service->load(load);
    ASSERT_EQ(loaded.size(), 1);
  }

  ui::GenerationRequest request_for(const QString& user) {
    ui::GenerationRequest r;
    r.turns = history;
    r.turns.append({ui::ChatRole::User, user});
    r.sampling.temperature = 0;
    r.sampling.repeat_penalty = 1.0;
    r.sampling.seed = 1;
    r.overflow_policy = policy;
    r.max_new_tokens = 24;
    r.conversation_id = 7;
    return r;
  }

  // One exchange, synchronously; the reply joins the history as sent back next time.
  void exchange(const QString& user) {
    reply.clear();
    const size_t done = stats.size();
    service->generate(++request_id, request_for(user));
    ASSERT_TRUE(failures.empty()) << failures.front().toStdString();
    ASSERT_EQ(stats.size(), done + 1);
    history.append({ui::ChatRole::User, user});
    history.append({ui::ChatRole::Assistant, reply});
  }

  void settle_background() {
    ASSERT_TRUE(QTest::qWaitFor([&] { return !logging->has_background_work(); }, 30000));
  }

  std::unique_ptr<EngineService> service;
  LoggingEngine* logging = nullptr;
  QString policy;
  QList<ui::ChatTurn> history;
  QString reply;
  ui::RequestId request_id = 0;
  std::vector<ui::ContextEvent> events;
  std::vector<ui::GenerationStats> stats;
  QStringList failures;
};

TEST_F(RuntimeService, EvictDropsTheOldestWholeExchangesAndKeepsAnswering) {
  policy = QStringLiteral("evict");
  start(128);
  for (int i = 0; i < 16; ++i) {
    exchange(kMessages[i % kMessages.size()]);
    if (HasFatalFailure()) return;
    EXPECT_GT(stats.back().generated_tokens, 0) << "turn " << i;
    EXPECT_LE(stats.back().context_used, stats.back().context_max);
    EXPECT_EQ(stats.back().context_max, 128);
  }
  // The first reply continues the prompt as the reference greedy text does.
  const QString first = history[1].text;
  ASSERT_FALSE(first.isEmpty());
  EXPECT_TRUE(reference_continuation(kMessages[0]).startsWith(first.trimmed())) << first.toStdString();

  ASSERT_GE(events.size(), 3u);
  int next = 0;  // the oldest message not dropped yet
  for (const auto& e : events) {
    EXPECT_EQ(e.kind, ui::ContextEvent::Kind::Dropped);
    EXPECT_EQ(e.conversation_id, 7);
    // Whole exchanges, oldest first, one after the other: a user message
    // through its reply.
    EXPECT_EQ(e.first_message, next);
    EXPECT_EQ(e.first_message % 2, 0);
    EXPECT_EQ(e.last_message % 2, 1);
    EXPECT_EQ(e.turns, (e.last_message - e.first_message + 1) / 2);
    EXPECT_GT(e.tokens_freed, 0);
    next = e.last_message + 1;
  }
  EXPECT_LT(next, static_cast<int>(history.size()));  // the newest exchange is kept
}

TEST_F(RuntimeService, StopRefusesTheTurnThatDoesNotFitAndSaysWhy) {
  policy = QStringLiteral("stop");
  start(128);
  int answered = 0;
  for (int i = 0; i < 8 && failures.empty(); ++i) {
    reply.clear();
    const size_t done = stats.size();
    service->generate(++request_id, request_for(kMessages[i % kMessages.size()]));
    if (stats.size() == done) break;
    ++answered;
    history.append({ui::ChatRole::User, kMessages[i % kMessages.size()]});
    history.append({ui::ChatRole::Assistant, reply});
  }
  EXPECT_GE(answered, 1);
  ASSERT_EQ(failures.size(), 1);
  EXPECT_TRUE(failures[0].contains(QStringLiteral("context full"))) << failures[0].toStdString();
  EXPECT_TRUE(events.empty());  // nothing was dropped or summarised
}

// Regenerating the last reply rewinds the context to the start of that
// exchange: greedy decoding then gives the same reply, which it would not if
// the rewind left the old reply's K/V (or positions) behind.
TEST_F(RuntimeService, RegenerateRewindsToTheTurnAndRepeatsTheGreedyReply) {
  policy = QStringLiteral("evict");
  start(512);
  for (int i = 0; i < 3; ++i) {
    exchange(kMessages[i]);
    if (HasFatalFailure()) return;
  }
  const QString original = history.back().text;
  const int used = stats.back().context_used;
  ASSERT_FALSE(original.isEmpty());
  for (int again = 0; again < 2; ++again) {
    history.removeLast();  // the reply
    history.removeLast();  // its message, which request_for appends again
    exchange(kMessages[2]);
    if (HasFatalFailure()) return;
    EXPECT_EQ(history.back().text, original) << "regeneration " << again;
    EXPECT_EQ(stats.back().context_used, used);
  }
  EXPECT_TRUE(events.empty());
}

TEST_F(RuntimeService, SummarizeRunsInTheBackgroundAndReportsTheNote) {
  policy = QStringLiteral("summarize");
  start(128);
  int summarized = 0;
  for (int i = 0; i < 12; ++i) {
    exchange(kMessages[i % kMessages.size()]);
    if (HasFatalFailure()) return;
    EXPECT_GT(stats.back().generated_tokens, 0) << "turn " << i;
    settle_background();
  }
  for (const auto& e : events) {
    if (e.kind != ui::ContextEvent::Kind::Summarized) continue;
    ++summarized;
    EXPECT_FALSE(e.summary.isEmpty());
    EXPECT_GT(e.tokens_freed, 0);
    EXPECT_GE(e.turns, 1);
  }
  EXPECT_GE(summarized, 1);
  // The summary ran as background steps, never inside a reply.
  const auto& log = logging->log;
  EXPECT_NE(std::find(log.begin(), log.end(), "step"), log.end());
  bool inside = false;
  for (const auto& entry : log) {
    if (entry == "generate") inside = true;
    if (entry == "generated") inside = false;
    EXPECT_FALSE(inside && entry == "step");
  }
}

TEST_F(RuntimeService, AReplyPreemptsTheSummaryAfterAtMostOneStep) {
  policy = QStringLiteral("summarize");
  start(128);
  // Chat until a reply makes a summary due.
  for (int i = 0; i < 12 && !logging->has_background_work(); ++i) {
    exchange(kMessages[i % kMessages.size()]);
    if (HasFatalFailure()) return;
  }
  ASSERT_TRUE(logging->has_background_work());
  // A reply queued behind the step that is already queued runs right after
  // that one step; the summary resumes only after the reply.
  logging->log.clear();
  logging->step_ms.clear();
  auto a = request_for(kMessages[0]);
  a.sent_at_ns = steady_ns();
  QMetaObject::invokeMethod(service.get(), [&, a] { service->generate(++request_id, a); }, Qt::QueuedConnection);
  QTest::qWait(0);
  ASSERT_TRUE(QTest::qWaitFor([&] { return stats.size() >= 1 && logging->log.size() >= 3; }, 30000));
  ASSERT_GE(logging->log.size(), 3u);
  EXPECT_EQ(logging->log[0], "step");
  EXPECT_EQ(logging->log[1], "generate");
  EXPECT_EQ(logging->log[2], "generated");
  // The reply waited for that one step and reports it.
  ASSERT_FALSE(logging->step_ms.empty());
  EXPECT_GE(stats.back().pause_ms, logging->step_ms[0]);
  std::printf("[ pause ] reply waited %.2f ms (one summary step took %.2f ms)\n", stats.back().pause_ms,
              logging->step_ms[0]);
  // The reply either finished the job first (it needed the room; the
  // summary's own time is in its event) or dropped it, and then a later
  // reply makes it due again; either way the chat ends up summarised.
  for (int i = 1; i < 12 && events.empty(); ++i) {
    settle_background();
    if (events.empty()) exchange(kMessages[i % kMessages.size()]);
    if (HasFatalFailure()) return;
  }
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().kind, ui::ContextEvent::Kind::Summarized);
}

// The system prompt's KV survives an engine restart: the first engine
// computes it and saves it to the prefix cache folder, a new engine restores
// it from there (all but its last token), and greedy decoding gives the same
// reply as with the computed KV. tiny-llama-f32 has a chat template, so this
// also runs the template path of the app's transcript.
TEST(RuntimePrefixCache, TheSystemPromptComesBackFromDiskAfterARestart) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  auto run = [&](QString& text) {
    EngineService service(make_default_chat_engine(dir.path()));
    QSignalSpy loaded(&service, &EngineService::modelLoaded);
    ui::LoadRequest load;
    load.model_path = QStringLiteral(HEARTH_TEST_DATA_DIR "/models/tiny-llama-f32.gguf");
    load.context_length = 256;
    load.kv_cache_type = QStringLiteral("f16");
    load.gpu_layers = 0;
    load.threads = 1;
    service.load(load);
    EXPECT_EQ(loaded.size(), 1);
    QObject::connect(&service, &EngineService::chunk, [&](ui::RequestId, const QString& piece) { text += piece; });
    QSignalSpy finished(&service, &EngineService::finished);
    QSignalSpy failed(&service, &EngineService::failed);
    ui::GenerationRequest r;
    r.turns = {{ui::ChatRole::System, QStringLiteral("You are a helpful assistant who answers briefly and kindly.")},
               {ui::ChatRole::User, QStringLiteral("Hello there")}};
    r.sampling.temperature = 0;
    r.sampling.repeat_penalty = 1.0;
    r.max_new_tokens = 8;
    r.conversation_id = 1;
    service.generate(1, r);
    EXPECT_TRUE(failed.isEmpty()) << (failed.isEmpty() ? "" : failed.at(0).at(1).toString().toStdString());
    return finished.isEmpty() ? ui::GenerationStats{} : finished.at(0).at(1).value<ui::GenerationStats>();
  };
  QString first_text, second_text;
  const auto first = run(first_text);
  EXPECT_EQ(first.prefix_restored_tokens, 0);
  EXPECT_GT(first.generated_tokens, 0);
  EXPECT_EQ(kv::PrefixDiskCache(dir.path().toStdString(), 1ull << 30).entry_count(), 1u);
  const auto second = run(second_text);
  EXPECT_GT(second.prefix_restored_tokens, 10);
  EXPECT_EQ(second_text, first_text);
}

// Stop during a long re-prefill, with the real engine: the engine asks before
// every batch (256 tokens in the app), so a cancel takes effect before the
// next batch, the reply ends as cancelled with nothing generated, and the
// next request answers exactly as a fresh engine does (the KV cache was left
// consistent).
TEST(RuntimeCancel, StopDuringAReprefillEndsItWithinOneBatch) {
  ui::LoadRequest load;
  load.model_path = QStringLiteral(HEARTH_TEST_DATA_DIR "/models/stories260K.gguf");
  load.context_length = 2048;
  load.gpu_layers = 0;
  load.threads = 2;
  auto loaded_engine = [&] {
    auto engine = make_default_chat_engine();
    auto info = engine->load(load, [](double) {}, [] { return false; });
    EXPECT_TRUE(info.ok()) << info.error().message;
    return engine;
  };
  // A conversation of ~2,000 tokens the engine has not seen: a re-prefill.
  ui::GenerationRequest r;
  for (int turn = 0; turn < 3; ++turn) {
    QString text;
    for (int i = 0; i < 55; ++i) text += QStringLiteral("Lily saw a big dog %1. ").arg(turn * 55 + i);
    r.turns.append({ui::ChatRole::User, text});
    r.turns.append({ui::ChatRole::Assistant, QStringLiteral("They played in the park.")});
  }
  r.turns.append({ui::ChatRole::User, QStringLiteral("Once upon a time")});
  r.sampling.temperature = 0;
  r.sampling.repeat_penalty = 1.0;
  r.max_new_tokens = 8;
  r.conversation_id = 5;
  r.overflow_policy = QStringLiteral("stop");

  auto engine = loaded_engine();
  int asked = 0;
  auto cancelled = engine->generate(r, [](std::string_view) {}, nullptr, nullptr, [&] { return ++asked >= 3; });
  ASSERT_TRUE(cancelled.ok()) << cancelled.error().message;
  EXPECT_EQ(cancelled->stop_reason, QStringLiteral("cancelled"));
  EXPECT_EQ(cancelled->generated_tokens, 0);
  // Asked before the pinned start's one batch, before the first history
  // batch, and the third answer stopped it: two batches ran of eight.
  EXPECT_EQ(asked, 3);

  std::string after, fresh;
  auto next = engine->generate(r, [&](std::string_view p) { after += p; }, nullptr, nullptr, [] { return false; });
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_GT(next->context_used, 1700);  // the whole conversation was prefilled
  auto other = loaded_engine();
  auto reference = other->generate(r, [&](std::string_view p) { fresh += p; }, nullptr, nullptr, [] { return false; });
  ASSERT_TRUE(reference.ok()) << reference.error().message;
  EXPECT_EQ(after, fresh);
  EXPECT_EQ(next->generated_tokens, reference->generated_tokens);
}

// Closing the app (or a newer load) during a load: the engine asks between
// pieces of the load and stops; nothing stays loaded.
TEST(RuntimeCancel, ACancelledLoadLoadsNothing) {
  auto engine = make_default_chat_engine();
  ui::LoadRequest load;
  load.model_path = QStringLiteral(HEARTH_TEST_DATA_DIR "/models/tiny-llama-f32.gguf");
  load.context_length = 256;
  load.gpu_layers = 0;
  int asked = 0;
  auto info = engine->load(load, [](double) {}, [&] { return ++asked >= 2; });
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().code, ErrorCode::Cancelled) << info.error().message;
  EXPECT_EQ(asked, 2);
  ui::GenerationRequest r;
  r.turns = {{ui::ChatRole::User, QStringLiteral("Hello")}};
  auto reply = engine->generate(r, [](std::string_view) {}, nullptr, nullptr, [] { return false; });
  ASSERT_FALSE(reply.ok());
}

// A load superseded by a newer one before it ran is skipped and answered
// under its own id, so the model controller can tell it from the newer load.
TEST(RuntimeServiceLoads, ASupersededLoadIsSkippedAndAnsweredUnderItsId) {
  EngineService service(make_default_chat_engine());
  QSignalSpy loaded(&service, &EngineService::modelLoaded);
  QSignalSpy failed(&service, &EngineService::loadFailed);
  ui::LoadRequest load;
  load.model_path = QStringLiteral(HEARTH_TEST_DATA_DIR "/models/stories260K.gguf");
  load.context_length = 256;
  load.gpu_layers = 0;
  load.load_id = 1;
  service.supersede_loads(2);
  service.load(load);
  ASSERT_EQ(failed.size(), 1);
  EXPECT_EQ(failed.at(0).at(2).toLongLong(), 1);
  EXPECT_EQ(loaded.size(), 0);
  load.load_id = 2;
  service.load(load);
  ASSERT_EQ(loaded.size(), 1);
  EXPECT_EQ(loaded.at(0).at(0).value<ui::ModelInfo>().load_id, 2);
}

}  // namespace
}  // namespace hearth::app

