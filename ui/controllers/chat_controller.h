// The main window's controller: conversations in the sidebar, the open
// conversation's messages, sending, streaming, stopping, regenerating,
// editing (branches), search and delete-with-undo. Storage calls go through
// the StorageExecutor and engine calls through the EngineClient, so nothing
// here blocks the GUI thread.
#pragma once

#include <QObject>
#include <QTimer>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include <map>
#include <optional>
#include <vector>
#include <string>

#include "engine/engine_client.h"
#include "viewmodels/conversation_list_model.h"
#include "viewmodels/message_list_model.h"
#include "viewmodels/search_results_model.h"
#include "store/storage_executor.h"

namespace hearth::ui {

class ModelController;
class SettingsController;

class ChatController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Created by the app")

  Q_PROPERTY(hearth::ui::ConversationListModel* conversations READ conversations CONSTANT)
  Q_PROPERTY(hearth::ui::SearchResultsModel* searchResults READ searchResults CONSTANT)
  Q_PROPERTY(hearth::ui::MessageListModel* messages READ messages CONSTANT)
  Q_PROPERTY(qint64 currentConversationId READ currentConversationId NOTIFY currentChanged)
  Q_PROPERTY(QString currentTitle READ currentTitle NOTIFY currentChanged)
  Q_PROPERTY(bool showArchived READ showArchived WRITE setShowArchived NOTIFY showArchivedChanged)
  Q_PROPERTY(QString searchQuery READ searchQuery WRITE setSearchQuery NOTIFY searchQueryChanged)
  Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
  Q_PROPERTY(bool canSend READ canSend NOTIFY composerChanged)
  Q_PROPERTY(QString composerHint READ composerHint NOTIFY composerChanged)
  Q_PROPERTY(double lastTokensPerSecond READ lastTokensPerSecond NOTIFY statsChanged)
  Q_PROPERTY(double lastTtftMs READ lastTtftMs NOTIFY statsChanged)
  // How long the last reply waited for background work (a summary step) to yield.
  Q_PROPERTY(double lastPauseMs READ lastPauseMs NOTIFY statsChanged)
  Q_PROPERTY(int contextUsed READ contextUsed NOTIFY statsChanged)
  Q_PROPERTY(int contextMax READ contextMax NOTIFY statsChanged)
  Q_PROPERTY(QVariantList contextMarkers READ contextMarkers NOTIFY statsChanged)
  Q_PROPERTY(QString pendingDeleteTitle READ pendingDeleteTitle NOTIFY pendingDeleteChanged)
  Q_PROPERTY(QString lastError READ lastError NOTIFY lastErrorChanged)
  // The open conversation's own overflow policy: "default" (follow the global
  // setting), "stop", "evict" or "summarize". With no conversation open, the choice
  // for the conversation the next message creates.
  Q_PROPERTY(QString conversationOverflow READ conversationOverflow NOTIFY overflowChanged)
  // The policy its next request uses: "stop", "evict" or "summarize".
  Q_PROPERTY(QString effectiveOverflow READ effectiveOverflow NOTIFY overflowChanged)
  // The global setting that "default" follows.
  Q_PROPERTY(QString defaultOverflow READ defaultOverflow NOTIFY overflowChanged)

 public:
  ChatController(StorageExecutor* storage, EngineClient* engine, ModelController* model,
                 SettingsController* settings, QObject* parent = nullptr);
  ~ChatController() override;

  ConversationListModel* conversations() { return &conversations_; }
  SearchResultsModel* searchResults() { return &search_results_; }
  MessageListModel* messages() { return &messages_; }
  qint64 currentConversationId() const { return current_ ? current_->value : -1; }
  QString currentTitle() const;
  bool showArchived() const { return show_archived_; }
  void setShowArchived(bool show);
  QString searchQuery() const { return search_query_; }
  void setSearchQuery(const QString& query);
  bool generating() const { return active_.has_value() || starting_; }
  bool canSend() const;
  QString composerHint() const;
  double lastTokensPerSecond() const { return last_stats_.tokens_per_second; }
  double lastTtftMs() const { return last_stats_.ttft_ms; }
  double lastPauseMs() const { return last_stats_.pause_ms; }
  int contextUsed() const { return last_stats_.context_used; }
  int contextMax() const;
  QVariantList contextMarkers() const { return markers_; }
  QString pendingDeleteTitle() const;
  QString lastError() const { return last_error_; }
  QString conversationOverflow() const;
  QString effectiveOverflow() const;
  QString defaultOverflow() const;

  Q_INVOKABLE void refreshConversations();
  Q_INVOKABLE void newConversation();
  Q_INVOKABLE void openConversation(qint64 id);
  Q_INVOKABLE void renameConversation(qint64 id, const QString& title);
  Q_INVOKABLE void setPinned(qint64 id, bool pinned);
  Q_INVOKABLE void setArchived(qint64 id, bool archived);
  Q_INVOKABLE void deleteConversation(qint64 id);
  Q_INVOKABLE void undoDelete();
  Q_INVOKABLE void send(const QString& text);
  Q_INVOKABLE void stop();
  Q_INVOKABLE void regenerate(qint64 assistant_message_id);
  Q_INVOKABLE void editMessage(qint64 user_message_id, const QString& text);
  Q_INVOKABLE void switchBranch(qint64 message_id, int delta);
  Q_INVOKABLE void copyText(const QString& text);
  Q_INVOKABLE void dismissError();
  // "default", "stop", "evict" or "summarize"; anything else is ignored. Stored with
  // the conversation; the next message uses it.
  Q_INVOKABLE void setConversationOverflow(const QString& policy);

  // Performs a deferred delete now (at shutdown, or when a second delete comes).
  void commit_pending_delete();

 signals:
  void currentChanged();
  void showArchivedChanged();
  void searchQueryChanged();
  void generatingChanged();
  void composerChanged();
  void statsChanged();
  void pendingDeleteChanged();
  void lastErrorChanged();
  void overflowChanged();
  // A reply finished (tests and the status line listen).
  void replyFinished(qint64 message_id);

 private:
  struct ActiveReply {
    RequestId request = 0;
    ConversationKey conversation;
    MessageKey message;
    std::string text;
    bool dirty = false;
  };

  // Where a new turn hangs: under a message the view shows, or under the leaf the
  // conversation opens on as stored (a send before the open conversation's
  // messages arrived: the view still holds another conversation's).
  enum class ParentFrom { View, StoredLeaf };
  void begin_reply(std::optional<MessageKey> parent, std::optional<QString> user_text,
                   ParentFrom from = ParentFrom::View);
  // Does the message view hold the open conversation (or, for a new one, nothing)?
  bool view_matches_current() const { return shown_ == current_; }
  void start_generation(ConversationKey conversation, MessageKey assistant,
                        std::optional<StoredOverflow> overflow,
                        const std::vector<MessageRecord>& history);
  void set_current_overflow(std::optional<StoredOverflow> overflow);
  void on_chunk(RequestId id, const QString& text);
  void on_finished(RequestId id, const GenerationStats& stats);
  void on_failed(RequestId id, const QString& message);
  void on_context_event(RequestId id, const ContextEvent& event);
  void persist_stream();
  void run_search();
  void set_error(const QString& message);
  void touch_conversation(ConversationKey id);
  bool shows(ConversationKey id) const;  // is `id` the open conversation?

  StorageExecutor* storage_;
  EngineClient* engine_;
  ModelController* model_;
  SettingsController* settings_;

  ConversationListModel conversations_;
  SearchResultsModel search_results_;
  MessageListModel messages_;

  std::optional<ConversationKey> current_;
  // The conversation whose messages messages_ holds; lags current_ while an open
  // is loading.
  std::optional<ConversationKey> shown_;
  // The open conversation's own overflow policy (or the pending choice for a new one).
  std::optional<StoredOverflow> current_overflow_;
  quint64 overflow_edits_ = 0;  // a stored value read before the user's last choice is stale
  bool show_archived_ = false;
  QString search_query_;
  QTimer search_debounce_;
  quint64 search_generation_ = 0;

  // The messages a request sent (nullopt for the system prompt), so context
  // events naming them by index can be stored; kept for the last few requests
  // because a background summary reports after its request finished.
  struct SentTurns {
    ConversationKey conversation;
    std::vector<std::optional<MessageKey>> messages;
  };
  std::map<RequestId, SentTurns> sent_;

  std::optional<ActiveReply> active_;
  bool starting_ = false;  // storage is writing the new turn; generation not started yet
  RequestId next_request_ = 1;
  QTimer persist_timer_;
  GenerationStats last_stats_;
  QVariantList markers_;

  std::optional<ConversationRecord> pending_delete_;
  QTimer delete_timer_;
  QString last_error_;
  quint64 open_generation_ = 0;
};

}  // namespace hearth::ui
