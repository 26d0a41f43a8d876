// What the main window's QML sees of chatting: one object that holds the three
// controllers doing the work and presents their properties under the names the
// views use. It has no logic of its own:
//   ConversationListController  the sidebar: list, search, rename, pin, archive, delete
//   OpenConversationController  the open conversation: open/new, messages, branches, overflow
//   ReplyController             send, regenerate, edit, stream, stop, persist, figures
// plus the last error any of them reported. New QML may use the three directly
// (`list`, `conversation`, `reply`).
#pragma once

#include <QObject>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include "controllers/conversation_list_controller.h"
#include "controllers/open_conversation_controller.h"
#include "controllers/reply_controller.h"

namespace hearth::ui {

class ModelController;
class SettingsController;

class ChatController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Created by the app")

  Q_PROPERTY(hearth::ui::ConversationListController* list READ list CONSTANT)
  Q_PROPERTY(hearth::ui::OpenConversationController* conversation READ conversation CONSTANT)
  Q_PROPERTY(hearth::ui::ReplyController* reply READ reply CONSTANT)

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
  Q_PROPERTY(double lastPauseMs READ lastPauseMs NOTIFY statsChanged)
  Q_PROPERTY(int contextUsed READ contextUsed NOTIFY statsChanged)
  Q_PROPERTY(int contextMax READ contextMax NOTIFY statsChanged)
  Q_PROPERTY(QVariantList contextMarkers READ contextMarkers NOTIFY statsChanged)
  Q_PROPERTY(QString lastSpeculation READ lastSpeculation NOTIFY statsChanged)
  // Of the context used, the last question's document sources (estimated tokens).
  Q_PROPERTY(int sourceTokens READ sourceTokens NOTIFY statsChanged)
  Q_PROPERTY(QString pendingDeleteTitle READ pendingDeleteTitle NOTIFY pendingDeleteChanged)
  Q_PROPERTY(QString lastError READ lastError NOTIFY lastErrorChanged)
  Q_PROPERTY(QString conversationOverflow READ conversationOverflow NOTIFY overflowChanged)
  Q_PROPERTY(QString effectiveOverflow READ effectiveOverflow NOTIFY overflowChanged)
  Q_PROPERTY(QString defaultOverflow READ defaultOverflow NOTIFY overflowChanged)
  Q_PROPERTY(QString conversationReasoning READ conversationReasoning NOTIFY reasoningChanged)

 public:
  ChatController(StorageExecutor* storage, EngineClient* engine, ModelController* model,
                 SettingsController* settings, QObject* parent = nullptr);
  ~ChatController() override;

  ConversationListController* list() const { return list_; }
  OpenConversationController* conversation() const { return open_; }
  ReplyController* reply() const { return reply_; }

  ConversationListModel* conversations() { return list_->conversations(); }
  SearchResultsModel* searchResults() { return list_->searchResults(); }
  MessageListModel* messages() { return open_->messages(); }
  qint64 currentConversationId() const { return open_->currentConversationId(); }
  QString currentTitle() const { return open_->currentTitle(); }
  bool showArchived() const { return list_->showArchived(); }
  void setShowArchived(bool show) { list_->setShowArchived(show); }
  QString searchQuery() const { return list_->searchQuery(); }
  void setSearchQuery(const QString& query) { list_->setSearchQuery(query); }
  bool generating() const { return reply_->generating(); }
  bool canSend() const { return reply_->canSend(); }
  QString composerHint() const { return reply_->composerHint(); }
  double lastTokensPerSecond() const { return reply_->lastTokensPerSecond(); }
  double lastTtftMs() const { return reply_->lastTtftMs(); }
  double lastPauseMs() const { return reply_->lastPauseMs(); }
  QString lastSpeculation() const { return reply_->lastSpeculation(); }
  int contextUsed() const { return reply_->contextUsed(); }
  int sourceTokens() const { return reply_->lastSourceTokens(); }
  int contextMax() const { return reply_->contextMax(); }
  QVariantList contextMarkers() const { return reply_->contextMarkers(); }
  QString pendingDeleteTitle() const { return list_->pendingDeleteTitle(); }
  QString lastError() const { return last_error_; }
  QString conversationOverflow() const { return open_->conversationOverflow(); }
  QString effectiveOverflow() const { return open_->effectiveOverflow(); }
  QString defaultOverflow() const { return open_->defaultOverflow(); }
  QString conversationReasoning() const { return open_->conversationReasoning(); }

  Q_INVOKABLE void refreshConversations() { list_->refreshConversations(); }
  Q_INVOKABLE void newConversation() { open_->newConversation(); }
  Q_INVOKABLE void openConversation(qint64 id) { open_->openConversation(id); }
  Q_INVOKABLE void renameConversation(qint64 id, const QString& title) { list_->renameConversation(id, title); }
  Q_INVOKABLE void setPinned(qint64 id, bool pinned) { list_->setPinned(id, pinned); }
  Q_INVOKABLE void setArchived(qint64 id, bool archived) { list_->setArchived(id, archived); }
  Q_INVOKABLE void deleteConversation(qint64 id) { list_->deleteConversation(id); }
  Q_INVOKABLE void undoDelete() { list_->undoDelete(); }
  Q_INVOKABLE void send(const QString& text) { reply_->send(text); }
  Q_INVOKABLE void stop() { reply_->stop(); }
  Q_INVOKABLE void regenerate(qint64 assistant_message_id) { reply_->regenerate(assistant_message_id); }
  Q_INVOKABLE void askLargeModel(qint64 assistant_message_id) { reply_->askLargeModel(assistant_message_id); }
  Q_INVOKABLE void editMessage(qint64 user_message_id, const QString& text) {
    reply_->editMessage(user_message_id, text);
  }
  Q_INVOKABLE void switchBranch(qint64 message_id, int delta) { open_->switchBranch(message_id, delta); }
  Q_INVOKABLE void copyText(const QString& text);
  Q_INVOKABLE void dismissError() { set_error(QString()); }
  Q_INVOKABLE void setConversationOverflow(const QString& policy) { open_->setConversationOverflow(policy); }
  Q_INVOKABLE void setConversationReasoning(const QString& choice) { open_->setConversationReasoning(choice); }

  // Performs a deferred delete now (at shutdown, or when a second delete comes).
  void commit_pending_delete() { list_->commit_pending_delete(); }

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
  void reasoningChanged();
  // A reply finished (tests and the status line listen).
  void replyFinished(qint64 message_id);

 private:
  void set_error(const QString& message);

  ConversationListController* list_;
  OpenConversationController* open_;
  ReplyController* reply_;
  QString last_error_;
};

}  // namespace hearth::ui
