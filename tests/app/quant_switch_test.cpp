// "Switch quant level" end to end: the real window (offscreen), the real
// engine and storage. Two quant levels of one catalog model are installed in
// the picker's model folder (fixture models saved under the catalog's file
// names); after a reply with the first, the picker's switch reloads the engine
// with the second and the conversation stays open with its messages, and the
// next message is answered by the new model in the same conversation.
#include <QFile>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>

#include "controllers/chat_controller.h"
#include "controllers/model_controller.h"
#include "controllers/settings_controller.h"
#include "gui/app_context.h"
#include "picker/picker_view_model.h"

namespace hearth::app {
namespace {

constexpr const char* kModelId = "smollm2-360m-instruct";

ui::PickerViewModel* find_picker(QQmlApplicationEngine& qml) {
  for (QObject* root : qml.rootObjects()) {
    if (auto* picker = root->findChild<ui::PickerViewModel*>()) return picker;
  }
  return nullptr;
}

QString row_text(ui::ChatController* chat, int row) {
  return chat->messages()->data(chat->messages()->index(row), ui::MessageListModel::TextRole).toString();
}

TEST(QuantSwitch, ReloadsTheEngineAndKeepsTheConversation) {
  QTemporaryDir data_dir, models_dir;
  ASSERT_TRUE(data_dir.isValid() && models_dir.isValid());
  const QString q8 = models_dir.filePath(QStringLiteral("SmolLM2-360M-Instruct-Q8_0.gguf"));
  const QString q4 = models_dir.filePath(QStringLiteral("SmolLM2-360M-Instruct-Q4_K_M.gguf"));
  ASSERT_TRUE(QFile::copy(QStringLiteral(HEARTH_TEST_DATA_DIR "/models/tiny-llama-q8_0.gguf"), q8));
  ASSERT_TRUE(QFile::copy(QStringLiteral(HEARTH_TEST_DATA_DIR "/models/tiny-llama-q4_k_m.gguf"), q4));

  AppOptions options;
  options.data_dir = data_dir.path();
  options.demo_model_path = QStringLiteral(HEARTH_TEST_DATA_DIR "/models/stories260K.gguf");
  auto context = std::make_unique<AppContext>(options);
  auto qml = std::make_unique<QQmlApplicationEngine>();
  {
    auto* chat = context->chat();
    auto* model = context->model();
    ASSERT_TRUE(context->show(*qml));
    context->settings()->setTemperature(0);
    ui::PickerViewModel* picker = find_picker(*qml);
    ASSERT_NE(picker, nullptr);
    picker->setModelsDir(models_dir.path());

    // Both levels count as installed; load the first from the picker.
    ASSERT_TRUE(QTest::qWaitFor([&] { return !model->loading(); }, 30000));  // a start-up load, if any
    picker->load(QString::fromLatin1(kModelId), QStringLiteral("Q8_0"));
    ASSERT_TRUE(QTest::qWaitFor([&] { return model->ready() && model->modelPath() == q8; }, 30000))
        << model->errorMessage().toStdString();
    const QString first_quant = model->quant();

    QSignalSpy finished(chat, &ui::ChatController::replyFinished);
    chat->send(QStringLiteral("Hello there"));
    ASSERT_TRUE(finished.wait(60000));
    ASSERT_EQ(chat->messages()->rowCount(), 2);
    const qint64 conversation = chat->currentConversationId();
    const QString question = row_text(chat, 0), answer = row_text(chat, 1);
    EXPECT_FALSE(answer.isEmpty());

    // Switch: the engine reloads with the other file.
    picker->switchQuant(QString::fromLatin1(kModelId), QStringLiteral("Q4_K_M"));
    ASSERT_TRUE(QTest::qWaitFor([&] { return model->ready() && model->modelPath() == q4; }, 30000))
        << model->errorMessage().toStdString();
    EXPECT_NE(model->quant(), first_quant);  // the loaded weights really changed type
    // The conversation is still the open one, with its messages.
    EXPECT_EQ(chat->currentConversationId(), conversation);
    ASSERT_EQ(chat->messages()->rowCount(), 2);
    EXPECT_EQ(row_text(chat, 0), question);
    EXPECT_EQ(row_text(chat, 1), answer);

    // And it goes on with the new model.
    finished.clear();
    chat->send(QStringLiteral("Tell me more"));
    ASSERT_TRUE(finished.wait(60000));
    EXPECT_EQ(chat->currentConversationId(), conversation);
    ASSERT_EQ(chat->messages()->rowCount(), 4);
    EXPECT_EQ(row_text(chat, 0), question);
    EXPECT_EQ(row_text(chat, 1), answer);
    EXPECT_EQ(row_text(chat, 2), QStringLiteral("Tell me more"));
  }
  qml.reset();  // the window goes before the controllers it binds to
  context.reset();
}

}  // namespace
}  // namespace hearth::app
