// Conversations: create, list (pinned first, most recently updated next), edit, delete.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "hearth/core/result.h"
#include "hearth/storage/database.h"
#include "hearth/storage/types.h"

namespace hearth::storage {

enum class ArchiveFilter { NotArchived, ArchivedOnly, All };

struct ConversationPage {
  ArchiveFilter filter = ArchiveFilter::NotArchived;
  std::int64_t limit = 50;
  std::int64_t offset = 0;
};

class Conversations {
 public:
  explicit Conversations(Database& db) : db_(db) {}

  Result<ConversationId> create(const NewConversation& conversation);
  Result<Conversation> get(ConversationId id);
  // Pinned first, then by updated_ms descending (newest first), then id descending.
  Result<std::vector<Conversation>> list(const ConversationPage& page);
  Result<std::int64_t> count(ArchiveFilter filter);

  Status rename(ConversationId id, std::string_view title);
  Status set_system_prompt(ConversationId id, std::string_view system_prompt);
  Status set_model(ConversationId id, std::string_view model_file, std::string_view model_quant);
  Status set_settings(ConversationId id, const ConversationSettings& settings);
  // The conversation's reasoning switch; like set_settings it counts as an edit.
  Status set_reasoning(ConversationId id, ReasoningSetting reasoning);
  Status set_pinned(ConversationId id, Pinned pinned);
  Status set_archived(ConversationId id, Archived archived);
  // Deletes the conversation with all its messages and context events.
  Status remove(ConversationId id);

 private:
  Database& db_;
};

}  // namespace hearth::storage
