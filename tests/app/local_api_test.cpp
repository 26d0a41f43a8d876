// The local API inside the app: EngineService over the real engine
// (stories260K, CPU) serves the loaded model over real HTTP on loopback with
// the token from its key file (mode 0600), follows the model across unload
// and load, and stops when switched off. While API clients stream, the app's
// own chat reply is the one it gives with the API idle, and the API makes
// no progress while it runs.
//
// The service runs on the test's thread: generate() is synchronous, as on
// the engine thread; the HTTP clients run on their own threads.
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "api_stream_request.h"
#include "engine_service/engine_service.h"

namespace hearth::app {
namespace {

using nlohmann::json;

std::string golden_text() {
  QFile f(QStringLiteral(HEARTH_TEST_DATA_DIR "/models/stories260K.greedy-text.txt"));
  EXPECT_TRUE(f.open(QIODevice::ReadOnly));
  return f.readAll().toStdString();
}

class LocalApi : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir.isValid());
    service = std::make_unique<EngineService>(make_default_chat_engine());
    QObject::connect(service.get(), &EngineService::localApiStatus,
                     [this](const ui::LocalApiStatus& s) { last = s; });
    QObject::connect(service.get(), &EngineService::chunk,
                     [this](ui::RequestId, const QString& text) { reply += text; });
    load();
  }
  void load() {
    QSignalSpy loaded(service.get(), &EngineService::modelLoaded);
    ui::LoadRequest r;
    r.model_path = QStringLiteral(HEARTH_TEST_DATA_DIR "/models/stories260K.gguf");
    r.context_length = 512;
    r.gpu_layers = 0;
    r.threads = 2;
    service->load(r);
    ASSERT_EQ(loaded.size(), 1);
  }
  ui::LocalApiRequest request(bool enabled, int parallel = 2) {
    ui::LocalApiRequest r;
    r.enabled = enabled;
    r.host = QStringLiteral("127.0.0.1");
    r.port = 0;  // any free port; the status says which
    r.parallel = parallel;
    r.context_length = 512;
    r.key_file = dir.filePath(QStringLiteral("api-key"));
    return r;
  }
  int port() const {
    const QString url = last.url;  // http://127.0.0.1:PORT/v1
    return url.section(QLatin1Char(':'), 2).section(QLatin1Char('/'), 0, 0).toInt();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port());
    c.set_read_timeout(120, 0);
    c.set_connection_timeout(30, 0);
    return c;
  }
  httplib::Headers auth() const { return {{"Authorization", "Bearer " + last.token.toStdString()}}; }

  QTemporaryDir dir;
  std::unique_ptr<EngineService> service;
  ui::LocalApiStatus last;
  QString reply;
};

TEST_F(LocalApi, ServesTheLoadedModelWithItsTokenAndFollowsTheModel) {
  service->configure_local_api(request(true));
  ASSERT_TRUE(last.running) << last.error.toStdString();
  ASSERT_GT(port(), 0) << last.url.toStdString();
  EXPECT_TRUE(last.url.startsWith(QStringLiteral("http://127.0.0.1:")));
  EXPECT_TRUE(last.url.endsWith(QStringLiteral("/v1")));
  // The token is the key file's, which only its owner may read.
  QFile key(dir.filePath(QStringLiteral("api-key")));
  ASSERT_TRUE(key.open(QIODevice::ReadOnly));
  EXPECT_EQ(QString::fromUtf8(key.readAll()).trimmed(), last.token);
  struct stat st {};
  ASSERT_EQ(::stat(dir.filePath(QStringLiteral("api-key")).toLocal8Bit().constData(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  auto c = client();
  auto models = c.Get("/v1/models", auth());
  ASSERT_TRUE(models);
  EXPECT_EQ(models->status, 200);
  EXPECT_EQ(json::parse(models->body)["data"][0]["id"], "stories260K");
  auto refused = c.Get("/v1/models");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);

  // Greedy through the app's API equals the reference engine's continuation.
  const std::string golden = golden_text();
  const std::string prompt = "Once upon a time";
  auto r = c.Post("/v1/completions", auth(),
                  json{{"prompt", prompt}, {"max_tokens", 58}, {"temperature", 0}}.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["choices"][0]["text"], golden.substr(prompt.size()));
  // The chat speculates with n-gram drafts (the default), so the API's
  // requests draft too; the reply above is still the reference's.
  auto h = c.Get("/health", auth());
  ASSERT_TRUE(h);
  const json health = json::parse(h->body);
  ASSERT_TRUE(health.contains("speculation")) << h->body;
  EXPECT_EQ(health["speculation"]["requests"], 1);

  // Unloading the model stops it; loading one starts it again with the same token.
  const QString token = last.token;
  service->unload();
  EXPECT_FALSE(last.running);
  load();
  EXPECT_TRUE(last.running) << last.error.toStdString();
  EXPECT_EQ(last.token, token);

  // A new token locks out the old one.
  auto fresh = request(true);
  fresh.new_key = true;
  service->configure_local_api(fresh);
  ASSERT_TRUE(last.running);
  EXPECT_NE(last.token, token);
  auto c2 = client();
  auto old = c2.Get("/v1/models", {{"Authorization", "Bearer " + token.toStdString()}});
  ASSERT_TRUE(old);
  EXPECT_EQ(old->status, 401);

  service->configure_local_api(request(false));
  EXPECT_FALSE(last.running);
  EXPECT_TRUE(last.error.isEmpty());
  auto gone = client().Get("/v1/models", auth());
  EXPECT_FALSE(gone && gone->status == 200);
}

TEST_F(LocalApi, TheAppsOwnChatComesFirst) {
  ui::GenerationRequest chat;
  chat.turns = {{ui::ChatRole::User, QStringLiteral("Once upon a time")}};
  chat.sampling.temperature = 0;
  chat.sampling.repeat_penalty = 1.0;
  chat.max_new_tokens = 24;
  chat.conversation_id = 1;
  QSignalSpy finished(service.get(), &EngineService::finished);
  // The same reply with the API idle: its text, and its speed for the record.
  service->generate(1, chat);
  ASSERT_EQ(finished.size(), 1);
  const QString alone = reply;
  const double alone_tps = finished.at(0).at(1).value<ui::GenerationStats>().tokens_per_second;
  reply.clear();
  chat.conversation_id = 2;

  service->configure_local_api(request(true, 4));
  ASSERT_TRUE(last.running) << last.error.toStdString();
  const int api_port = port();
  const std::string token = last.token.toStdString();
  // Sixteen API clients stream long replies (four decoded together, twelve
  // queued): seconds of work for the API, so it is surely busy when the
  // chat starts below.
  constexpr int kClients = 16;
  constexpr int kTokens = 480;
  std::atomic<int> first_tokens{0};
  std::vector<int> counts(kClients, 0);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      httplib::Client c("127.0.0.1", api_port);
      c.set_read_timeout(300, 0);
      httplib::Request req = hearth::testing::streamed_completion(token, "Tom and Lily", kTokens, i);
      bool counted = false;
      req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
        const std::string chunk(data, n);
        for (size_t pos = 0; (pos = chunk.find("\"text\"", pos)) != std::string::npos; ++pos) ++counts[i];
        if (!counted) {
          counted = true;
          ++first_tokens;
        }
        return true;
      };
      (void)c.send(req);
    });
  }
  ASSERT_TRUE(QTest::qWaitFor([&] { return first_tokens.load() >= 4; }, 120000));
  const qint64 yielded_before = service->local_api_status().yielded_steps;

  // The app's reply while the API is busy: the same text as alone.
  service->generate(2, chat);
  ASSERT_EQ(finished.size(), 2);
  EXPECT_EQ(reply, alone);
  // Still busy after the reply: the API was running all along and, frozen
  // at the gate, made no progress during it.
  ASSERT_GT(service->local_api_status().pending, 0);
  // Speeds are recorded, not asserted (a shared machine makes them noisy).
  const double busy_tps = finished.at(1).at(1).value<ui::GenerationStats>().tokens_per_second;
  RecordProperty("chat_tps_api_idle", std::to_string(alone_tps));
  RecordProperty("chat_tps_api_4_streams", std::to_string(busy_tps));
  // How many API steps waited for the reply (a reply of this tiny model can
  // be shorter than one step; chat_priority_gate_test checks the bound).
  RecordProperty("api_steps_yielded", std::to_string(service->local_api_status().yielded_steps - yielded_before));

  for (auto& t : clients) t.join();
  for (int i = 0; i < kClients; ++i) EXPECT_GE(counts[static_cast<size_t>(i)], kTokens / 2) << "client " << i;
  service->configure_local_api(request(false));
}

}  // namespace
}  // namespace hearth::app
