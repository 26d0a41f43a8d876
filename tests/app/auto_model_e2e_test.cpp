// The Auto model in the desktop app, end to end: the real window (offscreen),
// engine thread and SQLite store in a temporary data folder, with the
// TinyStories model as the small half and the tiny llama fixture as the large
// one (both real engines, loaded side by side). Settings -> Auto model is set
// through its controller and "Use Auto" loads the pair. A story goes to the
// small model; text it never saw goes to the large one by its familiarity
// score; "Ask the large model" on the story reply makes a second branch that
// the large model wrote. Each reply names its model in the window and in the
// database, and after a restart the app reopens on the Auto model.
#include <hearth/storage/database.h>
#include <hearth/storage/messages.h>

#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>

#include "controllers/auto_model_controller.h"
#include "controllers/chat_controller.h"
#include "controllers/model_controller.h"
#include "controllers/settings_controller.h"
#include "engine/auto_model_path.h"
#include "gui/app_context.h"

namespace hearth::testing {
namespace {

using app::AppContext;
using app::AppOptions;

const QString kSmall = QStringLiteral(HEARTH_TEST_DATA_DIR "/models/stories260K.gguf");
const QString kLarge = QStringLiteral(HEARTH_TEST_DATA_DIR "/models/tiny-llama-f32.gguf");

struct App {
  explicit App(const QString& data_dir) {
    AppOptions options;
    options.data_dir = data_dir;
    options.demo_model_path = kSmall;
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

QVariant row_data(ui::ChatController* chat, int row, int role) {
  return chat->messages()->data(chat->messages()->index(row), role);
}

bool wait_loaded(ui::ModelController* model) {
  return QTest::qWaitFor([&] { return !model->loading() && (model->ready() || !model->errorMessage().isEmpty()); },
                         60000);
}

void wait_reply(ui::ChatController* chat, const std::function<void()>& start) {
  QSignalSpy finished(chat, &ui::ChatController::replyFinished);
  QSignalSpy failed(chat, &ui::ChatController::lastErrorChanged);
  start();
  EXPECT_TRUE(QTest::qWaitFor([&] { return finished.count() > 0 || failed.count() > 0; }, 120000));
  EXPECT_EQ(finished.count(), 1) << chat->lastError().toStdString();
}

QQuickItem* find_item(QQuickItem* item, const QString& name) {
  if (item->objectName() == name && item->isVisible()) return item;
  for (QQuickItem* child : item->childItems()) {
    if (QQuickItem* found = find_item(child, name)) return found;
  }
  return nullptr;
}

TEST(AutoModelEndToEnd, EachReplyComesFromTheModelTheRouterChoseAndSaysSo) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString story = QStringLiteral("Once upon a time, there was a little girl named Lily.");
  const QString unseen = QStringLiteral("qzv xjw kpq 8841 vvxq zzkj wqpx jjq 0x7f3e qqzx");
  qint64 conversation = -1;
  {
    App app(dir.path());
    auto* chat = app.context->chat();
    auto* model = app.context->model();
    auto* settings = app.context->settings();
    auto* autos = app.context->auto_model();
    ASSERT_NE(autos, nullptr);
    ASSERT_TRUE(app.context->show(*app.qml));
    settings->setTemperature(0);
    settings->setRepeatPenalty(1.0);
    settings->setContextLength(512);

    EXPECT_FALSE(autos->problem().isEmpty());  // nothing chosen yet
    autos->setSmallPath(kSmall);
    autos->setLargePath(kSmall);
    EXPECT_FALSE(autos->problem().isEmpty());  // the same model twice
    autos->setLargePath(kLarge);
    autos->setMinFamiliarity(-4.0);
    autos->setMinConfidence(-2.5);
    EXPECT_TRUE(autos->problem().isEmpty()) << autos->problem().toStdString();
    autos->use();
    ASSERT_TRUE(wait_loaded(model)) << model->errorMessage().toStdString();
    ASSERT_TRUE(model->ready()) << model->errorMessage().toStdString();
    EXPECT_EQ(model->modelPath(), QString::fromLatin1(ui::kAutoModelPath));
    EXPECT_TRUE(autos->active());

    // A story: the small model knows it and answers.
    wait_reply(chat, [&] { chat->send(story); });
    ASSERT_EQ(chat->messages()->rowCount(), 2);
    const QString first_origin = row_data(chat, 1, ui::MessageListModel::OriginRole).toString();
    EXPECT_TRUE(first_origin.contains(QStringLiteral("Auto: small model"))) << first_origin.toStdString();
    EXPECT_FALSE(row_data(chat, 1, ui::MessageListModel::TextRole).toString().isEmpty());
    const qint64 story_reply = row_data(chat, 1, ui::MessageListModel::IdRole).toLongLong();

    // The window offers the large model on the reply.
    auto* window = qobject_cast<QQuickWindow*>(app.qml->rootObjects().first());
    ASSERT_NE(window, nullptr);
    EXPECT_TRUE(QTest::qWaitFor([&] { return find_item(window->contentItem(), QStringLiteral("askLargeModel")); },
                                5000));

    // "Ask the large model": a second branch of the same reply, by the large model.
    wait_reply(chat, [&] { chat->askLargeModel(story_reply); });
    ASSERT_EQ(chat->messages()->rowCount(), 2);
    EXPECT_EQ(row_data(chat, 1, ui::MessageListModel::BranchCountRole).toInt(), 2);
    EXPECT_EQ(row_data(chat, 1, ui::MessageListModel::BranchIndexRole).toInt(), 2);
    const QString asked_origin = row_data(chat, 1, ui::MessageListModel::OriginRole).toString();
    EXPECT_TRUE(asked_origin.contains(QStringLiteral("Auto: large model, asked for the large model")))
        << asked_origin.toStdString();

    // Text the small model never saw: the large model, by familiarity.
    wait_reply(chat, [&] { chat->send(unseen); });
    ASSERT_EQ(chat->messages()->rowCount(), 4);
    const QString unseen_origin = row_data(chat, 3, ui::MessageListModel::OriginRole).toString();
    EXPECT_TRUE(unseen_origin.contains(QStringLiteral("Auto: large model, question unfamiliar")))
        << unseen_origin.toStdString();
    conversation = chat->currentConversationId();
  }
  {
    // The database keeps who answered; the app reopens on the Auto model.
    storage::OpenOptions read_only;
    read_only.access = storage::Access::ReadOnly;
    auto db = storage::Database::open((dir.path() + QStringLiteral("/hearth.sqlite3")).toStdString(), read_only);
    ASSERT_TRUE(db.ok()) << db.error().message;
    auto all = storage::Messages(*db).all(storage::ConversationId(conversation));
    ASSERT_TRUE(all.ok()) << all.error().message;
    int small = 0, large = 0;
    for (const auto& m : *all) {
      small += m.stats.backend.find("Auto: small model") != std::string::npos;
      large += m.stats.backend.find("Auto: large model") != std::string::npos;
    }
    EXPECT_EQ(small, 1);
    EXPECT_EQ(large, 2);

    App app(dir.path());
    ASSERT_TRUE(app.context->show(*app.qml));
    EXPECT_TRUE(QTest::qWaitFor([&] { return app.context->model()->ready(); }, 60000));
    EXPECT_TRUE(app.context->auto_model()->active());
  }
}

}  // namespace
}  // namespace hearth::testing
