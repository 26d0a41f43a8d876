// ChatController against a scripted engine and both conversation stores
// (in-memory double and the real SQLite store in memory): sending and
// streaming, persistence, stop, regenerate and edit branches, branch
// switching, delete with undo, pin, archive and search.
#include <QAbstractItemModelTester>
#include <QSignalSpy>
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

enum class StoreKind { Memory, Sqlite };

class ChatControllerTest : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override {
    std::unique_ptr<ConversationStore> store;
    if (GetParam() == StoreKind::Memory) {
      store = std::make_unique<MemoryConversationStore>();
    } else {
      auto opened = SqliteConversationStore::open_in_memory();
      ASSERT_TRUE(opened.ok()) << opened.error().message;
      store = std::move(opened).value();
    }
    storage = std::make_unique<StorageExecutor>(std::move(store));
    engine = std::make_unique<testing::ScriptedEngineClient>();
    settings = std::make_unique<SettingsController>(settings::Settings{}, nullptr, &sizer);
    model = std::make_unique<ModelController>(engine.get(), settings.get(), nullptr, QString());
    chat = std::make_unique<ChatController>(storage.get(), engine.get(), model.get(), settings.get());
    testers.push_back(std::make_unique<QAbstractItemModelTester>(
        chat->messages(), QAbstractItemModelTester::FailureReportingMode::Fatal));
    testers.push_back(std::make_unique<QAbstractItemModelTester>(
        chat->conversations(), QAbstractItemModelTester::FailureReportingMode::Fatal));
    model->load(QStringLiteral("scripted.gguf"));
    ASSERT_TRUE(QTest::qWaitFor([&] { return model->ready(); }, 2000));
  }

  void TearDown() override {
    testers.clear();
    chat.reset();
    model.reset();
    settings.reset();
    engine.reset();
    storage.reset();
  }

  // Sends and waits for the reply to finish.
  void send_and_wait(const QString& text) {
    QSignalSpy done(chat.get(), &ChatController::replyFinished);
    chat->send(text);
    ASSERT_TRUE(done.wait(3000));
  }

  QString row_text(int row) {
    return chat->messages()->data(chat->messages()->index(row), MessageListModel::TextRole).toString();
  }
  int row_int(int row, int role) {
    return chat->messages()->data(chat->messages()->index(row), role).toInt();
  }
  qint64 row_id(int row) {
    return chat->messages()->data(chat->messages()->index(row), MessageListModel::IdRole).toLongLong();
  }

  // Reads the stored tree on the storage thread (and waits for earlier writes).
  MessageTree stored_tree() {
    std::optional<MessageTree> out;
    storage->run([id = chat->currentConversationId()](ConversationStore& s) {
      return s.load_messages(ConversationKey{id});
    }, chat.get(), [&](Result<MessageTree> t) { out = std::move(t).value(); });
    EXPECT_TRUE(QTest::qWaitFor([&] { return out.has_value(); }, 2000));
    return out.value_or(MessageTree{});
  }

  EngineMemorySizer sizer;
  std::unique_ptr<StorageExecutor> storage;
  std::unique_ptr<testing::ScriptedEngineClient> engine;
  std::unique_ptr<SettingsController> settings;
  std::unique_ptr<ModelController> model;
  std::unique_ptr<ChatController> chat;
  std::vector<std::unique_ptr<QAbstractItemModelTester>> testers;
};

TEST_P(ChatControllerTest, SendStreamsReplyIntoViewAndStore) {
  EXPECT_TRUE(chat->canSend());
  send_and_wait(QStringLiteral("Tell me a story"));
  ASSERT_EQ(chat->messages()->rowCount(), 2);
  EXPECT_EQ(row_text(0), QStringLiteral("Tell me a story"));
  EXPECT_EQ(row_text(1), engine->pieces.join(QString()));
  EXPECT_EQ(chat->conversations()->rowCount(), 1);
  EXPECT_EQ(chat->currentTitle(), QStringLiteral("Tell me a story"));
  EXPECT_DOUBLE_EQ(chat->lastTokensPerSecond(), 250);
  EXPECT_DOUBLE_EQ(chat->lastPauseMs(), 30);
  EXPECT_EQ(chat->contextMax(), 512);

  // The engine saw the system prompt, then the user's message.
  ASSERT_EQ(engine->requests.size(), 1);
  ASSERT_EQ(engine->requests[0].turns.size(), 2);
  EXPECT_EQ(engine->requests[0].turns[0].role, ChatRole::System);
  EXPECT_EQ(engine->requests[0].turns[1].text, QStringLiteral("Tell me a story"));

  const MessageTree tree = stored_tree();
  ASSERT_EQ(tree.messages.size(), 2u);
  EXPECT_EQ(tree.messages[1].content, engine->pieces.join(QString()).toStdString());
  EXPECT_EQ(tree.messages[1].state, MessageState::Complete);
  EXPECT_DOUBLE_EQ(tree.messages[1].figures.tokens_per_second, 250);
}

TEST_P(ChatControllerTest, FollowUpCarriesTheHistory) {
  send_and_wait(QStringLiteral("one"));
  send_and_wait(QStringLiteral("two"));
  ASSERT_EQ(engine->requests.size(), 2);
  // system, one, reply, two
  EXPECT_EQ(engine->requests[1].turns.size(), 4);
  EXPECT_EQ(engine->requests[1].turns[2].role, ChatRole::Assistant);
}

TEST_P(ChatControllerTest, ContextEventsAreShownAndStoredWithTheirMessages) {
  send_and_wait(QStringLiteral("one"));
  send_and_wait(QStringLiteral("two"));
  // The engine dropped the first exchange (indices into the second request's
  // turns: the system prompt, "one", its reply, "two"); a summary made in
  // the background arrives after the reply finished.
  ContextEvent dropped;
  dropped.kind = ContextEvent::Kind::Dropped;
  dropped.first_message = 1;
  dropped.last_message = 2;
  dropped.turns = 1;
  dropped.tokens_freed = 30;
  dropped.at_token = 10;
  emit engine->contextEvent(2, dropped);
  ContextEvent summarized = dropped;
  summarized.kind = ContextEvent::Kind::Summarized;
  summarized.first_message = 3;
  summarized.last_message = 3;
  summarized.summary = QStringLiteral("They counted.");
  emit engine->contextEvent(2, summarized);
  ContextEvent unknown = dropped;  // a request this controller never sent
  emit engine->contextEvent(99, unknown);

  const QVariantList markers = chat->contextMarkers();
  ASSERT_EQ(markers.size(), 2);
  EXPECT_EQ(markers[0].toMap()[QStringLiteral("kind")].toString(), QStringLiteral("dropped"));
  EXPECT_TRUE(markers[1].toMap()[QStringLiteral("text")].toString().contains(QStringLiteral("They counted.")));

  std::optional<std::vector<ContextEventRecord>> stored;
  storage->run([id = chat->currentConversationId()](ConversationStore& s) {
    return s.context_events(ConversationKey{id});
  }, chat.get(), [&](Result<std::vector<ContextEventRecord>> r) {
    ASSERT_TRUE(r.ok()) << r.error().message;
    stored = std::move(r).value();
  });
  ASSERT_TRUE(QTest::qWaitFor([&] { return stored.has_value(); }, 2000));
  ASSERT_EQ(stored->size(), 2u);
  const ConversationKey conversation{chat->currentConversationId()};
  EXPECT_EQ((*stored)[0], (ContextEventRecord{conversation, ContextEventKind::Dropped, MessageKey{row_id(0)},
                                              MessageKey{row_id(1)}, 30, ""}));
  EXPECT_EQ((*stored)[1], (ContextEventRecord{conversation, ContextEventKind::Summarized, MessageKey{row_id(2)},
                                              MessageKey{row_id(2)}, 30, "They counted."}));
  // The request carried the conversation, so the engine keeps its context.
  EXPECT_EQ(engine->requests[1].conversation_id, conversation.value);
}

TEST_P(ChatControllerTest, StopKeepsPartialReply) {
  engine->hold_after_first_piece = true;
  QSignalSpy done(chat.get(), &ChatController::replyFinished);
  chat->send(QStringLiteral("go"));
  ASSERT_TRUE(QTest::qWaitFor([&] { return chat->messages()->rowCount() == 2 && !row_text(1).isEmpty(); }, 2000));
  EXPECT_TRUE(chat->generating());
  EXPECT_FALSE(chat->canSend());
  chat->stop();
  ASSERT_TRUE(done.wait(2000));
  EXPECT_EQ(row_text(1), engine->pieces[0]);
  EXPECT_FALSE(chat->generating());
  EXPECT_EQ(stored_tree().messages[1].content, engine->pieces[0].toStdString());
}

TEST_P(ChatControllerTest, RegenerateAddsBranchAndSwitcherMovesBetweenThem) {
  send_and_wait(QStringLiteral("hello"));
  const qint64 first_reply = row_id(1);
  engine->pieces = {QStringLiteral("Another reply.")};
  QSignalSpy done(chat.get(), &ChatController::replyFinished);
  chat->regenerate(first_reply);
  ASSERT_TRUE(done.wait(2000));
  ASSERT_EQ(chat->messages()->rowCount(), 2);
  EXPECT_EQ(row_text(1), QStringLiteral("Another reply."));
  EXPECT_EQ(row_int(1, MessageListModel::BranchIndexRole), 2);
  EXPECT_EQ(row_int(1, MessageListModel::BranchCountRole), 2);

  chat->switchBranch(row_id(1), -1);
  EXPECT_EQ(row_id(1), first_reply);
  EXPECT_EQ(row_int(1, MessageListModel::BranchIndexRole), 1);
  // The switch is stored: reopening shows the same branch.
  EXPECT_EQ(stored_tree().active_leaf->value, first_reply);
}

TEST_P(ChatControllerTest, EditCreatesUserBranchWithItsOwnReply) {
  send_and_wait(QStringLiteral("original"));
  const qint64 original = row_id(0);
  QSignalSpy done(chat.get(), &ChatController::replyFinished);
  chat->editMessage(original, QStringLiteral("edited"));
  ASSERT_TRUE(done.wait(2000));
  ASSERT_EQ(chat->messages()->rowCount(), 2);
  EXPECT_EQ(row_text(0), QStringLiteral("edited"));
  EXPECT_EQ(row_int(0, MessageListModel::BranchIndexRole), 2);
  EXPECT_EQ(row_int(0, MessageListModel::BranchCountRole), 2);
  // The edited branch's request does not contain the original message.
  EXPECT_EQ(engine->requests.last().turns.last().text, QStringLiteral("edited"));

  chat->switchBranch(row_id(0), -1);
  EXPECT_EQ(row_text(0), QStringLiteral("original"));
  EXPECT_EQ(chat->messages()->rowCount(), 2);  // the original reply came back with it
  EXPECT_EQ(stored_tree().messages.size(), 4u);
}

TEST_P(ChatControllerTest, ReopeningConversationRestoresMessages) {
  send_and_wait(QStringLiteral("keep me"));
  const qint64 id = chat->currentConversationId();
  chat->newConversation();
  EXPECT_EQ(chat->messages()->rowCount(), 0);
  chat->openConversation(id);
  ASSERT_TRUE(QTest::qWaitFor([&] { return chat->messages()->rowCount() == 2; }, 2000));
  EXPECT_EQ(row_text(0), QStringLiteral("keep me"));
}

TEST_P(ChatControllerTest, DeleteCanBeUndoneAndOtherwiseIsCommitted) {
  send_and_wait(QStringLiteral("first"));
  const qint64 first = chat->currentConversationId();
  chat->newConversation();
  send_and_wait(QStringLiteral("second"));
  ASSERT_EQ(chat->conversations()->rowCount(), 2);

  chat->deleteConversation(first);
  EXPECT_EQ(chat->conversations()->rowCount(), 1);
  EXPECT_EQ(chat->pendingDeleteTitle(), QStringLiteral("first"));
  chat->undoDelete();
  EXPECT_EQ(chat->conversations()->rowCount(), 2);
  EXPECT_TRUE(chat->pendingDeleteTitle().isEmpty());

  chat->deleteConversation(first);
  chat->commit_pending_delete();
  chat->refreshConversations();
  ASSERT_TRUE(QTest::qWaitFor([&] { return chat->conversations()->rowCount() == 1; }, 2000));
  QTest::qWait(50);  // a stale refresh must not bring it back
  EXPECT_EQ(chat->conversations()->rowOf(first), -1);
}

TEST_P(ChatControllerTest, PinMovesToTopAndArchiveHides) {
  send_and_wait(QStringLiteral("alpha"));
  const qint64 alpha = chat->currentConversationId();
  chat->newConversation();
  send_and_wait(QStringLiteral("beta"));
  EXPECT_EQ(chat->conversations()->rowOf(alpha), 1);
  chat->setPinned(alpha, true);
  EXPECT_EQ(chat->conversations()->rowOf(alpha), 0);

  chat->setArchived(alpha, true);
  EXPECT_EQ(chat->conversations()->rowOf(alpha), -1);
  chat->setShowArchived(true);
  ASSERT_TRUE(QTest::qWaitFor([&] { return chat->conversations()->rowOf(alpha) == 0; }, 2000));
  EXPECT_EQ(chat->conversations()->rowCount(), 1);
}

TEST_P(ChatControllerTest, SearchFindsReplyWordsWithHighlight) {
  send_and_wait(QStringLiteral("Tell me about animals"));
  chat->setSearchQuery(QStringLiteral("fox"));
  ASSERT_TRUE(QTest::qWaitFor([&] { return chat->searchResults()->rowCount() > 0; }, 2000));
  const QString snippet =
      chat->searchResults()->data(chat->searchResults()->index(0), SearchResultsModel::SnippetRole).toString();
  EXPECT_TRUE(snippet.contains(QStringLiteral("<b>fox</b>"))) << snippet.toStdString();
  chat->setSearchQuery(QString());
  EXPECT_EQ(chat->searchResults()->rowCount(), 0);
}

TEST_P(ChatControllerTest, ComposerDisabledWithReasonWithoutModel) {
  engine->load_error = QStringLiteral("broken file");
  model->load(QStringLiteral("bad.gguf"));
  ASSERT_TRUE(QTest::qWaitFor([&] { return model->state() == ModelController::State::Failed; }, 2000));
  EXPECT_FALSE(chat->canSend());
  EXPECT_FALSE(chat->composerHint().isEmpty());
  EXPECT_TRUE(model->errorMessage().contains(QStringLiteral("broken file")));
  chat->send(QStringLiteral("ignored"));
  QTest::qWait(20);
  EXPECT_EQ(chat->messages()->rowCount(), 0);
}

INSTANTIATE_TEST_SUITE_P(Stores, ChatControllerTest,
                         ::testing::Values(StoreKind::Memory, StoreKind::Sqlite),
                         [](const auto& param_info) {
                           return param_info.param == StoreKind::Memory ? "Memory" : "Sqlite";
                         });

}  // namespace
}  // namespace hearth::ui
