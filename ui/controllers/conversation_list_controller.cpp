#include "controllers/conversation_list_controller.h"

#include <QDateTime>

namespace hearth::ui {
namespace {

constexpr int kUndoDeleteMs = 8000;
constexpr int kSearchDebounceMs = 150;
constexpr int kSearchLimit = 50;

}  // namespace

ConversationListController::ConversationListController(StorageExecutor* storage, QObject* parent)
    : QObject(parent), storage_(storage) {
  search_debounce_.setSingleShot(true);
  search_debounce_.setInterval(kSearchDebounceMs);
  connect(&search_debounce_, &QTimer::timeout, this, &ConversationListController::run_search);
  delete_timer_.setSingleShot(true);
  delete_timer_.setInterval(kUndoDeleteMs);
  connect(&delete_timer_, &QTimer::timeout, this, &ConversationListController::commit_pending_delete);
}

ConversationListController::~ConversationListController() { commit_pending_delete(); }

void ConversationListController::setShowArchived(bool show) {
  if (show == show_archived_) return;
  show_archived_ = show;
  emit showArchivedChanged();
  refreshConversations();
}

void ConversationListController::setSearchQuery(const QString& query) {
  if (query == search_query_) return;
  search_query_ = query;
  emit searchQueryChanged();
  if (query.trimmed().isEmpty()) {
    ++search_generation_;
    search_results_.reset({});
  } else {
    search_debounce_.start();
  }
}

void ConversationListController::run_search() {
  const std::string query = search_query_.trimmed().toStdString();
  const quint64 generation = ++search_generation_;
  storage_->run([query](ConversationStore& s) { return s.search(query, kSearchLimit); }, this,
                [this, generation](Result<std::vector<SearchHit>> hits) {
                  if (generation != search_generation_) return;  // a newer query is on its way
                  if (!hits.ok()) {
                    emit errorOccurred(tr("Search failed: %1").arg(QString::fromStdString(hits.error().message)));
                    return;
                  }
                  search_results_.reset(std::move(hits).value());
                });
}

QString ConversationListController::pendingDeleteTitle() const {
  return pending_delete_ ? QString::fromStdString(pending_delete_->title) : QString();
}

void ConversationListController::refreshConversations() {
  const ArchiveFilter filter = show_archived_ ? ArchiveFilter::ArchivedOnly : ArchiveFilter::ActiveOnly;
  storage_->run([filter](ConversationStore& s) { return s.list_conversations(filter); }, this,
                [this](Result<std::vector<ConversationRecord>> list) {
                  if (!list.ok()) {
                    emit errorOccurred(tr("Could not read conversations: %1")
                                           .arg(QString::fromStdString(list.error().message)));
                    return;
                  }
                  std::vector<ConversationRecord> rows = std::move(list).value();
                  if (pending_delete_) {
                    std::erase_if(rows, [&](const ConversationRecord& r) { return r.id == pending_delete_->id; });
                  }
                  conversations_.reset(std::move(rows));
                  emit listChanged();
                });
}

void ConversationListController::renameConversation(qint64 id, const QString& title) {
  const QString clean = title.simplified();
  auto rec = conversations_.get(ConversationKey{id});
  if (clean.isEmpty() || !rec) return;
  rec->title = clean.toStdString();
  conversations_.upsert(*rec);
  const std::string stored = rec->title;
  storage_->write([id, stored](ConversationStore& s) { return s.rename_conversation(ConversationKey{id}, stored); });
  emit listChanged();
}

void ConversationListController::setPinned(qint64 id, bool pinned) {
  auto rec = conversations_.get(ConversationKey{id});
  if (!rec) return;
  rec->pinned = pinned;
  conversations_.upsert(*rec);
  storage_->write([id, pinned](ConversationStore& s) { return s.set_pinned(ConversationKey{id}, pinned); });
}

void ConversationListController::setArchived(qint64 id, bool archived) {
  storage_->write([id, archived](ConversationStore& s) { return s.set_archived(ConversationKey{id}, archived); });
  // The list shows one side of the archive at a time, so the row leaves it.
  if (archived != show_archived_) {
    conversations_.take(ConversationKey{id});
    emit conversationHidden(ConversationKey{id});
  }
}

void ConversationListController::deleteConversation(qint64 id) {
  commit_pending_delete();
  auto rec = conversations_.take(ConversationKey{id});
  if (!rec) return;
  emit conversationDeleted(rec->id);
  pending_delete_ = rec;
  delete_timer_.start();
  emit pendingDeleteChanged();
}

void ConversationListController::undoDelete() {
  if (!pending_delete_) return;
  delete_timer_.stop();
  conversations_.upsert(*pending_delete_);
  pending_delete_.reset();
  emit pendingDeleteChanged();
}

void ConversationListController::commit_pending_delete() {
  if (!pending_delete_) return;
  delete_timer_.stop();
  const ConversationKey id = pending_delete_->id;
  pending_delete_.reset();
  storage_->write([id](ConversationStore& s) { return s.delete_conversation(id); });
  emit pendingDeleteChanged();
}

void ConversationListController::touch(ConversationKey id) {
  if (auto rec = conversations_.get(id)) {
    rec->updated_ms = QDateTime::currentMSecsSinceEpoch();
    conversations_.upsert(*rec);
  }
}

}  // namespace hearth::ui
