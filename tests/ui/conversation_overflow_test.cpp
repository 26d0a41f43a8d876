// The per-conversation overflow policy in ChatController: unset follows the global
// setting, a choice is stored with the conversation (in-memory double and a real
// SQLite file), survives restarting the app, and is the policy every request of that
// conversation carries from the next message on.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>

#include "controllers/chat_controller.h"
#include "controllers/model_controller.h"
#include "controllers/settings_controller.h"
#include "store/memory_conversation_store.h"
#include "store/sqlite_conversation_store.h"
#include "support/scripted_engine_client.h"

namespace hearth::ui {
namespace {

enum class StoreKind { Memory, SqliteFile };

class OverflowFixture : public ::testing::Test {
 protected:
  // Builds the controllers as the app does at start-up, over a store of `kind`.
  void start(StoreKind kind) {
    std::unique_ptr<ConversationStore> store;
    if (kind == StoreKind::Memory) {
      store = std::make_unique<MemoryConversationStore>();
    } else {
      ASSERT_TRUE(dir.isValid());
      auto opened = SqliteConversationStore::open(dir.filePath(QStringLiteral("hearth.db")).toStdString());
      ASSERT_TRUE(opened.ok()) << opened.error().message;
      store = std::move(opened).value();
    }
    storage = std::make_unique<StorageExecutor>(std::move(store));
    engine = std::make_unique<testing::ScriptedEngineClient>();
    settings = std::make_unique<SettingsController>(global, nullptr, &sizer);
    model = std::make_unique<ModelController>(engine.get(), settings.get(), nullptr, QString());
    chat = std::make_unique<ChatController>(storage.get(), engine.get(), model.get(), settings.get());
    model->load(QStringLiteral("scripted.gguf"));
    ASSERT_TRUE(QTest::qWaitFor([&] { return model->ready(); }, 2000));
  }

  // Closes everything (pending writes are finished by the executor) and keeps the file.
  void stop_app() {
    chat.reset();
    model.reset();
    settings.reset();
    engine.reset();
    storage.reset();
  }

  void TearDown() override { stop_app(); }

  void send_and_wait(const QString& text) {
    QSignalSpy done(chat.get(), &ChatController::replyFinished);
    chat->send(text);
    ASSERT_TRUE(done.wait(3000));
  }

  // Opens a conversation and waits until its messages are shown (the first is `first`).
  void open_and_wait(qint64 id, const QString& first) {
    chat->openConversation(id);
    ASSERT_TRUE(QTest::qWaitFor([&] {
      return chat->messages()->rowCount() > 0 &&
             chat->messages()->data(chat->messages()->index(0), MessageListModel::TextRole).toString() == first;
    }, 2000));
  }

  QString last_request_policy() const {
    return engine->requests.isEmpty() ? QString() : engine->requests.last().overflow_policy;
  }

  // The conversation's stored choice, read on the storage thread after earlier writes.
  std::optional<StoredOverflow> stored_overflow(qint64 id) {
    std::optional<Result<ConversationRecord>> out;
    storage->run([id](ConversationStore& s) { return s.get_conversation(ConversationKey{id}); }, chat.get(),
                 [&](Result<ConversationRecord> r) { out = std::move(r); });
    EXPECT_TRUE(QTest::qWaitFor([&] { return out.has_value(); }, 2000));
    if (!out || !out->ok()) {
      ADD_FAILURE() << "conversation " << id << " not readable";
      return std::nullopt;
    }
    return out->value().overflow;
  }

  QTemporaryDir dir;
  settings::Settings global;  // the app's settings at start-up (overflow: evict)
  EngineMemorySizer sizer;
  std::unique_ptr<StorageExecutor> storage;
  std::unique_ptr<testing::ScriptedEngineClient> engine;
  std::unique_ptr<SettingsController> settings;
  std::unique_ptr<ModelController> model;
  std::unique_ptr<ChatController> chat;
};

class ConversationOverflowTest : public OverflowFixture, public ::testing::WithParamInterface<StoreKind> {
 protected:
  void SetUp() override { start(GetParam()); }
};

TEST_P(ConversationOverflowTest, UnsetFollowsTheGlobalSettingForEveryRequest) {
  ASSERT_EQ(global.overflow_policy, settings::OverflowPolicy::Evict);
  EXPECT_EQ(chat->conversationOverflow(), QStringLiteral("default"));
  EXPECT_EQ(chat->effectiveOverflow(), QStringLiteral("evict"));
  send_and_wait(QStringLiteral("one"));
  EXPECT_EQ(last_request_policy(), QStringLiteral("evict"));

  QSignalSpy changed(chat.get(), &ChatController::overflowChanged);
  settings->setOverflowPolicy(QStringLiteral("summarize"));
  EXPECT_GE(changed.count(), 1);  // the "Use default (…)" text follows the setting
  EXPECT_EQ(chat->defaultOverflow(), QStringLiteral("summarize"));
  EXPECT_EQ(chat->effectiveOverflow(), QStringLiteral("summarize"));
  send_and_wait(QStringLiteral("two"));
  EXPECT_EQ(last_request_policy(), QStringLiteral("summarize"));
  EXPECT_EQ(stored_overflow(chat->currentConversationId()), std::nullopt);
}

TEST_P(ConversationOverflowTest, ChoiceIsStoredAndSentFromTheNextMessage) {
  send_and_wait(QStringLiteral("one"));
  const qint64 id = chat->currentConversationId();
  EXPECT_EQ(last_request_policy(), QStringLiteral("evict"));

  QSignalSpy changed(chat.get(), &ChatController::overflowChanged);
  chat->setConversationOverflow(QStringLiteral("stop"));
  EXPECT_EQ(changed.count(), 1);
  EXPECT_EQ(chat->conversationOverflow(), QStringLiteral("stop"));
  EXPECT_EQ(chat->effectiveOverflow(), QStringLiteral("stop"));
  EXPECT_EQ(chat->defaultOverflow(), QStringLiteral("evict"));
  send_and_wait(QStringLiteral("two"));
  EXPECT_EQ(last_request_policy(), QStringLiteral("stop"));
  EXPECT_EQ(stored_overflow(id), std::optional(StoredOverflow::Stop));

  // The global setting no longer decides for this conversation.
  settings->setOverflowPolicy(QStringLiteral("summarize"));
  send_and_wait(QStringLiteral("three"));
  EXPECT_EQ(last_request_policy(), QStringLiteral("stop"));

  // A regenerated reply is a request of the same conversation.
  chat->setConversationOverflow(QStringLiteral("evict"));
  QSignalSpy done(chat.get(), &ChatController::replyFinished);
  chat->regenerate(chat->messages()->data(chat->messages()->index(5), MessageListModel::IdRole).toLongLong());
  ASSERT_TRUE(done.wait(3000));
  EXPECT_EQ(last_request_policy(), QStringLiteral("evict"));

  // Back to the default: the global setting again.
  chat->setConversationOverflow(QStringLiteral("default"));
  EXPECT_EQ(chat->effectiveOverflow(), QStringLiteral("summarize"));
  send_and_wait(QStringLiteral("four"));
  EXPECT_EQ(last_request_policy(), QStringLiteral("summarize"));
  EXPECT_EQ(stored_overflow(id), std::nullopt);
}

TEST_P(ConversationOverflowTest, ChoiceBeforeTheFirstMessageGoesWithTheNewConversation) {
  chat->setConversationOverflow(QStringLiteral("summarize"));
  EXPECT_EQ(chat->conversationOverflow(), QStringLiteral("summarize"));
  send_and_wait(QStringLiteral("hello"));
  EXPECT_EQ(last_request_policy(), QStringLiteral("summarize"));
  EXPECT_EQ(stored_overflow(chat->currentConversationId()), std::optional(StoredOverflow::Summarize));
  EXPECT_EQ(chat->conversationOverflow(), QStringLiteral("summarize"));

  // The next new conversation starts from the default again.
  chat->newConversation();
  EXPECT_EQ(chat->conversationOverflow(), QStringLiteral("default"));
  send_and_wait(QStringLiteral("again"));
  EXPECT_EQ(last_request_policy(), QStringLiteral("evict"));
}

TEST_P(ConversationOverflowTest, ChoiceWhileTheFirstMessageIsSavedAppliesToTheNext) {
  QSignalSpy done(chat.get(), &ChatController::replyFinished);
  chat->send(QStringLiteral("hello"));  // the conversation is created on the storage thread
  chat->setConversationOverflow(QStringLiteral("stop"));
  ASSERT_TRUE(done.wait(3000));
  EXPECT_EQ(last_request_policy(), QStringLiteral("evict"));  // sent as the message was
  EXPECT_EQ(chat->conversationOverflow(), QStringLiteral("stop"));
  EXPECT_EQ(stored_overflow(chat->currentConversationId()), std::optional(StoredOverflow::Stop));
  send_and_wait(QStringLiteral("next"));
  EXPECT_EQ(last_request_policy(), QStringLiteral("stop"));
}

TEST_P(ConversationOverflowTest, OpeningAConversationShowsItsOwnPolicy) {
  send_and_wait(QStringLiteral("alpha"));
  const qint64 alpha = chat->currentConversationId();
  chat->setConversationOverflow(QStringLiteral("stop"));
  chat->newConversation();
  send_and_wait(QStringLiteral("beta"));
  const qint64 beta = chat->currentConversationId();
  EXPECT_EQ(chat->conversationOverflow(), QStringLiteral("default"));

  open_and_wait(alpha, QStringLiteral("alpha"));
  EXPECT_EQ(chat->conversationOverflow(), QStringLiteral("stop"));
  send_and_wait(QStringLiteral("alpha again"));
  EXPECT_EQ(last_request_policy(), QStringLiteral("stop"));

  open_and_wait(beta, QStringLiteral("beta"));
  EXPECT_EQ(chat->conversationOverflow(), QStringLiteral("default"));
  send_and_wait(QStringLiteral("beta again"));
  EXPECT_EQ(last_request_policy(), QStringLiteral("evict"));
}

TEST_P(ConversationOverflowTest, UnknownNamesAreIgnored) {
  send_and_wait(QStringLiteral("one"));
  chat->setConversationOverflow(QStringLiteral("evict"));
  QSignalSpy changed(chat.get(), &ChatController::overflowChanged);
  chat->setConversationOverflow(QStringLiteral("sometimes"));
  chat->setConversationOverflow(QString());
  EXPECT_EQ(changed.count(), 0);
  EXPECT_EQ(chat->conversationOverflow(), QStringLiteral("evict"));
}

INSTANTIATE_TEST_SUITE_P(Stores, ConversationOverflowTest,
                         ::testing::Values(StoreKind::Memory, StoreKind::SqliteFile),
                         [](const auto& param_info) {
                           return param_info.param == StoreKind::Memory ? "Memory" : "SqliteFile";
                         });

// Restarting the app over the same database file brings the choice back.
TEST_F(OverflowFixture, ChoiceSurvivesRestartingTheApp) {
  start(StoreKind::SqliteFile);
  send_and_wait(QStringLiteral("keep my policy"));
  const qint64 id = chat->currentConversationId();
  chat->setConversationOverflow(QStringLiteral("summarize"));
  stop_app();

  global.overflow_policy = settings::OverflowPolicy::Stop;
  start(StoreKind::SqliteFile);
  chat->refreshConversations();
  ASSERT_TRUE(QTest::qWaitFor([&] { return chat->conversations()->rowOf(id) == 0; }, 2000));
  open_and_wait(id, QStringLiteral("keep my policy"));
  EXPECT_EQ(chat->conversationOverflow(), QStringLiteral("summarize"));
  EXPECT_EQ(chat->defaultOverflow(), QStringLiteral("stop"));
  send_and_wait(QStringLiteral("still summarizing?"));
  EXPECT_EQ(last_request_policy(), QStringLiteral("summarize"));
}

}  // namespace
}  // namespace hearth::ui
