#include "hearth/storage/catalog.h"

#include "hearth/storage/conversations.h"
#include "hearth/storage/messages.h"
#include "storage_test_util.h"

namespace hearth::storage {
namespace {

using testing::error_code;
using testing::StorageKind;
using testing::StorageTest;

class CatalogTest : public StorageTest {};

TEST_P(CatalogTest, PromptPresetsCrud) {
  PromptPresets presets(db());
  HEARTH_ASSERT_VALUE(PresetId coder, presets.create("Coder", "You write C++."));
  clock_.advance(50);
  HEARTH_ASSERT_VALUE(PresetId poet, presets.create("Bard", "You rhyme."));
  HEARTH_ASSERT_VALUE(PromptPreset got, presets.get(coder));
  EXPECT_EQ(got, (PromptPreset{coder, "Coder", "You write C++.", kStart, kStart}));

  auto duplicate = presets.create("Coder", "again");
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(duplicate.error().code, ErrorCode::InvalidArgument);
  EXPECT_NE(duplicate.error().message.find("'Coder' already exists"), std::string::npos);

  HEARTH_ASSERT_VALUE(auto listed, presets.list());
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].id, poet);  // by name: Bard < Coder
  EXPECT_EQ(listed[1].id, coder);

  clock_.advance(50);
  HEARTH_ASSERT_OK(presets.update(coder, "Coder v2", "You write C++20."));
  HEARTH_ASSERT_VALUE(PromptPreset updated, presets.get(coder));
  EXPECT_EQ(updated, (PromptPreset{coder, "Coder v2", "You write C++20.", kStart, kStart + 100}));
  EXPECT_EQ(error_code(presets.update(poet, "Coder v2", "x")), ErrorCode::InvalidArgument);

  HEARTH_ASSERT_OK(presets.remove(poet));
  EXPECT_EQ(error_code(presets.get(poet)), ErrorCode::NotFound);
  EXPECT_EQ(error_code(presets.remove(poet)), ErrorCode::NotFound);
  EXPECT_EQ(error_code(presets.update(poet, "a", "b")), ErrorCode::NotFound);
}

TEST_P(CatalogTest, ModelRegistryUpsertListAndUse) {
  ModelRegistry models(db());
  HEARTH_ASSERT_VALUE(ModelId a, models.upsert({"/m/a.gguf", 1000, "", "https://example.invalid/a", "Q4_0"}));
  HEARTH_ASSERT_VALUE(ModelId b, models.upsert({"/m/b.gguf", 2000, "ab12", "", "Q8_0"}));
  clock_.advance(10);
  // Same path: same entry, fields updated, added_ms kept.
  HEARTH_ASSERT_VALUE(ModelId a2, models.upsert({"/m/a.gguf", 1001, "cd34", "https://example.invalid/a2", "Q4_K_M"}));
  EXPECT_EQ(a2, a);
  HEARTH_ASSERT_VALUE(ModelEntry entry, models.get(a));
  EXPECT_EQ(entry, (ModelEntry{a, "/m/a.gguf", 1001, "cd34", "https://example.invalid/a2", "Q4_K_M", kStart,
                               std::nullopt}));

  HEARTH_ASSERT_VALUE(auto found, models.find_by_path("/m/b.gguf"));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->id, b);
  HEARTH_ASSERT_VALUE(auto missing, models.find_by_path("/m/none.gguf"));
  EXPECT_FALSE(missing.has_value());

  // Never used: ordered by path. Then the used one comes first.
  HEARTH_ASSERT_VALUE(auto before, models.list());
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[0].id, a);
  clock_.advance(10);
  HEARTH_ASSERT_OK(models.mark_used(b));
  HEARTH_ASSERT_VALUE(auto after, models.list());
  EXPECT_EQ(after[0].id, b);
  EXPECT_EQ(after[0].last_used_ms, kStart + 20);

  HEARTH_ASSERT_OK(models.remove(a));
  EXPECT_EQ(error_code(models.get(a)), ErrorCode::NotFound);
  EXPECT_EQ(error_code(models.mark_used(a)), ErrorCode::NotFound);
  EXPECT_EQ(error_code(models.remove(a)), ErrorCode::NotFound);
}

TEST_P(CatalogTest, PrefixCacheIndexFindsTouchesAndEvictsInLruOrder) {
  PrefixCacheIndex index(db());
  HEARTH_ASSERT_VALUE(PrefixCacheId p1, index.upsert({"model1", "h1", 100, "/c/1.kv", 4096}));
  clock_.advance(10);
  HEARTH_ASSERT_VALUE(PrefixCacheId p2, index.upsert({"model1", "h2", 200, "/c/2.kv", 8192}));
  clock_.advance(10);
  HEARTH_ASSERT_VALUE(PrefixCacheId p3, index.upsert({"model2", "h1", 50, "/c/3.kv", 1024}));
  EXPECT_EQ(index.total_size_bytes().value_or(-1), 4096 + 8192 + 1024);

  HEARTH_ASSERT_VALUE(auto hit, index.find("model1", "h2"));
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(*hit, (PrefixCacheEntry{p2, "model1", "h2", 200, "/c/2.kv", 8192, kStart + 10, kStart + 10}));
  HEARTH_ASSERT_VALUE(auto none, index.find("model2", "h2"));
  EXPECT_FALSE(none.has_value());

  clock_.advance(10);
  HEARTH_ASSERT_OK(index.touch(p1));
  HEARTH_ASSERT_VALUE(auto lru, index.least_recently_used(2));
  ASSERT_EQ(lru.size(), 2u);
  EXPECT_EQ(lru[0].id, p2);
  EXPECT_EQ(lru[1].id, p3);

  // Re-saving the same prefix replaces the entry.
  HEARTH_ASSERT_VALUE(PrefixCacheId again, index.upsert({"model1", "h2", 210, "/c/2b.kv", 9000}));
  EXPECT_EQ(again, p2);
  EXPECT_EQ(index.total_size_bytes().value_or(-1), 4096 + 9000 + 1024);

  HEARTH_ASSERT_OK(index.remove(p3));
  EXPECT_EQ(error_code(index.remove(p3)), ErrorCode::NotFound);
  EXPECT_EQ(error_code(index.touch(p3)), ErrorCode::NotFound);
  EXPECT_EQ(index.total_size_bytes().value_or(-1), 4096 + 9000);
}

TEST_P(CatalogTest, ContextEventsRecordDroppedAndSummarizedTurns) {
  HEARTH_ASSERT_VALUE(ConversationId c, Conversations(db()).create({}));
  HEARTH_ASSERT_VALUE(ConversationId other, Conversations(db()).create({}));
  Messages messages(db());
  HEARTH_ASSERT_VALUE(MessageId m1, messages.append(c, MessageId{}, {Role::User, "a", 0}));
  HEARTH_ASSERT_VALUE(MessageId m2, messages.append(c, m1, {Role::Assistant, "b", 0}));
  HEARTH_ASSERT_VALUE(MessageId m3, messages.append(c, m2, {Role::User, "c", 0}));
  HEARTH_ASSERT_VALUE(MessageId foreign, messages.append(other, MessageId{}, {Role::User, "z", 0}));

  ContextEvents events(db());
  HEARTH_ASSERT_VALUE(ContextEventId e1, events.add(c, {ContextEventKind::Dropped, m1, m2, 120, ""}));
  clock_.advance(5);
  HEARTH_ASSERT_VALUE(ContextEventId e2, events.add(c, {ContextEventKind::Summarized, m3, m3, 40, "They said hi."}));
  EXPECT_EQ(error_code(events.add(c, {ContextEventKind::Dropped, m1, foreign, 1, ""})), ErrorCode::InvalidArgument);

  HEARTH_ASSERT_VALUE(auto listed, events.list(c));
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0], (ContextEvent{e1, c, ContextEventKind::Dropped, kStart, m1, m2, 120, ""}));
  EXPECT_EQ(listed[1], (ContextEvent{e2, c, ContextEventKind::Summarized, kStart + 5, m3, m3, 40, "They said hi."}));

  // Deleting the summarized message keeps the event (its summary is the record).
  HEARTH_ASSERT_OK(messages.delete_branch(m3));
  HEARTH_ASSERT_VALUE(auto after, events.list(c));
  ASSERT_EQ(after.size(), 2u);
  EXPECT_FALSE(after[1].first_message.valid());
  EXPECT_EQ(after[1].summary, "They said hi.");
}

INSTANTIATE_TEST_SUITE_P(Storage, CatalogTest, ::testing::Values(StorageKind::File, StorageKind::Memory),
                         testing::kind_name);

}  // namespace
}  // namespace hearth::storage
