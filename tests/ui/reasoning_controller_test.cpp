// The reply controller with a reasoning model's reply, against a scripted
// engine and both conversation stores: the thinking streams into its own role
// ahead of the answer, is stored apart from it with the engine's thinking
// time, comes back when the conversation is reopened (mid-stream too), goes
// along with the reply in the next request (the template decides whether to
// render it), and the conversation's reasoning switch is stored and sent.
// The real engine on a model that thinks is tests/app/reasoning_test.cpp.
#include <QSignalSpy>
#include <QTest>

#include <gtest/gtest.h>

#include "controllers/chat_controller.h"
#include "controllers/model_controller.h"
#include "controllers/settings_controller.h"
#include "engine/memory_sizer.h"
#include "store/memory_conversation_store.h"
#include "store/sqlite_conversation_store.h"
#include "support/scripted_engine_client.h"

namespace hearth::ui {
namespace {

enum class StoreKind { Memory, Sqlite };
using Role = MessageListModel::Role;

class ReasoningControllerTest : public ::testing::TestWithParam<StoreKind> {
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
    engine->reasoning_pieces = {QStringLiteral("The user "), QStringLiteral("wants a "), QStringLiteral("story.")};
    engine->reasoning_ms = 1234;
    engine->info.reasoning_choices = {QStringLiteral("off"), QStringLiteral("on")};
    settings = std::make_unique<SettingsController>(settings::Settings{}, nullptr, &sizer);
    model = std::make_unique<ModelController>(engine.get(), settings.get(), nullptr, QString());
    chat = std::make_unique<ChatController>(storage.get(), engine.get(), model.get(), settings.get());
    model->load(QStringLiteral("scripted.gguf"));
    ASSERT_TRUE(QTest::qWaitFor([&] { return model->ready(); }, 2000));
  }

  void TearDown() override {
    chat.reset();
    model.reset();
    settings.reset();
    engine.reset();
    storage.reset();
  }

  QVariant row(int r, int role) { return chat->messages()->data(chat->messages()->index(r), role); }

  MessageTree stored_tree() {
    std::optional<MessageTree> out;
    storage->run([id = chat->currentConversationId()](ConversationStore& s) {
      return s.load_messages(ConversationKey{id});
    }, chat.get(), [&](Result<MessageTree> t) { out = std::move(t).value(); });
    EXPECT_TRUE(QTest::qWaitFor([&] { return out.has_value(); }, 2000));
    return out.value_or(MessageTree{});
  }
  std::string stored_choice() {
    std::optional<std::string> out;
    storage->run([id = chat->currentConversationId()](ConversationStore& s) {
      return s.get_conversation(ConversationKey{id});
    }, chat.get(), [&](Result<ConversationRecord> c) { out = c.value().reasoning; });
    EXPECT_TRUE(QTest::qWaitFor([&] { return out.has_value(); }, 2000));
    return out.value_or("");
  }

  EngineMemorySizer sizer;
  std::unique_ptr<StorageExecutor> storage;
  std::unique_ptr<testing::ScriptedEngineClient> engine;
  std::unique_ptr<SettingsController> settings;
  std::unique_ptr<ModelController> model;
  std::unique_ptr<ChatController> chat;
};

TEST_P(ReasoningControllerTest, ThinkingStreamsAheadOfTheAnswerAndIsStoredApart) {
  engine->hold_after_reasoning = true;
  chat->send(QStringLiteral("Tell me a story"));
  // Thinking: the reasoning so far, no answer, no duration yet.
  ASSERT_TRUE(QTest::qWaitFor([&] {
    return chat->messages()->rowCount() == 2 && row(1, Role::ReasoningRole).toString() == "The user wants a story.";
  }, 3000));
  EXPECT_TRUE(row(1, Role::TextRole).toString().isEmpty());
  EXPECT_LT(row(1, Role::ReasoningMsRole).toDouble(), 0);
  EXPECT_EQ(row(1, Role::StateRole).toString(), QStringLiteral("streaming"));

  // Reopened mid-stream: the thinking so far is shown (storage may hold less).
  const qint64 conversation = chat->currentConversationId();
  chat->newConversation();
  chat->openConversation(conversation);
  ASSERT_TRUE(QTest::qWaitFor([&] { return chat->messages()->rowCount() == 2; }, 2000));
  EXPECT_EQ(row(1, Role::ReasoningRole).toString(), QStringLiteral("The user wants a story."));

  QSignalSpy done(chat.get(), &ChatController::replyFinished);
  engine->release();
  ASSERT_TRUE(done.wait(3000));
  EXPECT_EQ(row(1, Role::TextRole).toString(), QStringLiteral("Once there was a fox."));
  EXPECT_EQ(row(1, Role::ReasoningRole).toString(), QStringLiteral("The user wants a story."));
  EXPECT_EQ(row(1, Role::ReasoningMsRole).toDouble(), 1234);  // the engine's figure

  const MessageTree tree = stored_tree();
  ASSERT_EQ(tree.messages.size(), 2u);
  EXPECT_EQ(tree.messages[0].reasoning, "");
  EXPECT_EQ(tree.messages[1].content, "Once there was a fox.");
  EXPECT_EQ(tree.messages[1].reasoning, "The user wants a story.");
  EXPECT_EQ(tree.messages[1].figures.reasoning_ms, std::optional<double>(1234));
  EXPECT_EQ(tree.messages[1].state, MessageState::Complete);

  // The next request carries the reply with its reasoning apart.
  engine->hold_after_reasoning = false;
  QSignalSpy again(chat.get(), &ChatController::replyFinished);
  chat->send(QStringLiteral("Another one"));
  ASSERT_TRUE(again.wait(3000));
  ASSERT_EQ(engine->requests.size(), 2);
  const GenerationRequest& second = engine->requests[1];
  ASSERT_GE(second.turns.size(), 3);
  const ChatTurn& reply = second.turns[second.turns.size() - 2];
  EXPECT_EQ(reply.role, ChatRole::Assistant);
  EXPECT_EQ(reply.text, QStringLiteral("Once there was a fox."));
  EXPECT_EQ(reply.reasoning, QStringLiteral("The user wants a story."));
  EXPECT_EQ(second.reasoning, QStringLiteral("default"));
}

TEST_P(ReasoningControllerTest, TheSwitchIsStoredWithTheConversationAndSent) {
  EXPECT_EQ(model->reasoningChoices(), (QStringList{QStringLiteral("off"), QStringLiteral("on")}));
  chat->setConversationReasoning(QStringLiteral("off"));
  QSignalSpy done(chat.get(), &ChatController::replyFinished);
  chat->send(QStringLiteral("Quick answer please"));
  ASSERT_TRUE(done.wait(3000));
  ASSERT_EQ(engine->requests.size(), 1);
  EXPECT_EQ(engine->requests[0].reasoning, QStringLiteral("off"));
  EXPECT_EQ(stored_choice(), "off");

  chat->setConversationReasoning(QStringLiteral("on"));
  EXPECT_EQ(stored_choice(), "on");
  QSignalSpy again(chat.get(), &ChatController::replyFinished);
  chat->send(QStringLiteral("Now think"));
  ASSERT_TRUE(again.wait(3000));
  EXPECT_EQ(engine->requests[1].reasoning, QStringLiteral("on"));

  // A new conversation starts at the template's default; the old one keeps its choice.
  const qint64 first = chat->currentConversationId();
  chat->newConversation();
  EXPECT_EQ(chat->conversationReasoning(), QStringLiteral("default"));
  chat->openConversation(first);
  EXPECT_EQ(chat->conversationReasoning(), QStringLiteral("on"));
}

INSTANTIATE_TEST_SUITE_P(Stores, ReasoningControllerTest, ::testing::Values(StoreKind::Memory, StoreKind::Sqlite),
                         [](const ::testing::TestParamInfo<StoreKind>& param_info) {
                           return param_info.param == StoreKind::Memory ? "Memory" : "Sqlite";
                         });

}  // namespace
}  // namespace hearth::ui
