#include "hearth/storage/conversations.h"

#include "hearth/storage/messages.h"
#include "storage_test_util.h"

namespace hearth::storage {
namespace {

using testing::StorageKind;
using testing::StorageTest;
using testing::error_code;

class ConversationsTest : public StorageTest {};

TEST_P(ConversationsTest, CreateThenGetReturnsEveryField) {
  Conversations conversations(db());
  NewConversation input;
  input.title = "Trip to Kraków";
  input.model_file = "tiny-llama-Q4_K_M.gguf";
  input.model_quant = "Q4_K_M";
  input.system_prompt = "You are terse.";
  input.settings.temperature = 0.7;
  input.settings.top_k = 40;
  input.settings.top_p = 0.95;
  input.settings.min_p = 0.05;
  input.settings.repeat_penalty = 1.1;
  input.settings.seed = 18446744073709551615ull;  // largest seed must survive
  input.settings.context_length = 8192;
  input.settings.overflow = OverflowPolicy::Summarize;
  HEARTH_ASSERT_VALUE(ConversationId id, conversations.create(input));
  HEARTH_ASSERT_VALUE(Conversation c, conversations.get(id));
  EXPECT_EQ(c.id, id);
  EXPECT_EQ(c.title, "Trip to Kraków");
  EXPECT_EQ(c.model_file, "tiny-llama-Q4_K_M.gguf");
  EXPECT_EQ(c.model_quant, "Q4_K_M");
  EXPECT_EQ(c.system_prompt, "You are terse.");
  EXPECT_EQ(c.settings, input.settings);
  EXPECT_EQ(c.created_ms, kStart);
  EXPECT_EQ(c.updated_ms, kStart);
  EXPECT_EQ(c.pinned, Pinned::No);
  EXPECT_EQ(c.archived, Archived::No);
  EXPECT_FALSE(c.active_leaf.valid());
}

TEST_P(ConversationsTest, UnsetSettingsStayUnset) {
  Conversations conversations(db());
  HEARTH_ASSERT_VALUE(ConversationId id, conversations.create({}));
  HEARTH_ASSERT_VALUE(Conversation c, conversations.get(id));
  EXPECT_EQ(c.settings, ConversationSettings{});
  EXPECT_FALSE(c.settings.temperature.has_value());
  EXPECT_FALSE(c.settings.seed.has_value());
}

TEST_P(ConversationsTest, GetOfUnknownIdIsNotFound) {
  auto c = Conversations(db()).get(ConversationId{42});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(error_code(c), ErrorCode::NotFound);
  EXPECT_NE(c.error().message.find("conversation 42"), std::string::npos);
}

TEST_P(ConversationsTest, EditsChangeFieldsAndUpdatedTime) {
  Conversations conversations(db());
  HEARTH_ASSERT_VALUE(ConversationId id, conversations.create({}));
  clock_.advance(1000);
  HEARTH_ASSERT_OK(conversations.rename(id, "Renamed"));
  clock_.advance(1000);
  HEARTH_ASSERT_OK(conversations.set_system_prompt(id, "Be kind."));
  clock_.advance(1000);
  HEARTH_ASSERT_OK(conversations.set_model(id, "m.gguf", "Q8_0"));
  clock_.advance(1000);
  ConversationSettings settings;
  settings.temperature = 0.25;
  settings.overflow = OverflowPolicy::EvictOldest;
  HEARTH_ASSERT_OK(conversations.set_settings(id, settings));
  HEARTH_ASSERT_VALUE(Conversation c, conversations.get(id));
  EXPECT_EQ(c.title, "Renamed");
  EXPECT_EQ(c.system_prompt, "Be kind.");
  EXPECT_EQ(c.model_file, "m.gguf");
  EXPECT_EQ(c.model_quant, "Q8_0");
  EXPECT_EQ(c.settings, settings);
  EXPECT_EQ(c.created_ms, kStart);
  EXPECT_EQ(c.updated_ms, kStart + 4000);

  // Pinning and archiving are not edits: updated_ms stays.
  clock_.advance(1000);
  HEARTH_ASSERT_OK(conversations.set_pinned(id, Pinned::Yes));
  HEARTH_ASSERT_OK(conversations.set_archived(id, Archived::Yes));
  HEARTH_ASSERT_VALUE(Conversation after, conversations.get(id));
  EXPECT_EQ(after.pinned, Pinned::Yes);
  EXPECT_EQ(after.archived, Archived::Yes);
  EXPECT_EQ(after.updated_ms, kStart + 4000);
}

TEST_P(ConversationsTest, EditsOfUnknownIdAreNotFound) {
  Conversations conversations(db());
  const ConversationId missing{7};
  EXPECT_EQ(error_code(conversations.rename(missing, "x")), ErrorCode::NotFound);
  EXPECT_EQ(error_code(conversations.set_system_prompt(missing, "x")), ErrorCode::NotFound);
  EXPECT_EQ(error_code(conversations.set_model(missing, "x", "y")), ErrorCode::NotFound);
  EXPECT_EQ(error_code(conversations.set_settings(missing, {})), ErrorCode::NotFound);
  EXPECT_EQ(error_code(conversations.set_pinned(missing, Pinned::Yes)), ErrorCode::NotFound);
  EXPECT_EQ(error_code(conversations.set_archived(missing, Archived::Yes)), ErrorCode::NotFound);
  EXPECT_EQ(error_code(conversations.remove(missing)), ErrorCode::NotFound);
}

TEST_P(ConversationsTest, ListOrdersPinnedThenNewestAndPages) {
  Conversations conversations(db());
  std::vector<ConversationId> ids;
  for (int i = 0; i < 5; ++i) {
    clock_.advance(10);
    HEARTH_ASSERT_VALUE(ConversationId id, conversations.create({"c" + std::to_string(i), "", "", "", {}}));
    ids.push_back(id);
  }
  HEARTH_ASSERT_OK(conversations.set_pinned(ids[1], Pinned::Yes));
  HEARTH_ASSERT_OK(conversations.set_archived(ids[3], Archived::Yes));
  // Expected order, worked out by hand: pinned c1, then newest first c4, c2, c0;
  // c3 is archived.
  HEARTH_ASSERT_VALUE(auto page1, conversations.list({ArchiveFilter::NotArchived, 2, 0}));
  HEARTH_ASSERT_VALUE(auto page2, conversations.list({ArchiveFilter::NotArchived, 2, 2}));
  ASSERT_EQ(page1.size(), 2u);
  ASSERT_EQ(page2.size(), 2u);
  EXPECT_EQ(page1[0].id, ids[1]);
  EXPECT_EQ(page1[1].id, ids[4]);
  EXPECT_EQ(page2[0].id, ids[2]);
  EXPECT_EQ(page2[1].id, ids[0]);
  HEARTH_ASSERT_VALUE(auto archived, conversations.list({ArchiveFilter::ArchivedOnly, 10, 0}));
  ASSERT_EQ(archived.size(), 1u);
  EXPECT_EQ(archived[0].id, ids[3]);
  HEARTH_ASSERT_VALUE(auto all, conversations.list({ArchiveFilter::All, 10, 0}));
  EXPECT_EQ(all.size(), 5u);
  EXPECT_EQ(conversations.count(ArchiveFilter::NotArchived).value_or(-1), 4);
  EXPECT_EQ(conversations.count(ArchiveFilter::ArchivedOnly).value_or(-1), 1);
  EXPECT_EQ(conversations.count(ArchiveFilter::All).value_or(-1), 5);

  // A new message moves a conversation to the top of the unpinned ones.
  clock_.advance(10);
  HEARTH_ASSERT_OK(Messages(db()).append(ids[0], MessageId{}, {Role::User, "hi", 1}));
  HEARTH_ASSERT_VALUE(auto reordered, conversations.list({ArchiveFilter::NotArchived, 2, 0}));
  EXPECT_EQ(reordered[1].id, ids[0]);
}

TEST_P(ConversationsTest, RemoveDeletesMessagesToo) {
  Conversations conversations(db());
  Messages messages(db());
  HEARTH_ASSERT_VALUE(ConversationId keep, conversations.create({"keep", "", "", "", {}}));
  HEARTH_ASSERT_VALUE(ConversationId drop, conversations.create({"drop", "", "", "", {}}));
  HEARTH_ASSERT_VALUE(MessageId kept, messages.append(keep, MessageId{}, {Role::User, "stay", 0}));
  HEARTH_ASSERT_VALUE(MessageId m1, messages.append(drop, MessageId{}, {Role::User, "go", 0}));
  HEARTH_ASSERT_OK(messages.append(drop, m1, {Role::Assistant, "gone", 0}));
  HEARTH_ASSERT_OK(conversations.remove(drop));
  EXPECT_EQ(error_code(conversations.get(drop)), ErrorCode::NotFound);
  EXPECT_EQ(error_code(messages.get(m1)), ErrorCode::NotFound);
  HEARTH_ASSERT_VALUE(Message still, messages.get(kept));
  EXPECT_EQ(still.content, "stay");
  EXPECT_EQ(conversations.count(ArchiveFilter::All).value_or(-1), 1);
}

INSTANTIATE_TEST_SUITE_P(Storage, ConversationsTest, ::testing::Values(StorageKind::File, StorageKind::Memory),
                         testing::kind_name);

}  // namespace
}  // namespace hearth::storage
