// End to end: the real window (offscreen) with the real engine on the bundled
// demo model and the real SQLite storage in a temporary data directory.
// Creates a conversation, sends "Once upon a time", checks the streamed reply
// against the reference greedy text in the UI and in the database, edits the
// message into a branch, switches branches, searches a word of the reply and
// restarts the app to find everything still there. Every store and engine
// call is checked to run off the GUI thread (deterministic); a probe timer
// prints the GUI thread's longest stall during the model load and the
// generation as a report only: wall-clock times are not asserted.
#include <hearth/storage/conversations.h>
#include <hearth/storage/database.h>
#include <hearth/storage/messages.h>
#include <hearth/storage/sources.h>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "controllers/chat_controller.h"
#include "controllers/documents_controller.h"
#include "controllers/model_controller.h"
#include "controllers/settings_controller.h"
#include "engine_service/gpu_probe.h"
#include "controllers/local_api_controller.h"
#include "gui/app_context.h"
#include "gui/store_factory.h"
#include "thread_recording.h"

#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/tokenizer/tokenizer.h>

namespace hearth::app {
namespace {

const QString kPrompt = QStringLiteral("Once upon a time");

QString reference_continuation() {
  QFile f(QStringLiteral(HEARTH_TEST_DATA_DIR "/models/stories260K.greedy-text.txt"));
  EXPECT_TRUE(f.open(QIODevice::ReadOnly));
  const QString text = QString::fromUtf8(f.readAll());
  EXPECT_TRUE(text.startsWith(kPrompt));
  return text.mid(kPrompt.size()).trimmed();
}

class StallProbe {
 public:
  StallProbe() {
    timer_.setInterval(2);
    QObject::connect(&timer_, &QTimer::timeout, [this] {
      const qint64 gap = since_.restart();
      if (gap >= 50) stalls_.push_back({total_.elapsed() - gap, gap});
      longest_ms_ = std::max(longest_ms_, gap);
    });
  }
  void start() {
    since_.start();
    total_.start();
    longest_ms_ = 0;
    stalls_.clear();
    timer_.start();
  }
  // Stops and prints every stall of 50 ms or more (start time and length):
  // a report for people reading the log, never an assertion.
  qint64 stop(const char* phase) {
    timer_.stop();
    for (const auto& [at, gap] : stalls_) {
      std::printf("[ stall ] %s: %lld ms at +%lld ms\n", phase, static_cast<long long>(gap),
                  static_cast<long long>(at));
    }
    return longest_ms_;
  }

 private:
  QTimer timer_;
  QElapsedTimer since_;
  QElapsedTimer total_;
  qint64 longest_ms_ = 0;
  std::vector<std::pair<qint64, qint64>> stalls_;
};

// True when some text item in the window shows `needle`. Walks the visual
// item tree: view delegates are not QObject children of the window.
bool item_shows(QQuickItem* item, const QString& needle) {
  // Plain text items (labels, button texts).
  if (item->inherits("QQuickText") && item->isVisible() &&
      item->property("text").toString().simplified().contains(needle.simplified())) {
    return true;
  }
  if (item->inherits("QQuickTextEdit") && item->isVisible()) {
    // The text as displayed (rich text items hold HTML in `text`).
    QString shown;
    const int length = item->property("length").toInt();
    QMetaObject::invokeMethod(item, "getText", Q_RETURN_ARG(QString, shown), Q_ARG(int, 0), Q_ARG(int, length));
    if (shown.simplified().contains(needle.simplified())) return true;
  }
  for (QQuickItem* child : item->childItems()) {
    if (item_shows(child, needle)) return true;
  }
  return false;
}

bool window_shows(QQmlApplicationEngine& qml, const QString& needle) {
  for (QObject* root : qml.rootObjects()) {
    auto* window = qobject_cast<QQuickWindow*>(root);
    if (window && item_shows(window->contentItem(), needle)) return true;
  }
  return false;
}

// The real app on the real store and engine, both wrapped to tally the
// thread each call runs on.
struct RunningApp {
  explicit RunningApp(const QString& data_dir)
      : store_calls(std::make_shared<ThreadTally>()), engine_calls(std::make_shared<ThreadTally>()) {
    AppOptions options;
    options.data_dir = data_dir;
    options.demo_model_path = QStringLiteral(HEARTH_TEST_DATA_DIR "/models/stories260K.gguf");
    OpenedStore opened = open_conversation_store(data_dir);
    EXPECT_TRUE(opened.persistent) << opened.problem.toStdString();
    auto store = std::make_unique<ThreadRecordingStore>(std::move(opened.store), store_calls);
    auto engine = std::make_unique<ThreadRecordingEngine>(
        make_default_chat_engine(QDir(data_dir).filePath(QStringLiteral("prefix-cache"))), engine_calls);
    context = std::make_unique<AppContext>(options, std::move(engine), std::move(store));
    qml = std::make_unique<QQmlApplicationEngine>();
  }
  ~RunningApp() {
    qml.reset();  // the window goes before the controllers it binds to
    context.reset();
  }
  std::shared_ptr<ThreadTally> store_calls;
  std::shared_ptr<ThreadTally> engine_calls;
  std::unique_ptr<AppContext> context;
  std::unique_ptr<QQmlApplicationEngine> qml;
};

qint64 row_id(ui::ChatController* chat, int row) {
  return chat->messages()->data(chat->messages()->index(row), ui::MessageListModel::IdRole).toLongLong();
}
QString row_text(ui::ChatController* chat, int row) {
  return chat->messages()->data(chat->messages()->index(row), ui::MessageListModel::TextRole).toString();
}

TEST(EndToEnd, ChatBranchSearchAndRestartWithRealEngineAndStorage) {
  // The engine must be able to read the demo model's vocabulary.
  {
    auto file = gguf::GgufFile::open(HEARTH_TEST_DATA_DIR "/models/stories260K.gguf");
    ASSERT_TRUE(file.ok()) << file.error().message;
    auto tok = tokenizer::Tokenizer::from_gguf(*file);
    ASSERT_TRUE(tok.ok()) << "the engine's tokenizer cannot read the demo model: " << tok.error().message;
  }
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString expected = reference_continuation();
  StallProbe probe;
  QString reply;
  qint64 conversation = -1;

  {
    RunningApp app(dir.path());
    auto* chat = app.context->chat();
    auto* model = app.context->model();
    auto* settings = app.context->settings();
    QSignalSpy gpu_probed(app.context.get(), &AppContext::gpuProbed);
    ASSERT_TRUE(app.context->show(*app.qml));
    // Start-up's GPU probe runs on its own thread; let it finish so the stall
    // check below measures the load and the chat, not two cores shared three ways.
    ASSERT_TRUE(gpu_probed.count() > 0 || gpu_probed.wait(30000));
    // Greedy decoding without penalties, as the reference text was made.
    settings->setTemperature(0);
    settings->setRepeatPenalty(1.0);

    probe.start();
    model->loadDemo();
    ASSERT_TRUE(QTest::qWaitFor([&] { return model->ready() || !model->errorMessage().isEmpty(); }, 30000));
    ASSERT_TRUE(model->ready()) << model->errorMessage().toStdString();
    const qint64 load_stall = probe.stop("load");
    EXPECT_FALSE(model->backend().isEmpty());

    QSignalSpy finished(chat, &ui::ChatController::replyFinished);
    probe.start();
    chat->send(kPrompt);
    ASSERT_TRUE(finished.wait(60000));
    const qint64 generation_stall = probe.stop("generation");
    std::printf("[ stall ] longest GUI-thread stall: load %lld ms, generation %lld ms; "
                "reply %.1f tok/s, TTFT %.1f ms\n",
                static_cast<long long>(load_stall), static_cast<long long>(generation_stall),
                chat->lastTokensPerSecond(), chat->lastTtftMs());
    // What the stall report stands for, asserted deterministically: the
    // model load and the generation made store and engine calls, and none
    // of them ran on the GUI thread.
    EXPECT_GT(app.store_calls->calls.load(), 0);
    EXPECT_GT(app.engine_calls->calls.load(), 0);
    EXPECT_EQ(app.store_calls->on_gui_thread.load(), 0);
    EXPECT_EQ(app.engine_calls->on_gui_thread.load(), 0);

    ASSERT_EQ(chat->messages()->rowCount(), 2);
    reply = row_text(chat, 1);
    EXPECT_TRUE(reply.startsWith(expected)) << "reply: " << reply.left(200).toStdString()
                                            << "\nexpected start: " << expected.toStdString();
    // The window shows it (the message's Markdown text item).
    ASSERT_TRUE(QTest::qWaitFor([&] { return window_shows(*app.qml, expected.left(40)); }, 2000));
    EXPECT_GT(chat->contextUsed(), 0);
    conversation = chat->currentConversationId();

    // Edit the message: a second branch with its own reply.
    const qint64 original = row_id(chat, 0);
    finished.clear();
    chat->editMessage(original, QStringLiteral("Once upon a time there was a cat"));
    ASSERT_TRUE(finished.wait(60000));
    EXPECT_EQ(row_text(chat, 0), QStringLiteral("Once upon a time there was a cat"));
    EXPECT_EQ(chat->messages()->data(chat->messages()->index(0), ui::MessageListModel::BranchCountRole).toInt(), 2);
    chat->switchBranch(row_id(chat, 0), -1);
    EXPECT_EQ(row_text(chat, 0), kPrompt);
    EXPECT_EQ(row_text(chat, 1), reply);

    // Search for a word of the reply.
    chat->setSearchQuery(QStringLiteral("Lily"));
    ASSERT_TRUE(QTest::qWaitFor([&] { return chat->searchResults()->rowCount() > 0; }, 5000));
    EXPECT_TRUE(chat->searchResults()
                    ->data(chat->searchResults()->index(0), ui::SearchResultsModel::SnippetRole)
                    .toString()
                    .contains(QStringLiteral("<b>Lily</b>")));
    app.qml.reset();
    app.context.reset();  // the app shuts down: storage drained, threads joined
    // Editing, branching, searching and shutting down stayed off the GUI thread too.
    EXPECT_EQ(app.store_calls->on_gui_thread.load(), 0);
    EXPECT_EQ(app.engine_calls->on_gui_thread.load(), 0);
  }

  // The database holds the conversation and the reply on the active branch.
  {
    storage::OpenOptions read_only;
    read_only.access = storage::Access::ReadOnly;
    auto db = storage::Database::open((dir.path() + QStringLiteral("/hearth.sqlite3")).toStdString(),
                                      read_only);
    ASSERT_TRUE(db.ok()) << db.error().message;
    auto path = storage::Messages(*db).active_path(storage::ConversationId(conversation));
    ASSERT_TRUE(path.ok()) << path.error().message;
    ASSERT_EQ(path->size(), 2u);
    EXPECT_EQ((*path)[0].content, kPrompt.toStdString());
    EXPECT_EQ((*path)[1].content, reply.toStdString());
    EXPECT_EQ((*path)[1].state, storage::MessageState::Complete);
    EXPECT_EQ(storage::Messages(*db).all(storage::ConversationId(conversation))->size(), 4u);
  }

  // Restart: the conversation, its branches and the model come back.
  {
    RunningApp app(dir.path());
    auto* chat = app.context->chat();
    ASSERT_TRUE(app.context->show(*app.qml));
    ASSERT_TRUE(QTest::qWaitFor([&] { return chat->conversations()->rowCount() == 1; }, 5000));
    chat->openConversation(conversation);
    ASSERT_TRUE(QTest::qWaitFor([&] { return chat->messages()->rowCount() == 2; }, 5000));
    EXPECT_EQ(row_text(chat, 0), kPrompt);
    EXPECT_EQ(row_text(chat, 1), reply);
    EXPECT_EQ(chat->messages()->data(chat->messages()->index(0), ui::MessageListModel::BranchCountRole).toInt(), 2);
    // The last model is reloaded at start (no crash marker was left).
    ASSERT_TRUE(QTest::qWaitFor([&] { return app.context->model()->ready(); }, 30000));
  }
}

// Documents end to end: a folder added in the Documents page indexes on the
// storage thread, is attached to a conversation, and the next question's prompt
// (as the real engine received it) holds the passage that answers it; the
// reply shows the numbered source in the window, and the database keeps it with
// the question.
TEST(EndToEnd, AnAttachedLibraryPutsItsPassageInThePromptAndTheReplyShowsItsSource) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString docs = dir.filePath(QStringLiteral("docs"));
  QDir().mkpath(docs);
  auto write = [&](const QString& name, const QByteArray& text) {
    QFile f(docs + QLatin1Char('/') + name);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    f.write(text);
  };
  write(QStringLiteral("garden.md"), "# Garden\n\nThe roses need water every morning.\n");
  write(QStringLiteral("kitchen.md"), "# Kitchen\n\nThe kettle lives on the left shelf.\n");
  write(QStringLiteral("boat.md"), "# Boat\n\nThe boat called Lily sails on Sundays when the lake is calm.\n");
  qint64 conversation = -1;
  {
    RunningApp app(dir.path());
    auto* chat = app.context->chat();
    auto* documents = app.context->documents();
    ASSERT_NE(documents, nullptr);
    ASSERT_TRUE(app.context->show(*app.qml));
    app.context->settings()->setTemperature(0);
    app.context->model()->loadDemo();
    ASSERT_TRUE(QTest::qWaitFor([&] { return app.context->model()->ready(); }, 30000));

    QSignalSpy indexed(documents, &ui::DocumentsController::indexed);
    documents->createLibrary(QStringLiteral("Notes"), QUrl::fromLocalFile(docs));
    ASSERT_TRUE(indexed.wait(30000));
    ASSERT_TRUE(QTest::qWaitFor([&] { return documents->libraries().size() == 1; }, 5000));
    const qint64 library = documents->libraries()[0].toMap().value(QStringLiteral("id")).toLongLong();

    QSignalSpy finished(chat, &ui::ChatController::replyFinished);
    chat->send(kPrompt);
    ASSERT_TRUE(finished.wait(60000));
    documents->attach(library);
    ASSERT_TRUE(QTest::qWaitFor([&] { return documents->attached().contains(library); }, 5000));
    chat->send(QStringLiteral("When does the boat sail?"));
    ASSERT_TRUE(finished.wait(60000));
    conversation = chat->currentConversationId();

    QString prompt;
    {
      std::lock_guard lock(app.engine_calls->last_turn_mutex);
      prompt = app.engine_calls->last_turn;
    }
    EXPECT_TRUE(prompt.contains(QStringLiteral("The boat called Lily sails on Sundays when the lake is calm.")))
        << prompt.toStdString();
    EXPECT_TRUE(prompt.contains(QStringLiteral("[1] boat.md, line 3"))) << prompt.toStdString();
    EXPECT_TRUE(prompt.endsWith(QStringLiteral("Question: When does the boat sail?")));
    // The reply shows its numbered source.
    ASSERT_TRUE(QTest::qWaitFor([&] { return window_shows(*app.qml, QStringLiteral("[1] boat.md, line 3")); }, 5000));
    EXPECT_GT(chat->sourceTokens(), 0);
    EXPECT_EQ(app.store_calls->on_gui_thread.load(), 0);
    app.qml.reset();
    app.context.reset();
  }
  // The database keeps the source with the question, as the model saw it.
  storage::OpenOptions read_only;
  read_only.access = storage::Access::ReadOnly;
  auto db = storage::Database::open((dir.path() + QStringLiteral("/hearth.sqlite3")).toStdString(), read_only);
  ASSERT_TRUE(db.ok()) << db.error().message;
  auto path = storage::Messages(*db).active_path(storage::ConversationId(conversation));
  ASSERT_TRUE(path.ok());
  ASSERT_EQ(path->size(), 4u);
  auto sources = storage::Sources(*db).of((*path)[2].id);
  ASSERT_TRUE(sources.ok());
  ASSERT_FALSE(sources->empty());
  EXPECT_TRUE((*sources)[0].document_path.ends_with("boat.md"));
  EXPECT_EQ((*sources)[0].line_first, 3);
}

// The picker's free VRAM comes from a probe on its own thread: show()
// returns without waiting for it, and the window's gpuFreeBytes then holds
// what the probe reports, compared here with a direct probe of the same
// settings (0 where no hardware GPU is usable, as on CI's software device).
TEST(EndToEnd, GpuProbeFillsThePickersFreeVramAfterTheWindowShows) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  RunningApp app(dir.path());
  QSignalSpy probed(app.context.get(), &AppContext::gpuProbed);
  ASSERT_TRUE(app.context->show(*app.qml));
  ASSERT_TRUE(probed.count() > 0 || probed.wait(30000));
  const double reported = probed.first().first().toDouble();
  QObject* window = app.qml->rootObjects().first();
  EXPECT_EQ(window->property("gpuFreeBytes").toDouble(), reported);
  const auto direct = probe_gpu_memory(app.context->settings()->settings().load);
  if (direct) {
    EXPECT_GT(reported, 0.0);
  } else {
    EXPECT_EQ(reported, 0.0);
  }
}


// Settings -> Local API in the running app: off at first; turned on, it
// serves the loaded model over real HTTP with the token the page shows (kept
// in a 0600 key file, never in settings.ini); the status line shows its
// activity once it has served; turned off, it stops.
TEST(EndToEnd, LocalApiTurnedOnInSettingsServesTheLoadedModel) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  RunningApp app(dir.path());
  auto* model = app.context->model();
  auto* api = app.context->localApi();
  ASSERT_NE(api, nullptr);
  EXPECT_FALSE(api->enabled());
  ASSERT_TRUE(app.context->show(*app.qml));
  model->loadDemo();
  ASSERT_TRUE(QTest::qWaitFor([&] { return model->ready() || !model->errorMessage().isEmpty(); }, 30000));
  ASSERT_TRUE(model->ready()) << model->errorMessage().toStdString();
  EXPECT_FALSE(api->running());

  // A port nobody uses: bind one, let it go, hand it to the settings.
  int port = 0;
  {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
    port = ntohs(a.sin_port);
    close(fd);
  }
  api->setPort(port);
  api->setEnabled(true);
  ASSERT_TRUE(QTest::qWaitFor([&] { return api->running() || !api->error().isEmpty(); }, 30000));
  ASSERT_TRUE(api->running()) << api->error().toStdString();
  EXPECT_EQ(api->url(), QStringLiteral("http://127.0.0.1:%1/v1").arg(port));
  ASSERT_FALSE(api->token().isEmpty());

  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60, 0);
  const httplib::Headers auth = {{"Authorization", "Bearer " + api->token().toStdString()}};
  auto models = c.Get("/v1/models", auth);
  ASSERT_TRUE(models);
  EXPECT_EQ(models->status, 200);
  EXPECT_NE(models->body.find("stories260K"), std::string::npos);
  auto reply = c.Post("/v1/chat/completions", auth,
                      R"({"messages":[{"role":"user","content":"Hi"}],"max_tokens":8,"temperature":0})",
                      "application/json");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 200) << reply->body;
  auto anonymous = c.Get("/v1/models");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);

  // The page and the status line show it.
  EXPECT_TRUE(QTest::qWaitFor([&] { return api->served() >= 1; }, 30000));
  auto* shown = app.qml->rootObjects().first()->findChild<QQuickItem*>(QStringLiteral("localApiStatus"));
  ASSERT_NE(shown, nullptr);
  EXPECT_TRUE(shown->isVisible());
  EXPECT_TRUE(shown->property("text").toString().startsWith(QStringLiteral("API: "))) << api->statusLine().toStdString();

  // The token is in its own file, readable by its owner only; not in settings.ini.
  QFile key(QDir(dir.path()).filePath(QStringLiteral("api-key")));
  ASSERT_TRUE(key.open(QIODevice::ReadOnly));
  EXPECT_EQ(QString::fromUtf8(key.readAll()).trimmed(), api->token());
  EXPECT_EQ(key.permissions() & (QFile::ReadGroup | QFile::ReadOther | QFile::WriteGroup | QFile::WriteOther),
            QFile::Permissions());
  QFile ini(QDir(dir.path()).filePath(QStringLiteral("settings.ini")));
  ASSERT_TRUE(ini.open(QIODevice::ReadOnly));
  const QByteArray stored = ini.readAll();
  EXPECT_FALSE(stored.contains(api->token().toUtf8()));
  EXPECT_TRUE(stored.contains("enabled=1")) << stored.toStdString();

  api->setEnabled(false);
  ASSERT_TRUE(QTest::qWaitFor([&] { return !api->running(); }, 30000));
  auto after = httplib::Client("127.0.0.1", port).Get("/v1/models", auth);
  EXPECT_FALSE(after && after->status == 200);
}

}  // namespace
}  // namespace hearth::app
