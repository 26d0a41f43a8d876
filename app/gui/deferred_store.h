// A ConversationStore that opens the real one on its first call. The app hands it
// to the StorageExecutor, so opening the database (file checks, migrations,
// crash recovery) happens on the storage thread, not while the window starts.
#pragma once

#include <functional>
#include <memory>

#include "gui/store_factory.h"

namespace hearth::app {

class DeferredStore final : public ui::ConversationStore {
 public:
  using Open = std::function<OpenedStore()>;
  // Told, on the storage thread, how the open went (the window shows `problem`).
  using Opened = std::function<void(const OpenedStore& opened)>;

  DeferredStore(Open open, Opened opened) : open_(std::move(open)), opened_(std::move(opened)) {}

  Result<std::vector<ui::ConversationRecord>> list_conversations(ui::ArchiveFilter filter) override;
  Result<ui::ConversationRecord> create_conversation(const std::string& title) override;
  Status rename_conversation(ui::ConversationKey id, const std::string& title) override;
  Status set_pinned(ui::ConversationKey id, bool pinned) override;
  Status set_archived(ui::ConversationKey id, bool archived) override;
  Status delete_conversation(ui::ConversationKey id) override;
  Result<ui::ConversationRecord> get_conversation(ui::ConversationKey id) override;
  Status set_overflow_policy(ui::ConversationKey id, std::optional<ui::StoredOverflow> policy) override;
  Status set_reasoning(ui::ConversationKey id, const std::string& choice) override;
  Status set_model(ui::ConversationKey id, const std::string& model) override;
  Result<ui::MessageTree> load_messages(ui::ConversationKey id) override;
  Result<ui::MessageRecord> append_message(ui::ConversationKey id, std::optional<ui::MessageKey> parent,
                                           ui::StoredRole role, const std::string& content,
                                           ui::MessageState state) override;
  Status update_message(ui::MessageKey id, const std::string& content, ui::MessageState state,
                        const ui::ReplyFigures& figures,
                        const std::string& reasoning) override;
  Status set_active_leaf(ui::ConversationKey id, ui::MessageKey leaf) override;
  Result<std::vector<ui::SearchHit>> search(const std::string& query, int limit) override;
  Status add_context_event(const ui::ContextEventRecord& event) override;
  Result<std::vector<ui::ContextEventRecord>> context_events(ui::ConversationKey id) override;
  Result<std::string> export_conversations(ui::ArchiveFormat format,
                                           const std::vector<ui::ConversationKey>& which) override;
  Result<ui::ImportCounts> preview_import(const std::string& json) override;
  Result<ui::ImportOutcome> import_conversations(const std::string& json, ui::DuplicateChoice duplicates) override;
  storage::Database* database() override { return store().database(); }

 private:
  ui::ConversationStore& store();

  Open open_;
  Opened opened_;
  std::unique_ptr<ui::ConversationStore> store_;
};

}  // namespace hearth::app
