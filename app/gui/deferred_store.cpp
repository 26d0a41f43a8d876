#include "gui/deferred_store.h"

namespace hearth::app {

ui::ConversationStore& DeferredStore::store() {
  if (!store_) {
    OpenedStore opened = open_();
    if (opened_) opened_(opened);
    store_ = std::move(opened.store);
  }
  return *store_;
}

Result<std::vector<ui::ConversationRecord>> DeferredStore::list_conversations(ui::ArchiveFilter filter) {
  return store().list_conversations(filter);
}
Result<ui::ConversationRecord> DeferredStore::create_conversation(const std::string& title) {
  return store().create_conversation(title);
}
Status DeferredStore::rename_conversation(ui::ConversationKey id, const std::string& title) {
  return store().rename_conversation(id, title);
}
Status DeferredStore::set_pinned(ui::ConversationKey id, bool pinned) { return store().set_pinned(id, pinned); }
Status DeferredStore::set_archived(ui::ConversationKey id, bool archived) {
  return store().set_archived(id, archived);
}
Status DeferredStore::delete_conversation(ui::ConversationKey id) { return store().delete_conversation(id); }
Result<ui::ConversationRecord> DeferredStore::get_conversation(ui::ConversationKey id) {
  return store().get_conversation(id);
}
Status DeferredStore::set_overflow_policy(ui::ConversationKey id, std::optional<ui::StoredOverflow> policy) {
  return store().set_overflow_policy(id, policy);
}
Status DeferredStore::set_reasoning(ui::ConversationKey id, const std::string& choice) {
  return store().set_reasoning(id, choice);
}
Status DeferredStore::set_model(ui::ConversationKey id, const std::string& model) {
  return store().set_model(id, model);
}
Result<ui::MessageTree> DeferredStore::load_messages(ui::ConversationKey id) { return store().load_messages(id); }
Result<ui::MessageRecord> DeferredStore::append_message(ui::ConversationKey id, std::optional<ui::MessageKey> parent,
                                                        ui::StoredRole role, const std::string& content,
                                                        ui::MessageState state) {
  return store().append_message(id, parent, role, content, state);
}
Status DeferredStore::update_message(ui::MessageKey id, const std::string& content, ui::MessageState state,
                                     const ui::ReplyFigures& figures, const std::string& reasoning) {
  return store().update_message(id, content, state, figures, reasoning);
}
Status DeferredStore::set_active_leaf(ui::ConversationKey id, ui::MessageKey leaf) {
  return store().set_active_leaf(id, leaf);
}
Result<std::vector<ui::SearchHit>> DeferredStore::search(const std::string& query, int limit) {
  return store().search(query, limit);
}
Status DeferredStore::add_context_event(const ui::ContextEventRecord& event) {
  return store().add_context_event(event);
}
Result<std::vector<ui::ContextEventRecord>> DeferredStore::context_events(ui::ConversationKey id) {
  return store().context_events(id);
}
Result<std::string> DeferredStore::export_conversations(ui::ArchiveFormat format,
                                                        const std::vector<ui::ConversationKey>& which) {
  return store().export_conversations(format, which);
}
Result<ui::ImportCounts> DeferredStore::preview_import(const std::string& json) {
  return store().preview_import(json);
}
Result<ui::ImportOutcome> DeferredStore::import_conversations(const std::string& json,
                                                              ui::DuplicateChoice duplicates) {
  return store().import_conversations(json, duplicates);
}

}  // namespace hearth::app
