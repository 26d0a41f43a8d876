#include "viewmodels/message_tree_index.h"

#include <algorithm>

namespace hearth::ui {

MessageTreeIndex::MessageTreeIndex(std::vector<MessageRecord> messages) {
  for (auto& m : messages) add(std::move(m));
}

void MessageTreeIndex::add(MessageRecord message) {
  const int64_t key = message.id.value;
  if (by_id_.find(key) == by_id_.end()) order_.push_back(message.id);
  by_id_[key] = std::move(message);
}

MessageRecord* MessageTreeIndex::find(MessageKey id) {
  auto it = by_id_.find(id.value);
  return it == by_id_.end() ? nullptr : &it->second;
}

const MessageRecord* MessageTreeIndex::find(MessageKey id) const {
  auto it = by_id_.find(id.value);
  return it == by_id_.end() ? nullptr : &it->second;
}

std::vector<MessageKey> MessageTreeIndex::path_to(MessageKey leaf) const {
  std::vector<MessageKey> path;
  const MessageRecord* node = find(leaf);
  // The bound guards against a corrupt tree with a cycle.
  while (node && path.size() <= order_.size()) {
    path.push_back(node->id);
    node = node->parent ? find(*node->parent) : nullptr;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

std::vector<MessageKey> MessageTreeIndex::children_of(std::optional<MessageKey> parent) const {
  std::vector<MessageKey> out;
  for (MessageKey id : order_) {
    const MessageRecord& m = by_id_.at(id.value);
    if (m.parent == parent) out.push_back(id);
  }
  return out;
}

std::vector<MessageKey> MessageTreeIndex::siblings(MessageKey id) const {
  const MessageRecord* node = find(id);
  if (!node) return {};
  return children_of(node->parent);
}

MessageKey MessageTreeIndex::newest_leaf_below(MessageKey from) const {
  MessageKey current = from;
  for (size_t guard = 0; guard <= order_.size(); ++guard) {
    const auto kids = children_of(current);
    if (kids.empty()) break;
    current = kids.back();
  }
  return current;
}

std::optional<MessageKey> MessageTreeIndex::newest_leaf() const {
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    if (children_of(*it).empty()) return *it;
  }
  return std::nullopt;
}

std::optional<MessageKey> MessageTreeIndex::opening_leaf(std::optional<MessageKey> active_leaf) const {
  if (active_leaf && find(*active_leaf)) return active_leaf;
  return newest_leaf();
}

}  // namespace hearth::ui
