// Messages form a tree per conversation. The conversation's active leaf selects the
// path the user sees; editing a message or regenerating a reply adds a sibling (a new
// branch) and moves the active leaf to it.
//
// Durability: a message that is complete when written (append, edit) and the end of
// a streamed reply are committed with Durability::Full before the call returns.
// Streaming updates commit with Durability::Normal in short transactions; call
// update_reply every ~250-500 ms while generating.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hearth/core/result.h"
#include "hearth/storage/database.h"
#include "hearth/storage/types.h"

namespace hearth::storage {

struct NewMessage {
  Role role = Role::User;
  std::string content;
  std::int64_t token_count = 0;
  std::string reasoning{};  // see Message::reasoning
  std::optional<double> reasoning_ms{};
};

// A streamed reply so far: replaces the stored answer, reasoning and figures.
struct ReplyProgress {
  std::string_view content{};
  std::int64_t token_count = 0;  // answer and reasoning tokens together
  std::string_view reasoning{};
  std::optional<double> reasoning_ms{};  // nullopt until the thinking has ended
};

// How a streamed reply ended. Like `content`, `reasoning` replaces what the
// updates stored.
struct ReplyEnd {
  MessageState state = MessageState::Complete;  // Complete, Interrupted or Error
  std::string content;
  std::int64_t token_count = 0;
  GenerationStats stats;
  std::string error_message;  // for MessageState::Error
  // Members added later carry {} so positional initializers written before them
  // stay warning-free.
  std::string reasoning{};
  std::optional<double> reasoning_ms{};
};

class Messages {
 public:
  explicit Messages(Database& db) : db_(db) {}

  // Adds a complete message as a child of `parent` (an invalid id makes a root) and
  // makes it the active leaf.
  Result<MessageId> append(ConversationId conversation, MessageId parent, const NewMessage& message);
  // Adds a sibling of `original` (same parent and role) holding `content` and no
  // reasoning: the edit starts a new branch, and the active leaf moves to it.
  Result<MessageId> edit(MessageId original, std::string_view content);

  Result<Message> get(MessageId id);
  // Root to active leaf; empty when the conversation has no messages.
  Result<std::vector<Message>> active_path(ConversationId conversation);
  // Every message of every branch, in creation (id) order.
  Result<std::vector<Message>> all(ConversationId conversation);
  Result<std::vector<MessageId>> roots(ConversationId conversation);
  Result<std::vector<MessageId>> children(MessageId parent);
  // The message and its siblings in creation order (for "< 2/3 >" branch pickers).
  Result<std::vector<MessageId>> siblings(MessageId id);

  // Makes the branch through `id` active: the active leaf becomes the newest leaf
  // under it (following the newest child at each level).
  Status switch_to(MessageId id);
  // Deletes `id` and every message below it. If the active leaf was among them, the
  // newest remaining sibling's branch becomes active, else the parent.
  Status delete_branch(MessageId id);

  // Streaming: begin_reply inserts an empty `streaming` message under `parent` and
  // makes it the active leaf; update_reply replaces its text; finish_reply ends it.
  Result<MessageId> begin_reply(ConversationId conversation, MessageId parent, Role role = Role::Assistant);
  // Replaces the answer text only; the stored reasoning stays as it is.
  Status update_reply(MessageId id, std::string_view content, std::int64_t token_count);
  Status update_reply(MessageId id, const ReplyProgress& progress);
  Status finish_reply(MessageId id, const ReplyEnd& end);

 private:
  Database& db_;
};

}  // namespace hearth::storage
