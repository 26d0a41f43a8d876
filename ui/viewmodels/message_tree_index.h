// Navigation over a conversation's message tree: the visible path from the root
// to the active leaf, each message's siblings (the branches `< 2/3 >` switches
// between) and the leaf a branch switch lands on.
#pragma once

#include <optional>
#include <unordered_map>
#include <vector>

#include "store/conversation_store.h"

namespace hearth::ui {

class MessageTreeIndex {
 public:
  MessageTreeIndex() = default;
  explicit MessageTreeIndex(std::vector<MessageRecord> messages);

  void add(MessageRecord message);
  MessageRecord* find(MessageKey id);
  const MessageRecord* find(MessageKey id) const;

  // Root-to-leaf path ending at `leaf`; empty if `leaf` is unknown.
  std::vector<MessageKey> path_to(MessageKey leaf) const;
  // Children of the same parent as `id` (including `id`) in creation order.
  std::vector<MessageKey> siblings(MessageKey id) const;
  // Follows the most recently created child from `from` down to a leaf.
  MessageKey newest_leaf_below(MessageKey from) const;
  // The most recently created message without children (the default leaf).
  std::optional<MessageKey> newest_leaf() const;
  // The leaf a conversation opens on: its stored active leaf when that is one of
  // its messages, else the newest leaf.
  std::optional<MessageKey> opening_leaf(std::optional<MessageKey> active_leaf) const;

  size_t size() const { return order_.size(); }

 private:
  std::vector<MessageKey> children_of(std::optional<MessageKey> parent) const;

  std::vector<MessageKey> order_;  // creation order
  std::unordered_map<int64_t, MessageRecord> by_id_;
};

}  // namespace hearth::ui
