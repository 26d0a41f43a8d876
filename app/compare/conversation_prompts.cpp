#include "compare/conversation_prompts.h"

#include <hearth/core/text_length.h>

#include <algorithm>
#include <unordered_map>

namespace hearth::compare {
namespace {

// The messages from the first one to the active leaf (the last message when
// the tree names none), in order.
std::vector<const ui::MessageRecord*> active_branch(const ui::MessageTree& tree) {
  std::vector<const ui::MessageRecord*> path;
  if (tree.messages.empty()) return path;
  std::unordered_map<int64_t, const ui::MessageRecord*> by_id;
  for (const auto& m : tree.messages) by_id[m.id.value] = &m;
  const ui::MessageRecord* at = &tree.messages.back();
  if (tree.active_leaf) {
    if (auto it = by_id.find(tree.active_leaf->value); it != by_id.end()) at = it->second;
  }
  // A stored tree has no cycles, but the walk is bounded all the same.
  while (at && path.size() <= tree.messages.size()) {
    path.push_back(at);
    if (!at->parent) break;
    auto it = by_id.find(at->parent->value);
    at = it == by_id.end() ? nullptr : it->second;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

bool blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); });
}

}  // namespace

ConversationPrompts prompts_from_conversations(const std::vector<ConversationSource>& conversations,
                                               size_t max_prompts, size_t max_chars) {
  ConversationPrompts out;
  for (const auto& c : conversations) {
    for (const auto* m : active_branch(c.messages)) {
      if (out.prompts.prompts.size() >= max_prompts) return out;
      if (m->role != ui::StoredRole::User || blank(m->content)) continue;
      if (character_count(m->content) > max_chars) {  // a non-English question is not cut sooner
        ++out.skipped_long;
        continue;
      }
      out.prompts.prompts.push_back(m->content);
      out.prompts.categories.push_back(c.title);
    }
  }
  return out;
}

}  // namespace hearth::compare
