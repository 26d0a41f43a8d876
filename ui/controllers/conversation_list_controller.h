// The sidebar: the list of conversations (active or archived), search over
// them, rename, pin, archive and delete with undo. Storage calls go through the
// StorageExecutor, so nothing here blocks the GUI thread.
#pragma once

#include <QObject>
#include <QTimer>
#include <QtQml/qqmlregistration.h>

#include <optional>

#include "store/storage_executor.h"
#include "viewmodels/conversation_list_model.h"
#include "viewmodels/search_results_model.h"

namespace hearth::ui {

class ConversationListController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Created by the app")

  Q_PROPERTY(hearth::ui::ConversationListModel* conversations READ conversations CONSTANT)
  Q_PROPERTY(hearth::ui::SearchResultsModel* searchResults READ searchResults CONSTANT)
  Q_PROPERTY(bool showArchived READ showArchived WRITE setShowArchived NOTIFY showArchivedChanged)
  Q_PROPERTY(QString searchQuery READ searchQuery WRITE setSearchQuery NOTIFY searchQueryChanged)
  Q_PROPERTY(QString pendingDeleteTitle READ pendingDeleteTitle NOTIFY pendingDeleteChanged)

 public:
  explicit ConversationListController(StorageExecutor* storage, QObject* parent = nullptr);
  ~ConversationListController() override;

  ConversationListModel* conversations() { return &conversations_; }
  const ConversationListModel& list() const { return conversations_; }
  SearchResultsModel* searchResults() { return &search_results_; }
  bool showArchived() const { return show_archived_; }
  void setShowArchived(bool show);
  QString searchQuery() const { return search_query_; }
  void setSearchQuery(const QString& query);
  QString pendingDeleteTitle() const;

  Q_INVOKABLE void refreshConversations();
  Q_INVOKABLE void renameConversation(qint64 id, const QString& title);
  Q_INVOKABLE void setPinned(qint64 id, bool pinned);
  Q_INVOKABLE void setArchived(qint64 id, bool archived);
  Q_INVOKABLE void deleteConversation(qint64 id);
  Q_INVOKABLE void undoDelete();

  // Performs a deferred delete now (at shutdown, or when a second delete comes).
  void commit_pending_delete();
  // A row changed or appeared (a new conversation, a new overflow choice).
  void upsert(const ConversationRecord& record) { conversations_.upsert(record); }
  // Marks a conversation as just used (it moves up the list).
  void touch(ConversationKey id);

 signals:
  void showArchivedChanged();
  void searchQueryChanged();
  void pendingDeleteChanged();
  // The list was read again or a title changed (the window title may follow).
  void listChanged();
  // A conversation left the list for good or for this side of the archive; the
  // open view and a reply streaming into it let go of it.
  void conversationDeleted(hearth::ui::ConversationKey id);
  void conversationHidden(hearth::ui::ConversationKey id);
  void errorOccurred(const QString& message);

 private:
  void run_search();

  StorageExecutor* storage_;
  ConversationListModel conversations_;
  SearchResultsModel search_results_;
  bool show_archived_ = false;
  QString search_query_;
  QTimer search_debounce_;
  quint64 search_generation_ = 0;
  std::optional<ConversationRecord> pending_delete_;
  QTimer delete_timer_;
};

}  // namespace hearth::ui
