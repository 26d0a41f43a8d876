// Forwarding wrappers around the real conversation store and the real chat
// engine that count how many of their calls ran on the GUI thread. The GUI
// must never block on a query or on the engine, which "no call ran on the GUI
// thread" states deterministically (unlike a stall measured in milliseconds).
#pragma once

#include <QCoreApplication>
#include <QThread>

#include <atomic>
#include <memory>
#include <mutex>
#include <utility>

#include "engine_service/chat_engine.h"
#include "store/conversation_store.h"

namespace hearth::app {

struct ThreadTally {
  std::atomic<int> calls{0};
  std::atomic<int> on_gui_thread{0};
  // The last generation request's last turn, as the engine received it.
  std::mutex last_turn_mutex;
  QString last_turn;

  void note() {
    ++calls;
    if (QThread::currentThread() == QCoreApplication::instance()->thread()) ++on_gui_thread;
  }
};

class ThreadRecordingStore final : public ui::ConversationStore {
 public:
  ThreadRecordingStore(std::unique_ptr<ui::ConversationStore> inner, std::shared_ptr<ThreadTally> tally)
      : inner_(std::move(inner)), tally_(std::move(tally)) {}

  Result<std::vector<ui::ConversationRecord>> list_conversations(ui::ArchiveFilter filter) override {
    tally_->note();
    return inner_->list_conversations(filter);
  }
  Result<ui::ConversationRecord> create_conversation(const std::string& title) override {
    tally_->note();
    return inner_->create_conversation(title);
  }
  Status rename_conversation(ui::ConversationKey id, const std::string& title) override {
    tally_->note();
    return inner_->rename_conversation(id, title);
  }
  Status set_pinned(ui::ConversationKey id, bool pinned) override {
    tally_->note();
    return inner_->set_pinned(id, pinned);
  }
  Status set_archived(ui::ConversationKey id, bool archived) override {
    tally_->note();
    return inner_->set_archived(id, archived);
  }
  Status delete_conversation(ui::ConversationKey id) override {
    tally_->note();
    return inner_->delete_conversation(id);
  }
  Result<ui::ConversationRecord> get_conversation(ui::ConversationKey id) override {
    tally_->note();
    return inner_->get_conversation(id);
  }
  Status set_overflow_policy(ui::ConversationKey id, std::optional<ui::StoredOverflow> policy) override {
    tally_->note();
    return inner_->set_overflow_policy(id, policy);
  }
  Status set_reasoning(ui::ConversationKey id, const std::string& choice) override {
    tally_->note();
    return inner_->set_reasoning(id, choice);
  }
  Status set_model(ui::ConversationKey id, const std::string& model) override {
    tally_->note();
    return inner_->set_model(id, model);
  }
  Result<ui::MessageTree> load_messages(ui::ConversationKey id) override {
    tally_->note();
    return inner_->load_messages(id);
  }
  Result<ui::MessageRecord> append_message(ui::ConversationKey id, std::optional<ui::MessageKey> parent,
                                           ui::StoredRole role, const std::string& content,
                                           ui::MessageState state) override {
    tally_->note();
    return inner_->append_message(id, parent, role, content, state);
  }
  Status update_message(ui::MessageKey id, const std::string& content, ui::MessageState state,
                        const ui::ReplyFigures& figures, const std::string& reasoning) override {
    tally_->note();
    return inner_->update_message(id, content, state, figures, reasoning);
  }
  Status set_active_leaf(ui::ConversationKey id, ui::MessageKey leaf) override {
    tally_->note();
    return inner_->set_active_leaf(id, leaf);
  }
  Result<std::vector<ui::SearchHit>> search(const std::string& query, int limit) override {
    tally_->note();
    return inner_->search(query, limit);
  }
  Status add_context_event(const ui::ContextEventRecord& event) override {
    tally_->note();
    return inner_->add_context_event(event);
  }
  Result<std::vector<ui::ContextEventRecord>> context_events(ui::ConversationKey id) override {
    tally_->note();
    return inner_->context_events(id);
  }
  Result<std::string> export_conversations(ui::ArchiveFormat format,
                                           const std::vector<ui::ConversationKey>& which) override {
    tally_->note();
    return inner_->export_conversations(format, which);
  }
  Result<ui::ImportCounts> preview_import(const std::string& json) override {
    tally_->note();
    return inner_->preview_import(json);
  }
  Result<ui::ImportOutcome> import_conversations(const std::string& json, ui::DuplicateChoice duplicates) override {
    tally_->note();
    return inner_->import_conversations(json, duplicates);
  }
  storage::Database* database() override {
    tally_->note();
    return inner_->database();
  }

 private:
  std::unique_ptr<ui::ConversationStore> inner_;
  std::shared_ptr<ThreadTally> tally_;
};

class ThreadRecordingEngine final : public ChatEngine {
 public:
  ThreadRecordingEngine(std::unique_ptr<ChatEngine> inner, std::shared_ptr<ThreadTally> tally)
      : inner_(std::move(inner)), tally_(std::move(tally)) {}

  Result<ui::ModelInfo> load(const ui::LoadRequest& request, const ProgressFn& progress,
                             const CancelledFn& cancelled) override {
    tally_->note();
    return inner_->load(request, progress, cancelled);
  }
  void unload() override {
    tally_->note();
    inner_->unload();
  }
  Result<ui::GenerationStats> generate(const ui::GenerationRequest& request, const PieceFn& on_piece,
                                       const PieceFn& on_reasoning, const ContextEventFn& on_event,
                                       const CancelledFn& cancelled) override {
    tally_->note();
    if (!request.turns.isEmpty()) {
      std::lock_guard lock(tally_->last_turn_mutex);
      tally_->last_turn = request.turns.last().text;
    }
    return inner_->generate(request, on_piece, on_reasoning, on_event, cancelled);
  }
  bool has_background_work() const override { return inner_->has_background_work(); }
  Status background_step(const ContextEventFn& on_event) override {
    tally_->note();
    return inner_->background_step(on_event);
  }
  ui::LocalApiStatus configure_local_api(const ui::LocalApiRequest& request) override {
    tally_->note();
    return inner_->configure_local_api(request);
  }
  // Any thread (the client polls it), so not tallied.
  ui::LocalApiStatus local_api_status() const override { return inner_->local_api_status(); }

 private:
  std::unique_ptr<ChatEngine> inner_;
  std::shared_ptr<ThreadTally> tally_;
};

}  // namespace hearth::app
