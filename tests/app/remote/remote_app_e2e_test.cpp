// The desktop app on a remote endpoint, end to end: the real window
// (offscreen), engine thread and SQLite store in a temporary data folder,
// talking to a real `hearth-cli serve` on 127.0.0.1. An endpoint is added
// through the Backends controller (its key to the key store), its models are
// listed, the remote model is chosen and a message sent: the streamed reply
// agrees token for token with what the local engine in the same app says to
// the same message at temperature 0. After a restart the conversation still names its endpoint
// and model, and opening it switches back to them. Neither the data folder
// nor the settings file ever holds the key. A stream the server cuts keeps
// the partial reply, marked interrupted, in the window and the database.
#include <hearth/storage/conversations.h>
#include <hearth/storage/database.h>
#include <hearth/storage/messages.h>

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>

#include "controllers/backends_controller.h"
#include "controllers/chat_controller.h"
#include "controllers/model_controller.h"
#include "controllers/settings_controller.h"
#include "engine/remote_model_path.h"
#include "fault_server.h"
#include "gui/app_context.h"
#include "serve_process.h"

namespace hearth::testing {
namespace {

using app::AppContext;
using app::AppOptions;

const QString kPrompt = QStringLiteral("Once upon a time");

struct App {
  explicit App(const QString& data_dir) {
    AppOptions options;
    options.data_dir = data_dir;
    options.demo_model_path = QStringLiteral(HEARTH_TEST_DATA_DIR "/models/stories260K.gguf");
    // Entries of this test only, in the test's own keyring (with_secret_service.sh).
    options.key_service = QStringLiteral("Hearth remote app test");
    context = std::make_unique<AppContext>(options);
    qml = std::make_unique<QQmlApplicationEngine>();
  }
  ~App() {
    qml.reset();  // the window goes before the controllers it binds to
    context.reset();
  }
  std::unique_ptr<AppContext> context;
  std::unique_ptr<QQmlApplicationEngine> qml;
};

QString row_text(ui::ChatController* chat, int row) {
  return chat->messages()->data(chat->messages()->index(row), ui::MessageListModel::TextRole).toString();
}

bool load(ui::ModelController* model, const QString& path) {
  model->load(path);
  return QTest::qWaitFor([&] { return !model->loading() && (model->ready() || !model->errorMessage().isEmpty()); },
                         60000);
}

QString send(ui::ChatController* chat, const QString& text) {
  QSignalSpy finished(chat, &ui::ChatController::replyFinished);
  QSignalSpy failed(chat, &ui::ChatController::lastErrorChanged);
  chat->send(text);
  // A failed reply sets the error instead of finishing.
  EXPECT_TRUE(QTest::qWaitFor([&] { return finished.count() > 0 || failed.count() > 0; }, 120000));
  EXPECT_EQ(finished.count(), 1) << chat->lastError().toStdString();
  return chat->messages()->rowCount() >= 2 ? row_text(chat, chat->messages()->rowCount() - 1) : QString();
}

// Every file under `dir` whose bytes contain `needle`.
QStringList files_holding(const QString& dir, const QByteArray& needle) {
  QStringList out;
  QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    const QString path = it.next();
    QFile f(path);
    if (f.open(QIODevice::ReadOnly) && f.readAll().contains(needle)) out << path;
  }
  return out;
}

// The item named `name` anywhere in the window's visual tree (the pages'
// Loader and Repeater items are not QObject children of the window).
QQuickItem* find_item(QQuickItem* item, const QString& name) {
  if (item->objectName() == name) return item;
  for (QQuickItem* child : item->childItems()) {
    if (QQuickItem* found = find_item(child, name)) return found;
  }
  return nullptr;
}
QQuickItem* find_item(QQmlApplicationEngine& qml, const QString& name) {
  auto* window = qml.rootObjects().isEmpty() ? nullptr : qobject_cast<QQuickWindow*>(qml.rootObjects().first());
  return window ? find_item(window->contentItem(), name) : nullptr;
}

storage::Database open_read_only(const QString& dir) {
  storage::OpenOptions read_only;
  read_only.access = storage::Access::ReadOnly;
  auto db = storage::Database::open((dir + QStringLiteral("/hearth.sqlite3")).toStdString(), read_only);
  EXPECT_TRUE(db.ok()) << db.error().message;
  return std::move(db).value();
}

TEST(RemoteAppEndToEnd, RemoteModelRepliesAsTheLocalEngineAndTheConversationRemembersIt) {
  ServeProcess server;
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  const QByteArray key = QByteArray::fromStdString(server.key());
  ASSERT_FALSE(key.isEmpty());
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  QString local_reply, remote_reply, remote_path;
  qint64 conversation = -1;
  {
    App app(dir.path());
    auto* chat = app.context->chat();
    auto* model = app.context->model();
    auto* settings = app.context->settings();
    auto* backends = app.context->backends();
    ASSERT_NE(backends, nullptr);
    ASSERT_TRUE(app.context->show(*app.qml));
    // Greedy, without penalties, and the server's context (serve --ctx 512).
    settings->setTemperature(0);
    settings->setRepeatPenalty(1.0);
    settings->setContextLength(512);

    // The reference: the same message to this computer's engine.
    ASSERT_TRUE(load(model, QStringLiteral(HEARTH_TEST_DATA_DIR "/models/stories260K.gguf")))
        << model->errorMessage().toStdString();
    ASSERT_TRUE(model->ready()) << model->errorMessage().toStdString();
    local_reply = send(chat, kPrompt);
    ASSERT_FALSE(local_reply.isEmpty());

    // A wrong URL scheme is refused with the policy's reason.
    EXPECT_TRUE(backends->addEndpoint(QStringLiteral("Far away"), QStringLiteral("http://203.0.113.9/v1"),
                                      QString(), false).isEmpty());
    EXPECT_FALSE(backends->error().isEmpty());

    const QString id = backends->addEndpoint(QStringLiteral("GPU box"),
                                             QString::fromStdString(server.base_url()) + QStringLiteral("/v1"),
                                             QString::fromLatin1(key), false);
    ASSERT_FALSE(id.isEmpty()) << backends->error().toStdString();
    ASSERT_EQ(backends->endpoints().size(), 1);
    EXPECT_TRUE(backends->endpoints()[0].toMap().value(QStringLiteral("hasKey")).toBool());
    backends->testConnection(id);
    ASSERT_TRUE(QTest::qWaitFor([&] { return !backends->testing(); }, 60000));
    EXPECT_TRUE(backends->testError().isEmpty()) << backends->testError().toStdString();
    EXPECT_EQ(backends->testModels(), QStringList{QStringLiteral("stories260K")});
    ASSERT_TRUE(QTest::qWaitFor([&] { return backends->remoteModels().size() == 1; }, 5000));
    const QVariantMap offered = backends->remoteModels()[0].toMap();
    EXPECT_EQ(offered.value(QStringLiteral("label")).toString(), QStringLiteral("GPU box · stories260K"));
    remote_path = offered.value(QStringLiteral("path")).toString();
    // The picker offers it beside the local files; the Backends page lists the endpoint.
    EXPECT_NE(find_item(*app.qml, QStringLiteral("remoteModel_GPU box · stories260K")), nullptr);
    EXPECT_NE(find_item(*app.qml, QStringLiteral("testConnection_GPU box")), nullptr);
    EXPECT_EQ(remote_path, ui::remote_model_path(id, QStringLiteral("stories260K")));

    ASSERT_TRUE(load(model, remote_path)) << model->errorMessage().toStdString();
    ASSERT_TRUE(model->ready()) << model->errorMessage().toStdString();
    EXPECT_EQ(model->modelName(), QStringLiteral("GPU box · stories260K"));
    EXPECT_TRUE(model->backend().startsWith(QStringLiteral("Remote: "))) << model->backend().toStdString();

    chat->newConversation();
    remote_reply = send(chat, kPrompt);
    // Greedy on both sides, token for token: the remote reply holds the local
    // one whole. The local chat ends its reply earlier than the server's
    // stream does (the server goes on to max_tokens), so the comparison is
    // on the local reply's length.
    EXPECT_TRUE(remote_reply.startsWith(local_reply))
        << "remote: " << remote_reply.toStdString() << "\nlocal: " << local_reply.toStdString();
    // And both begin as the reference greedy text of the model (a fixture).
    QFile reference(QStringLiteral(HEARTH_TEST_DATA_DIR "/models/stories260K.greedy-text.txt"));
    ASSERT_TRUE(reference.open(QIODevice::ReadOnly));
    const QString expected = QString::fromUtf8(reference.readAll()).mid(kPrompt.size()).trimmed();
    EXPECT_TRUE(local_reply.startsWith(expected)) << local_reply.toStdString();
    EXPECT_GT(chat->lastTokensPerSecond(), 0.0);  // the remote engine's figures reach the status line
    conversation = chat->currentConversationId();
    ASSERT_GE(conversation, 0);
  }

  // The database: the reply, complete, and the conversation's endpoint and model.
  {
    storage::Database db = open_read_only(dir.path());
    auto c = storage::Conversations(db).get(storage::ConversationId(conversation));
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(QString::fromStdString(c->model_file), remote_path);
    auto path = storage::Messages(db).active_path(storage::ConversationId(conversation));
    ASSERT_TRUE(path.ok()) << path.error().message;
    ASSERT_EQ(path->size(), 2u);
    EXPECT_EQ((*path)[1].content, remote_reply.toStdString());
    EXPECT_EQ((*path)[1].state, storage::MessageState::Complete);
  }
  // The key is in the key store only: no file of the data folder (database,
  // settings, caches) holds it, while the settings name the endpoint.
  EXPECT_EQ(files_holding(dir.path(), key), QStringList());
  EXPECT_FALSE(files_holding(dir.path(), QByteArray::fromStdString(server.base_url())).isEmpty());

  // Restart on another model: opening the conversation switches back to its endpoint and model.
  {
    App app(dir.path());
    auto* chat = app.context->chat();
    auto* model = app.context->model();
    ASSERT_TRUE(app.context->show(*app.qml));
    ASSERT_TRUE(QTest::qWaitFor([&] { return !model->loading(); }, 60000));
    ASSERT_TRUE(load(model, QStringLiteral(HEARTH_TEST_DATA_DIR "/models/stories260K.gguf")));
    ASSERT_TRUE(model->ready());
    ASSERT_TRUE(QTest::qWaitFor([&] { return chat->conversations()->rowCount() == 2; }, 5000));
    chat->openConversation(conversation);
    ASSERT_TRUE(QTest::qWaitFor([&] { return chat->messages()->rowCount() == 2; }, 5000));
    EXPECT_EQ(row_text(chat, 1), remote_reply);
    ASSERT_TRUE(QTest::qWaitFor([&] { return model->ready() && model->modelPath() == remote_path; }, 60000))
        << model->modelPath().toStdString() << " " << model->errorMessage().toStdString();
    // And it continues there: the second reply comes from the endpoint too.
    const QString again = send(chat, QStringLiteral("Tom had a red ball."));
    EXPECT_FALSE(again.isEmpty());
  }
}

TEST(RemoteAppEndToEnd, StreamCutMidReplyKeepsThePartialReplyMarkedInterrupted) {
  FaultServer server;
  // Listing the models for the load, then a reply whose connection closes
  // before the stream's end.
  server.script({{http_response(200, R"({"object":"list","data":[{"id":"tiny-model"}]})")},
                 {sse_response(content_event("Once upon") + content_event(" a tim"))}});
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  qint64 conversation = -1;
  {
    App app(dir.path());
    auto* chat = app.context->chat();
    auto* model = app.context->model();
    auto* backends = app.context->backends();
    ASSERT_TRUE(app.context->show(*app.qml));
    const QString id = backends->addEndpoint(QStringLiteral("Flaky"), QString::fromStdString(server.base_url()),
                                             QString(), false);
    ASSERT_FALSE(id.isEmpty()) << backends->error().toStdString();
    ASSERT_TRUE(load(model, ui::remote_model_path(id, QStringLiteral("tiny-model"))));
    ASSERT_TRUE(model->ready()) << model->errorMessage().toStdString();
    const QString reply = send(chat, kPrompt);
    EXPECT_EQ(reply, QStringLiteral("Once upon a tim"));
    EXPECT_TRUE(chat->lastError().contains(QStringLiteral("broke off"))) << chat->lastError().toStdString();
    conversation = chat->currentConversationId();
  }
  storage::Database db = open_read_only(dir.path());
  auto path = storage::Messages(db).active_path(storage::ConversationId(conversation));
  ASSERT_TRUE(path.ok()) << path.error().message;
  ASSERT_EQ(path->size(), 2u);
  EXPECT_EQ((*path)[0].content, kPrompt.toStdString());
  EXPECT_EQ((*path)[1].content, "Once upon a tim");
  EXPECT_EQ((*path)[1].state, storage::MessageState::Interrupted);
}

// Without a secret store (no D-Bus session) the key lives in memory for this
// session, and the Backends page says so; it still reaches no file.
TEST(RemoteAppNoSecretStore, TheKeyIsKeptForThisRunOnlyAndThePageSaysSo) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QByteArray key = "sk-hearth-test-4f1c9b27";
  {
    App app(dir.path());
    auto* backends = app.context->backends();
    ASSERT_TRUE(app.context->show(*app.qml));
    const QString id = backends->addEndpoint(QStringLiteral("Box"), QStringLiteral("http://127.0.0.1:9/v1"),
                                             QString::fromLatin1(key), false);
    ASSERT_FALSE(id.isEmpty()) << backends->error().toStdString();
    EXPECT_TRUE(backends->keyNote().contains(QStringLiteral("for this session only"))) << backends->keyNote().toStdString();
    EXPECT_TRUE(backends->endpoints()[0].toMap().value(QStringLiteral("hasKey")).toBool());
    // The Backends page is in the settings, with its form.
    EXPECT_NE(find_item(*app.qml, QStringLiteral("endpointUrl")), nullptr);
    EXPECT_NE(find_item(*app.qml, QStringLiteral("saveEndpoint")), nullptr);
    // Nothing listens on port 9: the test names the failure instead of hanging.
    backends->testConnection(id);
    ASSERT_TRUE(QTest::qWaitFor([&] { return !backends->testing(); }, 60000));
    EXPECT_TRUE(backends->testError().startsWith(QStringLiteral("unreachable"))) << backends->testError().toStdString();
  }
  EXPECT_EQ(files_holding(dir.path(), key), QStringList());
}

}  // namespace
}  // namespace hearth::testing
