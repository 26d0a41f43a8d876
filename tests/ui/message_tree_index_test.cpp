#include "viewmodels/message_tree_index.h"

#include <gtest/gtest.h>

namespace hearth::ui {
namespace {

MessageRecord msg(int64_t id, std::optional<int64_t> parent, StoredRole role) {
  MessageRecord m;
  m.id = MessageKey{id};
  if (parent) m.parent = MessageKey{*parent};
  m.role = role;
  return m;
}

// 1 user -> 2 reply, 3 reply (regenerated); 3 -> 4 user -> 5 reply; 6 user (edit of 1) -> 7
MessageTreeIndex sample() {
  return MessageTreeIndex({msg(1, std::nullopt, StoredRole::User), msg(2, 1, StoredRole::Assistant),
                           msg(3, 1, StoredRole::Assistant), msg(4, 3, StoredRole::User),
                           msg(5, 4, StoredRole::Assistant), msg(6, std::nullopt, StoredRole::User),
                           msg(7, 6, StoredRole::Assistant)});
}

std::vector<int64_t> ids(const std::vector<MessageKey>& keys) {
  std::vector<int64_t> out;
  for (auto k : keys) out.push_back(k.value);
  return out;
}

TEST(MessageTreeIndex, PathToLeafRunsFromRoot) {
  EXPECT_EQ(ids(sample().path_to(MessageKey{5})), (std::vector<int64_t>{1, 3, 4, 5}));
  EXPECT_TRUE(sample().path_to(MessageKey{99}).empty());
}

TEST(MessageTreeIndex, SiblingsShareTheParentInCreationOrder) {
  EXPECT_EQ(ids(sample().siblings(MessageKey{3})), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ids(sample().siblings(MessageKey{6})), (std::vector<int64_t>{1, 6}));
  EXPECT_EQ(ids(sample().siblings(MessageKey{5})), (std::vector<int64_t>{5}));
}

TEST(MessageTreeIndex, NewestLeafFollowsNewestChildren) {
  EXPECT_EQ(sample().newest_leaf_below(MessageKey{1}).value, 5);
  EXPECT_EQ(sample().newest_leaf_below(MessageKey{2}).value, 2);
  EXPECT_EQ(sample().newest_leaf()->value, 7);
}

TEST(MessageTreeIndex, CycleInCorruptDataDoesNotHang) {
  MessageTreeIndex t({msg(1, 2, StoredRole::User), msg(2, 1, StoredRole::Assistant)});
  EXPECT_LE(t.path_to(MessageKey{1}).size(), 3u);
}

}  // namespace
}  // namespace hearth::ui
