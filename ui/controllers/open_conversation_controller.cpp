#include "controllers/open_conversation_controller.h"

#include <QStringList>

#include <algorithm>

#include "controllers/conversation_list_controller.h"
#include "controllers/settings_controller.h"
#include "engine/remote_model_path.h"

namespace hearth::ui {

OpenConversationController::OpenConversationController(StorageExecutor* storage, ConversationListController* list,
                                                       SettingsController* settings, QObject* parent)
    : QObject(parent), storage_(storage), list_(list), settings_(settings) {
  // "Use default (…)" shows the global setting, which the settings page may change.
  connect(settings_, &SettingsController::changed, this, &OpenConversationController::overflowChanged);
  // A renamed or re-read list may change the title.
  connect(list_, &ConversationListController::listChanged, this, &OpenConversationController::currentChanged);
  auto leave = [this](ConversationKey id) {
    if (shows(id)) newConversation();
  };
  connect(list_, &ConversationListController::conversationDeleted, this, leave);
  connect(list_, &ConversationListController::conversationHidden, this, leave);
}

void OpenConversationController::set_reply_hooks(StreamingText streaming, CanSwitch can_switch) {
  streaming_ = std::move(streaming);
  can_switch_ = std::move(can_switch);
}

QString OpenConversationController::overflow_name(StoredOverflow policy) {
  switch (policy) {
    case StoredOverflow::Stop: return QStringLiteral("stop");
    case StoredOverflow::Evict: return QStringLiteral("evict");
    case StoredOverflow::Summarize: return QStringLiteral("summarize");
  }
  return QStringLiteral("stop");
}

QString OpenConversationController::currentTitle() const {
  if (!current_) return tr("New conversation");
  if (auto rec = list_->list().get(*current_)) return QString::fromStdString(rec->title);
  return {};
}

QString OpenConversationController::conversationOverflow() const {
  return current_overflow_ ? overflow_name(*current_overflow_) : QStringLiteral("default");
}

QString OpenConversationController::effectiveOverflow() const {
  return current_overflow_ ? overflow_name(*current_overflow_) : defaultOverflow();
}

QString OpenConversationController::defaultOverflow() const {
  return QString::fromLatin1(settings::to_string(settings_->settings().overflow_policy));
}

void OpenConversationController::set_current_overflow(std::optional<StoredOverflow> overflow) {
  if (overflow == current_overflow_) return;
  current_overflow_ = overflow;
  emit overflowChanged();
}

void OpenConversationController::setConversationOverflow(const QString& policy) {
  std::optional<StoredOverflow> choice;
  if (policy == QLatin1String("stop")) {
    choice = StoredOverflow::Stop;
  } else if (policy == QLatin1String("evict")) {
    choice = StoredOverflow::Evict;
  } else if (policy == QLatin1String("summarize")) {
    choice = StoredOverflow::Summarize;
  } else if (policy != QLatin1String("default")) {
    return;
  }
  if (choice == current_overflow_) return;
  ++overflow_edits_;
  set_current_overflow(choice);
  // Without an open conversation the choice waits for the one the next message creates.
  if (!current_) return;
  const ConversationKey id = *current_;
  if (auto rec = list_->list().get(id)) {
    rec->overflow = choice;
    list_->upsert(*rec);
  }
  // Storage runs jobs in order, so the next message's request reads this choice.
  storage_->write([id, choice](ConversationStore& s) { return s.set_overflow_policy(id, choice); });
}

void OpenConversationController::set_current_reasoning(const QString& choice) {
  if (choice == current_reasoning_) return;
  current_reasoning_ = choice;
  emit reasoningChanged();
}

void OpenConversationController::setConversationReasoning(const QString& choice) {
  static const QStringList kChoices = {QStringLiteral("default"), QStringLiteral("off"),
                                       QStringLiteral("on"),      QStringLiteral("low"),
                                       QStringLiteral("medium"),  QStringLiteral("high")};
  if (!kChoices.contains(choice) || choice == current_reasoning_) return;
  ++reasoning_edits_;
  set_current_reasoning(choice);
  // Without an open conversation the choice waits for the one the next message creates.
  if (!current_) return;
  const ConversationKey id = *current_;
  if (auto rec = list_->list().get(id)) {
    rec->reasoning = choice.toStdString();
    list_->upsert(*rec);
  }
  // Storage runs jobs in order, so the next message's request reads this choice.
  storage_->write([id, stored = choice.toStdString()](ConversationStore& s) { return s.set_reasoning(id, stored); });
}

void OpenConversationController::newConversation() {
  ++open_generation_;
  current_.reset();
  set_current_overflow(std::nullopt);
  set_current_reasoning(QStringLiteral("default"));
  messages_.clear();
  shown_.reset();
  emit opened();
  emit currentChanged();
}

void OpenConversationController::openConversation(qint64 id) {
  const ConversationKey key{id};
  const quint64 generation = ++open_generation_;
  current_ = key;
  // The sidebar's record answers at once; storage has the last word (a conversation
  // opened from search may not be in the list).
  const auto listed = list_->list().get(key);
  set_current_overflow(listed ? listed->overflow : std::nullopt);
  set_current_reasoning(listed ? QString::fromStdString(listed->reasoning) : QStringLiteral("default"));
  emit opened();
  emit currentChanged();
  storage_->run([key](ConversationStore& s) { return s.get_conversation(key); }, this,
                [this, generation, edits = overflow_edits_, reasoning_edits = reasoning_edits_](
                    Result<ConversationRecord> rec) {
                  if (generation != open_generation_ || !rec.ok()) return;
                  if (edits == overflow_edits_) set_current_overflow(rec.value().overflow);
                  if (reasoning_edits == reasoning_edits_) {
                    set_current_reasoning(QString::fromStdString(rec.value().reasoning));
                  }
                  const QString model = QString::fromStdString(rec.value().model);
                  if (is_remote_model_path(model)) emit remoteModelRemembered(model);
                });
  storage_->run([key](ConversationStore& s) { return s.load_messages(key); }, this,
                [this, key, generation](Result<MessageTree> tree) {
                  if (generation != open_generation_) return;  // the user moved on
                  if (!tree.ok()) {
                    emit errorOccurred(tr("Could not open the conversation: %1")
                                           .arg(QString::fromStdString(tree.error().message)));
                    return;
                  }
                  MessageTree t = std::move(tree).value();
                  // A reply still streaming holds more text in memory than on disk.
                  if (auto streaming = streaming_ ? streaming_(key) : std::nullopt) {
                    for (auto& m : t.messages) {
                      if (m.id != streaming->message) continue;
                      m.content = streaming->text;
                      m.reasoning = streaming->reasoning;
                    }
                  }
                  messages_.reset(std::move(t));
                  shown_ = key;
                });
}

void OpenConversationController::adopt_created(const ConversationRecord& created) {
  current_ = created.id;
  shown_ = current_;  // the view held nothing and now shows the new turn
  emit currentChanged();
}

void OpenConversationController::switchBranch(qint64 message_id, int delta) {
  if ((can_switch_ && !can_switch_()) || !view_matches_current()) return;
  const MessageKey key{message_id};
  const auto siblings = messages_.tree().siblings(key);
  const auto it = std::find(siblings.begin(), siblings.end(), key);
  if (it == siblings.end()) return;
  const auto index = (it - siblings.begin()) + delta;
  if (index < 0 || index >= static_cast<long>(siblings.size())) return;
  const MessageKey leaf = messages_.tree().newest_leaf_below(siblings[static_cast<size_t>(index)]);
  messages_.show_leaf(leaf);
  if (current_) {
    const ConversationKey conversation = *current_;
    storage_->write([conversation, leaf](ConversationStore& s) { return s.set_active_leaf(conversation, leaf); });
  }
}

}  // namespace hearth::ui
