// A reply belongs to the conversation it was sent in. The user may switch to
// another conversation, or start a new one, while the storage thread is still
// saving the message; the request is built from what the storage job saved and
// the reply is streamed and stored into that conversation, in a real SQLite file.
#include <QSemaphore>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>

#include "controllers/chat_controller.h"
#include "controllers/model_controller.h"
#include "controllers/settings_controller.h"
#include "store/sqlite_conversation_store.h"
#include "support/scripted_engine_client.h"

namespace hearth::ui {
namespace {

class ChatRoutingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir.isValid());
    auto opened = SqliteConversationStore::open(dir.filePath(QStringLiteral("chat.sqlite3")).toStdString());
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    storage = std::make_unique<StorageExecutor>(std::move(opened).value());
    engine = std::make_unique<testing::ScriptedEngineClient>();
    settings::Settings s;
    s.system_prompt = "Be brief.";
    settings = std::make_unique<SettingsController>(s, nullptr, &sizer);
    model = std::make_unique<ModelController>(engine.get(), settings.get(), nullptr, QString());
    chat = std::make_unique<ChatController>(storage.get(), engine.get(), model.get(), settings.get());
    model->load(QStringLiteral("scripted.gguf"));
    ASSERT_TRUE(QTest::qWaitFor([&] { return model->ready(); }, 5000));
  }

  void TearDown() override {
    gate.release(1000);  // a failed test must not leave the storage thread waiting
    chat.reset();
    model.reset();
    settings.reset();
    engine.reset();
    storage.reset();
  }

  // Starts a conversation with one exchange and returns its id.
  qint64 conversation_with(const QString& text) {
    chat->newConversation();
    QSignalSpy done(chat.get(), &ChatController::replyFinished);
    chat->send(text);
    EXPECT_TRUE(done.wait(10000));
    return chat->currentConversationId();
  }

  // Holds the storage thread: jobs queued after this wait until release_storage().
  void hold_storage() {
    storage->write([this](ConversationStore&) -> Status {
      gate.acquire();
      return {};
    });
  }
  void release_storage() { gate.release(); }

  MessageTree stored(qint64 id) {
    std::optional<MessageTree> out;
    storage->run([id](ConversationStore& s) { return s.load_messages(ConversationKey{id}); }, chat.get(),
                 [&](Result<MessageTree> t) {
                   EXPECT_TRUE(t.ok());
                   if (t.ok()) out = std::move(t).value();
                 });
    EXPECT_TRUE(QTest::qWaitFor([&] { return out.has_value(); }, 10000));
    return out.value_or(MessageTree{});
  }

  // Opens a conversation and waits until the view shows it (first row `first`).
  void open_and_wait(qint64 id, const QString& first) {
    chat->openConversation(id);
    ASSERT_TRUE(QTest::qWaitFor([&] {
      return chat->messages()->rowCount() > 0 &&
             chat->messages()->data(chat->messages()->index(0), MessageListModel::TextRole).toString() == first;
    }, 10000));
  }

  QString reply() const { return engine->pieces.join(QString()); }

  QTemporaryDir dir;
  QSemaphore gate;
  EngineMemorySizer sizer;
  std::unique_ptr<StorageExecutor> storage;
  std::unique_ptr<testing::ScriptedEngineClient> engine;
  std::unique_ptr<SettingsController> settings;
  std::unique_ptr<ModelController> model;
  std::unique_ptr<ChatController> chat;
};

// The four messages of `a` after a follow-up: question, reply, follow-up, reply.
void expect_follow_up_stored(const MessageTree& a, const std::string& first, const std::string& follow_up,
                             const std::string& reply) {
  ASSERT_EQ(a.messages.size(), 4u);
  EXPECT_EQ(a.messages[0].content, first);
  EXPECT_EQ(a.messages[2].content, follow_up);
  EXPECT_EQ(a.messages[2].role, StoredRole::User);
  ASSERT_TRUE(a.messages[2].parent.has_value());
  EXPECT_EQ(*a.messages[2].parent, a.messages[1].id);
  EXPECT_EQ(a.messages[3].role, StoredRole::Assistant);
  EXPECT_EQ(a.messages[3].content, reply);
  EXPECT_EQ(a.messages[3].state, MessageState::Complete);
  ASSERT_TRUE(a.messages[3].parent.has_value());
  EXPECT_EQ(*a.messages[3].parent, a.messages[2].id);
}

TEST_F(ChatRoutingTest, SwitchingBeforeTheSaveReturnsKeepsTheReplyInItsConversation) {
  const qint64 a = conversation_with(QStringLiteral("About foxes"));
  const qint64 b = conversation_with(QStringLiteral("About owls"));
  ASSERT_NE(a, b);
  open_and_wait(a, QStringLiteral("About foxes"));

  hold_storage();
  QSignalSpy done(chat.get(), &ChatController::replyFinished);
  chat->send(QStringLiteral("And their dens?"));
  chat->openConversation(b);  // before the storage job that saves the message has run
  EXPECT_EQ(engine->requests.size(), 2);  // nothing sent yet
  release_storage();
  ASSERT_TRUE(done.wait(10000)) << chat->lastError().toStdString();

  // The request carried a's history, not b's.
  ASSERT_EQ(engine->requests.size(), 3);
  const auto& turns = engine->requests[2].turns;
  ASSERT_EQ(turns.size(), 4);
  EXPECT_EQ(turns[0].role, ChatRole::System);
  EXPECT_EQ(turns[1].text, QStringLiteral("About foxes"));
  EXPECT_EQ(turns[2].role, ChatRole::Assistant);
  EXPECT_EQ(turns[2].text, reply());
  EXPECT_EQ(turns[3].text, QStringLiteral("And their dens?"));
  EXPECT_EQ(engine->requests[2].conversation_id, a);

  expect_follow_up_stored(stored(a), "About foxes", "And their dens?", reply().toStdString());
  const MessageTree other = stored(b);
  ASSERT_EQ(other.messages.size(), 2u);
  EXPECT_EQ(other.messages[0].content, "About owls");
  EXPECT_EQ(other.messages[1].content, reply().toStdString());

  // The open view is still b, untouched by a's stream.
  EXPECT_EQ(chat->currentConversationId(), b);
  ASSERT_EQ(chat->messages()->rowCount(), 2);
  EXPECT_EQ(chat->messages()->data(chat->messages()->index(0), MessageListModel::TextRole).toString(),
            QStringLiteral("About owls"));

  // Going back to a shows the stored reply.
  chat->openConversation(a);
  ASSERT_TRUE(QTest::qWaitFor([&] { return chat->messages()->rowCount() == 4; }, 10000));
  EXPECT_EQ(chat->messages()->data(chat->messages()->index(3), MessageListModel::TextRole).toString(), reply());
}

// Sending right after opening a conversation, before its messages arrived from
// storage: the view still holds the previous conversation, whose last message
// must not become the parent (storage refuses a parent from another
// conversation). The turn hangs under the opened conversation's stored leaf.
TEST_F(ChatRoutingTest, SendingBeforeTheOpenedConversationLoadedFollowsItsStoredLeaf) {
  const qint64 a = conversation_with(QStringLiteral("About foxes"));
  const qint64 b = conversation_with(QStringLiteral("About owls"));  // the view shows b

  hold_storage();  // a's messages cannot arrive before the send
  QSignalSpy done(chat.get(), &ChatController::replyFinished);
  chat->openConversation(a);
  ASSERT_EQ(chat->messages()->data(chat->messages()->index(0), MessageListModel::TextRole).toString(),
            QStringLiteral("About owls"));  // still b's messages
  chat->send(QStringLiteral("And their dens?"));
  release_storage();
  ASSERT_TRUE(done.wait(10000)) << chat->lastError().toStdString();
  EXPECT_TRUE(chat->lastError().isEmpty()) << chat->lastError().toStdString();

  ASSERT_EQ(engine->requests.size(), 3);
  const auto& turns = engine->requests[2].turns;
  ASSERT_EQ(turns.size(), 4);
  EXPECT_EQ(turns[1].text, QStringLiteral("About foxes"));
  EXPECT_EQ(turns[2].role, ChatRole::Assistant);
  EXPECT_EQ(turns[3].text, QStringLiteral("And their dens?"));
  EXPECT_EQ(engine->requests[2].conversation_id, a);
  expect_follow_up_stored(stored(a), "About foxes", "And their dens?", reply().toStdString());
  EXPECT_EQ(stored(b).messages.size(), 2u);

  // The view shows a with the new exchange.
  EXPECT_EQ(chat->currentConversationId(), a);
  ASSERT_EQ(chat->messages()->rowCount(), 4);
  EXPECT_EQ(chat->messages()->data(chat->messages()->index(2), MessageListModel::TextRole).toString(),
            QStringLiteral("And their dens?"));
}

// Regenerating or editing names a message the view shows; while the opened
// conversation loads those are another conversation's, so nothing is sent.
TEST_F(ChatRoutingTest, RegenerateBeforeTheOpenedConversationLoadedIsIgnored) {
  const qint64 a = conversation_with(QStringLiteral("About foxes"));
  conversation_with(QStringLiteral("About owls"));
  const qint64 owls_reply =
      chat->messages()->data(chat->messages()->index(1), MessageListModel::IdRole).toLongLong();

  hold_storage();
  chat->openConversation(a);
  chat->regenerate(owls_reply);
  chat->editMessage(owls_reply - 1, QStringLiteral("About eagles"));
  EXPECT_FALSE(chat->generating());
  release_storage();
  ASSERT_TRUE(QTest::qWaitFor([&] { return chat->messages()->rowCount() == 2 &&
      chat->messages()->data(chat->messages()->index(0), MessageListModel::TextRole).toString() ==
          QStringLiteral("About foxes"); }, 10000));
  EXPECT_EQ(engine->requests.size(), 2);
  EXPECT_EQ(stored(a).messages.size(), 2u);
}

TEST_F(ChatRoutingTest, StartingANewConversationBeforeTheSaveReturnsKeepsTheReplyInItsConversation) {
  const qint64 a = conversation_with(QStringLiteral("About foxes"));
  const qint64 b = conversation_with(QStringLiteral("About owls"));
  open_and_wait(a, QStringLiteral("About foxes"));

  hold_storage();
  QSignalSpy done(chat.get(), &ChatController::replyFinished);
  chat->send(QStringLiteral("And their dens?"));
  chat->newConversation();
  release_storage();
  ASSERT_TRUE(done.wait(10000)) << chat->lastError().toStdString();

  ASSERT_EQ(engine->requests.size(), 3);
  ASSERT_EQ(engine->requests[2].turns.size(), 4);
  EXPECT_EQ(engine->requests[2].turns[1].text, QStringLiteral("About foxes"));
  EXPECT_EQ(engine->requests[2].conversation_id, a);
  expect_follow_up_stored(stored(a), "About foxes", "And their dens?", reply().toStdString());
  EXPECT_EQ(stored(b).messages.size(), 2u);

  // The new conversation stays empty and unsaved; no third conversation appeared.
  EXPECT_EQ(chat->currentConversationId(), -1);
  EXPECT_EQ(chat->messages()->rowCount(), 0);
  EXPECT_EQ(chat->conversations()->rowCount(), 2);
}

TEST_F(ChatRoutingTest, SwitchingAwayFromAConversationBeingCreatedKeepsItsFirstReply) {
  const qint64 a = conversation_with(QStringLiteral("About foxes"));
  chat->newConversation();
  hold_storage();
  QSignalSpy done(chat.get(), &ChatController::replyFinished);
  chat->send(QStringLiteral("About badgers"));
  chat->openConversation(a);
  release_storage();
  ASSERT_TRUE(done.wait(10000)) << chat->lastError().toStdString();

  ASSERT_EQ(engine->requests.size(), 2);
  const qint64 created = engine->requests[1].conversation_id;
  EXPECT_NE(created, a);
  ASSERT_EQ(engine->requests[1].turns.size(), 2);  // system prompt and the new question only
  EXPECT_EQ(engine->requests[1].turns[1].text, QStringLiteral("About badgers"));

  const MessageTree fresh = stored(created);
  ASSERT_EQ(fresh.messages.size(), 2u);
  EXPECT_EQ(fresh.messages[0].content, "About badgers");
  EXPECT_EQ(fresh.messages[1].content, reply().toStdString());
  EXPECT_EQ(fresh.messages[1].state, MessageState::Complete);
  EXPECT_EQ(stored(a).messages.size(), 2u);
  EXPECT_EQ(chat->currentConversationId(), a);
  EXPECT_EQ(chat->messages()->rowCount(), 2);
  EXPECT_EQ(chat->conversations()->rowCount(), 2);
}

}  // namespace
}  // namespace hearth::ui
