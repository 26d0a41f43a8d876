// A ConversationStore that keeps everything in memory. Used by tests and
// screenshots, and by a build without the storage library (the window then
// says that conversations are not saved).
#pragma once

#include <map>

#include "store/conversation_store.h"

namespace hearth::ui {

class MemoryConversationStore final : public ConversationStore {
 public:
  Result<std::vector<ConversationRecord>> list_conversations(ArchiveFilter filter) override;
  Result<ConversationRecord> create_conversation(const std::string& title) override;
  Status rename_conversation(ConversationKey id, const std::string& title) override;
  Status set_pinned(ConversationKey id, bool pinned) override;
  Status set_archived(ConversationKey id, bool archived) override;
  Status delete_conversation(ConversationKey id) override;
  Result<ConversationRecord> get_conversation(ConversationKey id) override;
  Status set_overflow_policy(ConversationKey id, std::optional<StoredOverflow> policy) override;
  Status set_reasoning(ConversationKey id, const std::string& choice) override;
  Status set_model(ConversationKey id, const std::string& model) override;
  Result<MessageTree> load_messages(ConversationKey id) override;
  Result<MessageRecord> append_message(ConversationKey id, std::optional<MessageKey> parent,
                                       StoredRole role, const std::string& content,
                                       MessageState state) override;
  Status update_message(MessageKey id, const std::string& content, MessageState state,
                        const ReplyFigures& figures,
                        const std::string& reasoning) override;
  Status set_active_leaf(ConversationKey id, MessageKey leaf) override;
  Result<std::vector<SearchHit>> search(const std::string& query, int limit) override;
  Status add_context_event(const ContextEventRecord& event) override;
  Result<std::vector<ContextEventRecord>> context_events(ConversationKey id) override;
  Result<std::string> export_conversations(ArchiveFormat format,
                                           const std::vector<ConversationKey>& which) override;
  Result<ImportCounts> preview_import(const std::string& json) override;
  Result<ImportOutcome> import_conversations(const std::string& json, DuplicateChoice duplicates) override;

  // Tests set the clock so ordering by time is deterministic.
  void set_clock_ms(int64_t now_ms) { now_ms_ = now_ms; }

 private:
  struct Conversation {
    ConversationRecord record;
    std::optional<MessageKey> active_leaf;
  };
  Conversation* find(ConversationKey id);
  int64_t tick() { return ++now_ms_; }

  std::map<int64_t, Conversation> conversations_;
  std::vector<ContextEventRecord> context_events_;
  std::map<int64_t, MessageRecord> messages_;
  int64_t next_conversation_ = 1;
  int64_t next_message_ = 1;
  int64_t now_ms_ = 1'700'000'000'000;
};

}  // namespace hearth::ui
