// ConversationStore over the storage library's SQLite database. Lives on the
// storage thread (the database's single writer).
#pragma once

#include <hearth/storage/database.h>

#include <filesystem>
#include <memory>

#include "store/conversation_store.h"

namespace hearth::ui {

class SqliteConversationStore final : public ConversationStore {
 public:
  // Opens (creating if needed) the database file; the open report says whether
  // replies were found interrupted by a crash.
  static Result<std::unique_ptr<SqliteConversationStore>> open(const std::filesystem::path& file);
  static Result<std::unique_ptr<SqliteConversationStore>> open_in_memory();

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

  storage::Database* database() override { return &db_; }

 private:
  explicit SqliteConversationStore(storage::Database db) : db_(std::move(db)) {}
  storage::Database db_;
};

}  // namespace hearth::ui
