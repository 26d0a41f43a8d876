#include "hearth/storage/messages.h"

#include "hearth/storage/conversations.h"
#include "storage_test_util.h"

namespace hearth::storage {
namespace {

using testing::StorageKind;
using testing::StorageTest;
using testing::error_code;

class MessagesTest : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    auto id = Conversations(db()).create({"chat", "", "", "", {}});
    ASSERT_TRUE(id.ok());
    conversation_ = *id;
  }

  std::vector<std::string> path_contents() {
    std::vector<std::string> out;
    auto path = Messages(db()).active_path(conversation_);
    EXPECT_TRUE(path.ok()) << path.error().message;
    if (!path.ok()) return out;
    for (const Message& m : *path) out.push_back(m.content);
    return out;
  }

  MessageId leaf() { return Conversations(db()).get(conversation_).value().active_leaf; }

  ConversationId conversation_;
};

using Contents = std::vector<std::string>;

TEST_P(MessagesTest, AppendBuildsThePathAndStoresEveryField) {
  Messages messages(db());
  HEARTH_ASSERT_VALUE(MessageId q, messages.append(conversation_, MessageId{}, {Role::User, "Hello?", 2}));
  clock_.advance(5);
  HEARTH_ASSERT_VALUE(MessageId a, messages.append(conversation_, q, {Role::Assistant, "Hi.", 3}));
  HEARTH_ASSERT_VALUE(Message m, messages.get(a));
  EXPECT_EQ(m.id, a);
  EXPECT_EQ(m.conversation, conversation_);
  EXPECT_EQ(m.parent, q);
  EXPECT_EQ(m.role, Role::Assistant);
  EXPECT_EQ(m.content, "Hi.");
  EXPECT_EQ(m.token_count, 3);
  EXPECT_EQ(m.state, MessageState::Complete);
  EXPECT_EQ(m.created_ms, kStart + 5);
  EXPECT_EQ(m.updated_ms, kStart + 5);
  EXPECT_EQ(leaf(), a);
  EXPECT_EQ(path_contents(), (Contents{"Hello?", "Hi."}));
  EXPECT_EQ(Conversations(db()).get(conversation_).value().updated_ms, kStart + 5);
}

TEST_P(MessagesTest, EmptyConversationHasEmptyPath) {
  EXPECT_TRUE(path_contents().empty());
  HEARTH_ASSERT_VALUE(auto roots, Messages(db()).roots(conversation_));
  EXPECT_TRUE(roots.empty());
}

TEST_P(MessagesTest, ParentFromAnotherConversationIsRejected) {
  Messages messages(db());
  HEARTH_ASSERT_VALUE(ConversationId other, Conversations(db()).create({}));
  HEARTH_ASSERT_VALUE(MessageId foreign, messages.append(other, MessageId{}, {Role::User, "x", 0}));
  auto r = messages.append(conversation_, foreign, {Role::User, "y", 0});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(error_code(r), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_code(messages.append(conversation_, MessageId{999}, {Role::User, "y", 0})), ErrorCode::NotFound);
  EXPECT_EQ(error_code(messages.append(ConversationId{999}, MessageId{}, {Role::User, "y", 0})), ErrorCode::NotFound);
}

TEST_P(MessagesTest, EditCreatesABranchAndSwitchMovesBetweenBranches) {
  Messages messages(db());
  HEARTH_ASSERT_VALUE(MessageId q1, messages.append(conversation_, MessageId{}, {Role::User, "Q1", 0}));
  HEARTH_ASSERT_VALUE(MessageId a1, messages.append(conversation_, q1, {Role::Assistant, "A1", 0}));
  HEARTH_ASSERT_VALUE(MessageId q2, messages.append(conversation_, a1, {Role::User, "Q2", 0}));
  HEARTH_ASSERT_VALUE(MessageId a2, messages.append(conversation_, q2, {Role::Assistant, "A2", 0}));

  // Editing Q2 makes a sibling with the same parent and role; the path follows it.
  HEARTH_ASSERT_VALUE(MessageId q2b, messages.edit(q2, "Q2 edited"));
  HEARTH_ASSERT_VALUE(Message edited, messages.get(q2b));
  EXPECT_EQ(edited.parent, a1);
  EXPECT_EQ(edited.role, Role::User);
  EXPECT_EQ(path_contents(), (Contents{"Q1", "A1", "Q2 edited"}));
  HEARTH_ASSERT_VALUE(MessageId a2b, messages.append(conversation_, q2b, {Role::Assistant, "A2b", 0}));
  EXPECT_EQ(path_contents(), (Contents{"Q1", "A1", "Q2 edited", "A2b"}));

  HEARTH_ASSERT_VALUE(auto siblings, messages.siblings(q2));
  EXPECT_EQ(siblings, (std::vector<MessageId>{q2, q2b}));
  HEARTH_ASSERT_VALUE(auto children, messages.children(a1));
  EXPECT_EQ(children, (std::vector<MessageId>{q2, q2b}));

  // Switching to the old branch restores its leaf; switching back restores A2b.
  HEARTH_ASSERT_OK(messages.switch_to(q2));
  EXPECT_EQ(leaf(), a2);
  EXPECT_EQ(path_contents(), (Contents{"Q1", "A1", "Q2", "A2"}));
  HEARTH_ASSERT_OK(messages.switch_to(q2b));
  EXPECT_EQ(leaf(), a2b);
  // Switching to an inner message follows the newest child at each level.
  HEARTH_ASSERT_OK(messages.switch_to(q1));
  EXPECT_EQ(leaf(), a2b);

  // Regenerating a reply: a second reply under the same question.
  HEARTH_ASSERT_VALUE(MessageId a2c, messages.append(conversation_, q2b, {Role::Assistant, "A2c", 0}));
  HEARTH_ASSERT_VALUE(auto replies, messages.siblings(a2c));
  EXPECT_EQ(replies, (std::vector<MessageId>{a2b, a2c}));
  HEARTH_ASSERT_VALUE(auto all, messages.all(conversation_));
  EXPECT_EQ(all.size(), 7u);
}

TEST_P(MessagesTest, EditingTheRootMakesASecondRoot) {
  Messages messages(db());
  HEARTH_ASSERT_VALUE(MessageId r1, messages.append(conversation_, MessageId{}, {Role::User, "first", 0}));
  HEARTH_ASSERT_VALUE(MessageId r2, messages.edit(r1, "second"));
  HEARTH_ASSERT_VALUE(auto roots, messages.roots(conversation_));
  EXPECT_EQ(roots, (std::vector<MessageId>{r1, r2}));
  HEARTH_ASSERT_VALUE(auto siblings, messages.siblings(r1));
  EXPECT_EQ(siblings, roots);
  EXPECT_EQ(path_contents(), (Contents{"second"}));
}

TEST_P(MessagesTest, DeleteBranchRemovesSubtreeAndMovesActiveLeaf) {
  Messages messages(db());
  HEARTH_ASSERT_VALUE(MessageId q1, messages.append(conversation_, MessageId{}, {Role::User, "Q1", 0}));
  HEARTH_ASSERT_VALUE(MessageId a1, messages.append(conversation_, q1, {Role::Assistant, "A1", 0}));
  HEARTH_ASSERT_VALUE(MessageId a1b, messages.append(conversation_, q1, {Role::Assistant, "A1b", 0}));
  HEARTH_ASSERT_VALUE(MessageId q2b, messages.append(conversation_, a1b, {Role::User, "Q2b", 0}));
  HEARTH_ASSERT_VALUE(MessageId a1c, messages.append(conversation_, q1, {Role::Assistant, "A1c", 0}));
  HEARTH_ASSERT_OK(messages.switch_to(a1b));
  EXPECT_EQ(leaf(), q2b);

  // Deleting an inactive branch leaves the active leaf alone.
  HEARTH_ASSERT_OK(messages.delete_branch(a1));
  EXPECT_EQ(error_code(messages.get(a1)), ErrorCode::NotFound);
  EXPECT_EQ(leaf(), q2b);

  // Deleting the active branch (with its child) moves to the newest sibling: A1c.
  HEARTH_ASSERT_OK(messages.delete_branch(a1b));
  EXPECT_EQ(error_code(messages.get(q2b)), ErrorCode::NotFound);
  EXPECT_EQ(leaf(), a1c);
  EXPECT_EQ(path_contents(), (Contents{"Q1", "A1c"}));

  // The last child gone: the parent becomes the leaf.
  HEARTH_ASSERT_OK(messages.delete_branch(a1c));
  EXPECT_EQ(leaf(), q1);
  // The root gone: no leaf.
  HEARTH_ASSERT_OK(messages.delete_branch(q1));
  EXPECT_FALSE(leaf().valid());
  HEARTH_ASSERT_VALUE(auto all, messages.all(conversation_));
  EXPECT_TRUE(all.empty());
  EXPECT_EQ(error_code(messages.delete_branch(q1)), ErrorCode::NotFound);
}

TEST_P(MessagesTest, DeepChainDeletesInOneCall) {
  // Deeper than SQLite's trigger recursion limit (1000), to show deletion does not
  // rely on recursive cascades.
  Messages messages(db());
  MessageId parent;
  MessageId root;
  // One outer transaction instead of 1500 synced commits keeps the test fast.
  HEARTH_ASSERT_VALUE(Transaction tx, Transaction::begin(db()));
  for (int i = 0; i < 1500; ++i) {
    HEARTH_ASSERT_VALUE(MessageId id, messages.append(conversation_, parent, {i % 2 ? Role::Assistant : Role::User,
                                                                          "m" + std::to_string(i), 0}));
    if (!root.valid()) root = id;
    parent = id;
  }
  HEARTH_ASSERT_OK(tx.commit());
  EXPECT_EQ(path_contents().size(), 1500u);
  HEARTH_ASSERT_OK(messages.delete_branch(root));
  HEARTH_ASSERT_VALUE(auto all, messages.all(conversation_));
  EXPECT_TRUE(all.empty());
}

TEST_P(MessagesTest, StreamingReplyLifecycle) {
  Messages messages(db());
  HEARTH_ASSERT_VALUE(MessageId q, messages.append(conversation_, MessageId{}, {Role::User, "Tell me", 2}));
  clock_.advance(100);
  HEARTH_ASSERT_VALUE(MessageId r, messages.begin_reply(conversation_, q));
  EXPECT_EQ(leaf(), r);
  HEARTH_ASSERT_VALUE(Message started, messages.get(r));
  EXPECT_EQ(started.state, MessageState::Streaming);
  EXPECT_EQ(started.role, Role::Assistant);
  EXPECT_EQ(started.content, "");

  clock_.advance(300);
  HEARTH_ASSERT_OK(messages.update_reply(r, "Once", 1));
  clock_.advance(300);
  HEARTH_ASSERT_OK(messages.update_reply(r, "Once upon", 2));
  HEARTH_ASSERT_VALUE(Message partial, messages.get(r));
  EXPECT_EQ(partial.content, "Once upon");
  EXPECT_EQ(partial.token_count, 2);
  EXPECT_EQ(partial.state, MessageState::Streaming);
  EXPECT_EQ(partial.updated_ms, kStart + 700);

  ReplyEnd end;
  end.content = "Once upon a time.";
  end.token_count = 5;
  end.stats = {123.5, 42.25, "vulkan:lavapipe"};
  clock_.advance(300);
  HEARTH_ASSERT_OK(messages.finish_reply(r, end));
  HEARTH_ASSERT_VALUE(Message done, messages.get(r));
  EXPECT_EQ(done.state, MessageState::Complete);
  EXPECT_EQ(done.content, "Once upon a time.");
  EXPECT_EQ(done.token_count, 5);
  EXPECT_EQ(done.stats, end.stats);
  EXPECT_EQ(done.created_ms, kStart + 100);
  EXPECT_EQ(done.updated_ms, kStart + 1000);

  // A finished reply can no longer be streamed into or finished again.
  auto late = messages.update_reply(r, "more", 6);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(error_code(late), ErrorCode::InvalidArgument);
  EXPECT_NE(late.error().message.find("complete, not streaming"), std::string::npos);
  EXPECT_EQ(error_code(messages.finish_reply(r, end)), ErrorCode::InvalidArgument);
  EXPECT_EQ(error_code(messages.update_reply(MessageId{999}, "x", 1)), ErrorCode::NotFound);
}

TEST_P(MessagesTest, ReplyCanEndInterruptedOrWithError) {
  Messages messages(db());
  HEARTH_ASSERT_VALUE(MessageId q, messages.append(conversation_, MessageId{}, {Role::User, "Go", 1}));
  HEARTH_ASSERT_VALUE(MessageId r1, messages.begin_reply(conversation_, q));
  HEARTH_ASSERT_OK(messages.finish_reply(r1, {MessageState::Interrupted, "Half", 1, {}, ""}));
  HEARTH_ASSERT_VALUE(MessageId r2, messages.begin_reply(conversation_, q));
  HEARTH_ASSERT_OK(messages.finish_reply(r2, {MessageState::Error, "", 0, {}, "out of memory"}));
  EXPECT_EQ(messages.get(r1).value().state, MessageState::Interrupted);
  EXPECT_EQ(messages.get(r1).value().content, "Half");
  EXPECT_FALSE(messages.get(r1).value().stats.ttft_ms.has_value());
  EXPECT_EQ(messages.get(r2).value().state, MessageState::Error);
  EXPECT_EQ(messages.get(r2).value().error_message, "out of memory");
  HEARTH_ASSERT_VALUE(MessageId r3, messages.begin_reply(conversation_, q));
  EXPECT_EQ(error_code(messages.finish_reply(r3, {MessageState::Streaming, "", 0, {}, ""})), ErrorCode::InvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Storage, MessagesTest, ::testing::Values(StorageKind::File, StorageKind::Memory),
                         testing::kind_name);

}  // namespace
}  // namespace hearth::storage
