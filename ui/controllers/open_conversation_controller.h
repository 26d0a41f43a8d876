// The open conversation: which one it is, its messages (the path to the shown
// leaf), branch switching and its own overflow policy. Opening reads from
// storage on the storage thread; until the messages arrive the view still holds
// the previous conversation's, which `view_matches_current()` tells apart.
#pragma once

#include <QObject>
#include <QtQml/qqmlregistration.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "store/storage_executor.h"
#include "viewmodels/message_list_model.h"

namespace hearth::ui {

class ConversationListController;
class SettingsController;

class OpenConversationController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Created by the app")

  Q_PROPERTY(hearth::ui::MessageListModel* messages READ messages CONSTANT)
  Q_PROPERTY(qint64 currentConversationId READ currentConversationId NOTIFY currentChanged)
  Q_PROPERTY(QString currentTitle READ currentTitle NOTIFY currentChanged)
  // The open conversation's own overflow policy: "default" (follow the global
  // setting), "stop", "evict" or "summarize". With no conversation open, the choice
  // for the conversation the next message creates.
  Q_PROPERTY(QString conversationOverflow READ conversationOverflow NOTIFY overflowChanged)
  // The policy its next request uses: "stop", "evict" or "summarize".
  Q_PROPERTY(QString effectiveOverflow READ effectiveOverflow NOTIFY overflowChanged)
  // The global setting that "default" follows.
  Q_PROPERTY(QString defaultOverflow READ defaultOverflow NOTIFY overflowChanged)
  // The open conversation's reasoning switch: "default", "off", "on", "low",
  // "medium" or "high" (with no conversation open, the choice for the one the
  // next message creates). Shown only where the loaded model's template
  // offers a switch (ModelController::reasoningChoices).
  Q_PROPERTY(QString conversationReasoning READ conversationReasoning NOTIFY reasoningChanged)

 public:
  // A reply still streaming into `conversation`: its message, the answer and
  // the reasoning so far (more than storage holds yet), shown when the
  // conversation is opened.
  struct StreamingReply {
    MessageKey message;
    std::string text;
    std::string reasoning;
  };
  using StreamingText = std::function<std::optional<StreamingReply>(ConversationKey)>;
  // Whether the branch shown may change now (not while a reply streams).
  using CanSwitch = std::function<bool()>;

  OpenConversationController(StorageExecutor* storage, ConversationListController* list,
                             SettingsController* settings, QObject* parent = nullptr);

  void set_reply_hooks(StreamingText streaming, CanSwitch can_switch);

  MessageListModel* messages() { return &messages_; }
  MessageListModel& view() { return messages_; }
  qint64 currentConversationId() const { return current_ ? current_->value : -1; }
  std::optional<ConversationKey> current() const { return current_; }
  QString currentTitle() const;
  QString conversationOverflow() const;
  QString effectiveOverflow() const;
  QString defaultOverflow() const;
  std::optional<StoredOverflow> overflow() const { return current_overflow_; }
  QString conversationReasoning() const { return current_reasoning_; }
  // Bumped by every open and new conversation: a job started before the user
  // moved on checks it to know whether its result is still for the view.
  quint64 generation() const { return open_generation_; }
  // Does the message view hold the open conversation (or, for a new one, nothing)?
  bool view_matches_current() const { return shown_ == current_; }
  bool shows(ConversationKey id) const { return current_ && *current_ == id; }

  Q_INVOKABLE void newConversation();
  Q_INVOKABLE void openConversation(qint64 id);
  Q_INVOKABLE void switchBranch(qint64 message_id, int delta);
  // "default", "stop", "evict" or "summarize"; anything else is ignored. Stored with
  // the conversation; the next message uses it.
  Q_INVOKABLE void setConversationOverflow(const QString& policy);
  // "default", "off", "on", "low", "medium" or "high"; anything else is
  // ignored. Stored with the conversation; the next message uses it.
  Q_INVOKABLE void setConversationReasoning(const QString& choice);

  // The conversation the first message of a new one created is now open and shown
  // (its turn was just added to the view).
  void adopt_created(const ConversationRecord& created);

  static QString overflow_name(StoredOverflow policy);

 signals:
  void currentChanged();
  void overflowChanged();
  void reasoningChanged();
  // Another conversation (or a new one) is open: per-conversation figures reset.
  void opened();
  // The opened conversation last replied with this remote model (ConversationRecord::model).
  void remoteModelRemembered(const QString& modelPath);
  void errorOccurred(const QString& message);

 private:
  void set_current_overflow(std::optional<StoredOverflow> overflow);
  void set_current_reasoning(const QString& choice);

  StorageExecutor* storage_;
  ConversationListController* list_;
  SettingsController* settings_;
  StreamingText streaming_;
  CanSwitch can_switch_;
  MessageListModel messages_;
  std::optional<ConversationKey> current_;
  // The conversation whose messages messages_ holds; lags current_ while an open
  // is loading.
  std::optional<ConversationKey> shown_;
  // The open conversation's own overflow policy (or the pending choice for a new one).
  std::optional<StoredOverflow> current_overflow_;
  quint64 overflow_edits_ = 0;  // a stored value read before the user's last choice is stale
  QString current_reasoning_ = QStringLiteral("default");
  quint64 reasoning_edits_ = 0;  // likewise for the reasoning switch
  quint64 open_generation_ = 0;
};

}  // namespace hearth::ui
