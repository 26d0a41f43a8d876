#include "controllers/chat_controller.h"

#include <QClipboard>
#include <QDateTime>
#include <QGuiApplication>
#include <QVariantMap>

#include "controllers/model_controller.h"
#include "controllers/settings_controller.h"
#include "viewmodels/message_tree_index.h"

namespace hearth::ui {
namespace {

// A streaming reply is written to the database this often, so a crash loses
// at most this much of it.
constexpr int kPersistIntervalMs = 400;
constexpr int kUndoDeleteMs = 8000;
constexpr int kSearchDebounceMs = 150;
constexpr int kSearchLimit = 50;
constexpr int kTitleChars = 48;

QString title_from(const QString& text) {
  QString line = text.simplified();
  if (line.size() > kTitleChars) line = line.left(kTitleChars - 1).trimmed() + QChar(0x2026);
  return line.isEmpty() ? QObject::tr("New conversation") : line;
}

ChatRole to_chat_role(StoredRole role) {
  switch (role) {
    case StoredRole::System: return ChatRole::System;
    case StoredRole::User: return ChatRole::User;
    case StoredRole::Assistant: return ChatRole::Assistant;
  }
  return ChatRole::User;
}

Sampling to_sampling(const settings::SamplingSettings& s) {
  Sampling out;
  out.temperature = s.temperature;
  out.top_k = s.top_k;
  out.top_p = s.top_p;
  out.min_p = s.min_p;
  out.repeat_penalty = s.repeat_penalty;
  out.seed = s.seed;
  return out;
}

// The names QML and the global setting use ("default" is QML's word for unset).
QString overflow_name(StoredOverflow policy) {
  switch (policy) {
    case StoredOverflow::Stop: return QStringLiteral("stop");
    case StoredOverflow::Evict: return QStringLiteral("evict");
    case StoredOverflow::Summarize: return QStringLiteral("summarize");
  }
  return QStringLiteral("stop");
}

struct NewTurn {
  ConversationRecord conversation;
  bool created = false;
  std::optional<MessageRecord> user;
  MessageRecord assistant;
  // The saved messages from the root down to the assistant's parent: what the
  // request sends, read from the store so it does not depend on what is open
  // when the job returns.
  std::vector<MessageRecord> history;
};

}  // namespace

ChatController::ChatController(StorageExecutor* storage, EngineClient* engine,
                               ModelController* model, SettingsController* settings,
                               QObject* parent)
    : QObject(parent), storage_(storage), engine_(engine), model_(model), settings_(settings) {
  search_debounce_.setSingleShot(true);
  search_debounce_.setInterval(kSearchDebounceMs);
  connect(&search_debounce_, &QTimer::timeout, this, &ChatController::run_search);

  persist_timer_.setInterval(kPersistIntervalMs);
  connect(&persist_timer_, &QTimer::timeout, this, &ChatController::persist_stream);

  delete_timer_.setSingleShot(true);
  delete_timer_.setInterval(kUndoDeleteMs);
  connect(&delete_timer_, &QTimer::timeout, this, &ChatController::commit_pending_delete);

  connect(engine_, &EngineClient::chunk, this, &ChatController::on_chunk);
  connect(engine_, &EngineClient::finished, this, &ChatController::on_finished);
  connect(engine_, &EngineClient::failed, this, &ChatController::on_failed);
  connect(engine_, &EngineClient::contextEvent, this, &ChatController::on_context_event);
  connect(model_, &ModelController::stateChanged, this, [this] {
    emit composerChanged();
    emit statsChanged();
  });
  // "Use default (…)" shows the global setting, which the settings page may change.
  connect(settings_, &SettingsController::changed, this, &ChatController::overflowChanged);
  connect(storage_, &StorageExecutor::writeFailed, this, [this](const QString& message) {
    set_error(tr("Could not save: %1").arg(message));
  });
}

ChatController::~ChatController() {
  if (active_) {
    persist_stream();
    engine_->cancel(active_->request);
  }
  commit_pending_delete();
}

QString ChatController::currentTitle() const {
  if (!current_) return tr("New conversation");
  if (auto rec = conversations_.get(*current_)) return QString::fromStdString(rec->title);
  return {};
}

QString ChatController::conversationOverflow() const {
  return current_overflow_ ? overflow_name(*current_overflow_) : QStringLiteral("default");
}

QString ChatController::effectiveOverflow() const {
  return current_overflow_ ? overflow_name(*current_overflow_) : defaultOverflow();
}

QString ChatController::defaultOverflow() const {
  return QString::fromLatin1(settings::to_string(settings_->settings().overflow_policy));
}

void ChatController::set_current_overflow(std::optional<StoredOverflow> overflow) {
  if (overflow == current_overflow_) return;
  current_overflow_ = overflow;
  emit overflowChanged();
}

void ChatController::setConversationOverflow(const QString& policy) {
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
  if (auto rec = conversations_.get(id)) {
    rec->overflow = choice;
    conversations_.upsert(*rec);
  }
  // Storage runs jobs in order, so the next message's request reads this choice.
  storage_->write([id, choice](ConversationStore& s) { return s.set_overflow_policy(id, choice); });
}

void ChatController::setShowArchived(bool show) {
  if (show == show_archived_) return;
  show_archived_ = show;
  emit showArchivedChanged();
  refreshConversations();
}

void ChatController::setSearchQuery(const QString& query) {
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

void ChatController::run_search() {
  const std::string query = search_query_.trimmed().toStdString();
  const quint64 generation = ++search_generation_;
  storage_->run([query](ConversationStore& s) { return s.search(query, kSearchLimit); }, this,
                [this, generation](Result<std::vector<SearchHit>> hits) {
                  if (generation != search_generation_) return;  // a newer query is on its way
                  if (!hits.ok()) {
                    set_error(tr("Search failed: %1")
                                  .arg(QString::fromStdString(hits.error().message)));
                    return;
                  }
                  search_results_.reset(std::move(hits).value());
                });
}

bool ChatController::canSend() const { return model_->ready() && !generating(); }

QString ChatController::composerHint() const {
  switch (model_->state()) {
    case ModelController::State::NoModel:
      return tr("No model loaded. Load the demo model or choose a model to start chatting.");
    case ModelController::State::Loading:
      return tr("Loading %1… %2%")
          .arg(model_->modelName().isEmpty() ? tr("the model") : model_->modelName())
          .arg(qRound(model_->progress() * 100));
    case ModelController::State::Failed:
      return tr("The model could not be loaded. Choose another model in Settings.");
    case ModelController::State::Ready: break;
  }
  if (generating()) return tr("Hearth is replying. Press Stop or Escape to interrupt.");
  return tr("Message %1 (Enter to send, Shift+Enter for a new line)").arg(model_->modelName());
}

int ChatController::contextMax() const {
  return last_stats_.context_max > 0 ? last_stats_.context_max : model_->contextMax();
}

QString ChatController::pendingDeleteTitle() const {
  return pending_delete_ ? QString::fromStdString(pending_delete_->title) : QString();
}

void ChatController::refreshConversations() {
  const ArchiveFilter filter = show_archived_ ? ArchiveFilter::ArchivedOnly : ArchiveFilter::ActiveOnly;
  storage_->run([filter](ConversationStore& s) { return s.list_conversations(filter); }, this,
                [this](Result<std::vector<ConversationRecord>> list) {
                  if (!list.ok()) {
                    set_error(tr("Could not read conversations: %1")
                                  .arg(QString::fromStdString(list.error().message)));
                    return;
                  }
                  std::vector<ConversationRecord> rows = std::move(list).value();
                  if (pending_delete_) {
                    std::erase_if(rows, [&](const ConversationRecord& r) {
                      return r.id == pending_delete_->id;
                    });
                  }
                  conversations_.reset(std::move(rows));
                  emit currentChanged();
                });
}

void ChatController::newConversation() {
  ++open_generation_;
  current_.reset();
  set_current_overflow(std::nullopt);
  messages_.clear();
  shown_.reset();
  last_stats_ = GenerationStats{};
  markers_.clear();
  emit currentChanged();
  emit statsChanged();
}

void ChatController::openConversation(qint64 id) {
  const ConversationKey key{id};
  const quint64 generation = ++open_generation_;
  current_ = key;
  last_stats_ = GenerationStats{};
  markers_.clear();
  // The sidebar's record answers at once; storage has the last word (a conversation
  // opened from search may not be in the list).
  const auto listed = conversations_.get(key);
  set_current_overflow(listed ? listed->overflow : std::nullopt);
  emit currentChanged();
  emit statsChanged();
  storage_->run([key](ConversationStore& s) { return s.get_conversation(key); }, this,
                [this, generation, edits = overflow_edits_](Result<ConversationRecord> rec) {
                  if (generation != open_generation_ || edits != overflow_edits_ || !rec.ok()) return;
                  set_current_overflow(rec.value().overflow);
                });
  storage_->run([key](ConversationStore& s) { return s.load_messages(key); }, this,
                [this, key, generation](Result<MessageTree> tree) {
                  if (generation != open_generation_) return;  // the user moved on
                  if (!tree.ok()) {
                    set_error(tr("Could not open the conversation: %1")
                                  .arg(QString::fromStdString(tree.error().message)));
                    return;
                  }
                  MessageTree t = std::move(tree).value();
                  // A reply still streaming holds more text in memory than on disk.
                  if (active_ && active_->conversation == key) {
                    for (auto& m : t.messages) {
                      if (m.id == active_->message) m.content = active_->text;
                    }
                  }
                  messages_.reset(std::move(t));
                  shown_ = key;
                });
}

void ChatController::renameConversation(qint64 id, const QString& title) {
  const QString clean = title.simplified();
  auto rec = conversations_.get(ConversationKey{id});
  if (clean.isEmpty() || !rec) return;
  rec->title = clean.toStdString();
  conversations_.upsert(*rec);
  const std::string stored = rec->title;
  storage_->write([id, stored](ConversationStore& s) {
    return s.rename_conversation(ConversationKey{id}, stored);
  });
  emit currentChanged();
}

void ChatController::setPinned(qint64 id, bool pinned) {
  auto rec = conversations_.get(ConversationKey{id});
  if (!rec) return;
  rec->pinned = pinned;
  conversations_.upsert(*rec);
  storage_->write([id, pinned](ConversationStore& s) { return s.set_pinned(ConversationKey{id}, pinned); });
}

void ChatController::setArchived(qint64 id, bool archived) {
  storage_->write(
      [id, archived](ConversationStore& s) { return s.set_archived(ConversationKey{id}, archived); });
  // The list shows one side of the archive at a time, so the row leaves it.
  if (archived != show_archived_) conversations_.take(ConversationKey{id});
  if (current_ && current_->value == id && archived != show_archived_) newConversation();
}

void ChatController::deleteConversation(qint64 id) {
  commit_pending_delete();
  auto rec = conversations_.take(ConversationKey{id});
  if (!rec) return;
  if (active_ && active_->conversation == rec->id) stop();
  if (current_ && *current_ == rec->id) newConversation();
  pending_delete_ = rec;
  delete_timer_.start();
  emit pendingDeleteChanged();
}

void ChatController::undoDelete() {
  if (!pending_delete_) return;
  delete_timer_.stop();
  conversations_.upsert(*pending_delete_);
  pending_delete_.reset();
  emit pendingDeleteChanged();
}

void ChatController::commit_pending_delete() {
  if (!pending_delete_) return;
  delete_timer_.stop();
  const ConversationKey id = pending_delete_->id;
  pending_delete_.reset();
  storage_->write([id](ConversationStore& s) { return s.delete_conversation(id); });
  emit pendingDeleteChanged();
}

void ChatController::send(const QString& text) {
  const QString trimmed = text.trimmed();
  if (trimmed.isEmpty() || !canSend()) return;
  if (view_matches_current()) {
    begin_reply(messages_.leaf(), trimmed);
  } else {
    begin_reply(std::nullopt, trimmed, ParentFrom::StoredLeaf);
  }
}

void ChatController::regenerate(qint64 assistant_message_id) {
  // Message ids come from the view; while an open loads it holds another conversation.
  if (!canSend() || !view_matches_current()) return;
  const MessageRecord* m = messages_.tree().find(MessageKey{assistant_message_id});
  if (!m || m->role != StoredRole::Assistant || !m->parent) return;
  begin_reply(m->parent, std::nullopt);
}

void ChatController::editMessage(qint64 user_message_id, const QString& text) {
  const QString trimmed = text.trimmed();
  if (trimmed.isEmpty() || !canSend() || !view_matches_current()) return;
  const MessageRecord* m = messages_.tree().find(MessageKey{user_message_id});
  if (!m || m->role != StoredRole::User) return;
  if (QString::fromStdString(m->content) == trimmed) return;
  // The edit becomes a sibling of the original: a new branch.
  begin_reply(m->parent, trimmed);
}

void ChatController::begin_reply(std::optional<MessageKey> parent, std::optional<QString> user_text,
                                 ParentFrom from) {
  starting_ = true;
  emit generatingChanged();
  emit composerChanged();
  const std::optional<ConversationKey> existing = current_;
  const std::string title = title_from(user_text.value_or(QString())).toStdString();
  const std::optional<std::string> user =
      user_text ? std::optional<std::string>(user_text->toStdString()) : std::nullopt;
  const quint64 generation = open_generation_;
  // A choice made before the conversation existed goes with it.
  const std::optional<StoredOverflow> pending_overflow = existing ? std::nullopt : current_overflow_;

  // One storage job: the user's message is committed before generation starts.
  storage_->run(
      [existing, title, user, parent, from, pending_overflow](ConversationStore& s) -> Result<NewTurn> {
        NewTurn turn;
        if (existing) {
          // Read back for its overflow policy: every request uses the stored choice.
          HEARTH_TRY(turn.conversation, s.get_conversation(*existing));
        } else {
          HEARTH_TRY(turn.conversation, s.create_conversation(title));
          turn.created = true;
          if (pending_overflow) {
            HEARTH_CHECK(s.set_overflow_policy(turn.conversation.id, pending_overflow));
            turn.conversation.overflow = pending_overflow;
          }
        }
        std::optional<MessageKey> turn_parent = parent;
        if (existing && from == ParentFrom::StoredLeaf) {
          // The same leaf the view will open on (MessageListModel::reset).
          HEARTH_TRY(MessageTree stored, s.load_messages(*existing));
          turn_parent = MessageTreeIndex(std::move(stored.messages)).opening_leaf(stored.active_leaf);
        }
        std::optional<MessageKey> reply_parent = turn_parent;
        if (user) {
          HEARTH_TRY(MessageRecord u, s.append_message(turn.conversation.id, turn_parent,
                                                       StoredRole::User, *user,
                                                       MessageState::Complete));
          reply_parent = u.id;
          turn.user = std::move(u);
        }
        HEARTH_TRY(turn.assistant, s.append_message(turn.conversation.id, reply_parent,
                                                    StoredRole::Assistant, std::string(),
                                                    MessageState::Streaming));
        HEARTH_TRY(MessageTree saved, s.load_messages(turn.conversation.id));
        const MessageTreeIndex index(std::move(saved.messages));
        for (MessageKey key : index.path_to(turn.assistant.id)) {
          if (key == turn.assistant.id) break;
          if (const MessageRecord* m = index.find(key)) turn.history.push_back(*m);
        }
        return turn;
      },
      this,
      [this, generation](Result<NewTurn> result) {
        starting_ = false;
        if (!result.ok()) {
          emit generatingChanged();
          emit composerChanged();
          set_error(tr("Could not save your message: %1")
                        .arg(QString::fromStdString(result.error().message)));
          return;
        }
        NewTurn turn = std::move(result).value();
        const bool visible = generation == open_generation_;
        if (turn.created) {
          // A choice made while the conversation was being created applies from its
          // next message on.
          if (visible && current_overflow_ != turn.conversation.overflow) {
            const ConversationKey id = turn.conversation.id;
            const std::optional<StoredOverflow> choice = current_overflow_;
            storage_->write([id, choice](ConversationStore& s) { return s.set_overflow_policy(id, choice); });
          }
          ConversationRecord listed = turn.conversation;
          if (visible) listed.overflow = current_overflow_;
          conversations_.upsert(listed);
          if (visible) {
            current_ = turn.conversation.id;
            shown_ = current_;  // the view held nothing and now shows the new turn
            emit currentChanged();
          }
        }
        touch_conversation(turn.conversation.id);
        if (visible) {
          if (turn.user) messages_.add_and_show(*turn.user);
          messages_.add_and_show(turn.assistant);
        }
        start_generation(turn.conversation.id, turn.assistant.id, turn.conversation.overflow,
                         turn.history);
      });
}

void ChatController::start_generation(ConversationKey conversation, MessageKey assistant,
                                      std::optional<StoredOverflow> overflow,
                                      const std::vector<MessageRecord>& history) {
  GenerationRequest request;
  SentTurns sent;
  sent.conversation = conversation;
  const settings::Settings& s = settings_->settings();
  if (!s.system_prompt.empty()) {
    request.turns.append({ChatRole::System, QString::fromStdString(s.system_prompt)});
    sent.messages.push_back(std::nullopt);
  }
  for (const MessageRecord& m : history) {
    request.turns.append({to_chat_role(m.role), QString::fromStdString(m.content)});
    sent.messages.push_back(m.id);
  }
  request.sampling = to_sampling(s.sampling);
  // The conversation's own policy when it has one, else the typed global setting.
  request.overflow_policy = overflow ? overflow_name(*overflow)
                                     : QString::fromLatin1(settings::to_string(s.overflow_policy));
  request.conversation_id = conversation.value;

  ActiveReply reply;
  reply.request = next_request_++;
  sent_[reply.request] = std::move(sent);
  while (sent_.size() > 4) sent_.erase(sent_.begin());
  reply.conversation = conversation;
  reply.message = assistant;
  active_ = std::move(reply);
  persist_timer_.start();
  emit generatingChanged();
  emit composerChanged();
  engine_->generate(active_->request, request);
}

void ChatController::on_chunk(RequestId id, const QString& text) {
  if (!active_ || active_->request != id) return;  // a stale request
  active_->text += text.toStdString();
  active_->dirty = true;
  // The reply belongs to the conversation it was sent in; another one may be open now.
  if (shows(active_->conversation)) messages_.append_text(active_->message, text);
}

void ChatController::persist_stream() {
  if (!active_ || !active_->dirty) return;
  active_->dirty = false;
  const MessageKey id = active_->message;
  const std::string text = active_->text;
  storage_->write([id, text](ConversationStore& s) {
    return s.update_message(id, text, MessageState::Streaming, ReplyFigures{});
  });
}

void ChatController::on_finished(RequestId id, const GenerationStats& stats) {
  if (!active_ || active_->request != id) return;
  persist_timer_.stop();
  ReplyFigures figures;
  figures.ttft_ms = stats.ttft_ms;
  figures.tokens_per_second = stats.tokens_per_second;
  figures.tokens = stats.generated_tokens;
  figures.backend = model_->backend().toStdString();
  const MessageKey message = active_->message;
  const std::string text = active_->text;
  storage_->write([message, text, figures](ConversationStore& s) {
    return s.update_message(message, text, MessageState::Complete, figures);
  });
  if (shows(active_->conversation)) messages_.set_state(message, MessageState::Complete, &figures);
  last_stats_ = stats;
  active_.reset();
  emit statsChanged();
  emit generatingChanged();
  emit composerChanged();
  emit replyFinished(message.value);
}

void ChatController::on_failed(RequestId id, const QString& message) {
  if (!active_ || active_->request != id) return;
  persist_timer_.stop();
  const MessageKey key = active_->message;
  const std::string text = active_->text;
  storage_->write([key, text](ConversationStore& s) {
    return s.update_message(key, text, MessageState::Error, ReplyFigures{});
  });
  if (shows(active_->conversation)) messages_.set_state(key, MessageState::Error);
  active_.reset();
  set_error(tr("The reply failed: %1").arg(message));
  emit generatingChanged();
  emit composerChanged();
}

void ChatController::on_context_event(RequestId id, const ContextEvent& event) {
  const auto sent = sent_.find(id);
  if (sent == sent_.end()) return;  // a request of an earlier session
  const ConversationKey conversation = sent->second.conversation;
  auto message_at = [&](int index) -> std::optional<MessageKey> {
    if (index < 0 || index >= static_cast<int>(sent->second.messages.size())) return std::nullopt;
    return sent->second.messages[static_cast<size_t>(index)];
  };
  ContextEventRecord record;
  record.conversation = conversation;
  record.kind = event.kind == ContextEvent::Kind::Summarized ? ContextEventKind::Summarized
                                                             : ContextEventKind::Dropped;
  record.first_message = message_at(event.first_message);
  record.last_message = message_at(event.last_message);
  record.tokens_removed = event.tokens_freed;
  record.summary = event.summary.toStdString();
  storage_->write([record](ConversationStore& store) { return store.add_context_event(record); });

  if (!current_ || !(*current_ == conversation)) return;  // stored; shown when that conversation is open
  QVariantMap marker;
  const int max = std::max(1, contextMax());
  marker[QStringLiteral("position")] = std::clamp(double(event.at_token) / max, 0.0, 1.0);
  marker[QStringLiteral("kind")] = event.kind == ContextEvent::Kind::Summarized
                                       ? QStringLiteral("summarized")
                                       : QStringLiteral("dropped");
  marker[QStringLiteral("text")] =
      event.kind == ContextEvent::Kind::Summarized
          ? tr("%n earlier turn(s) summarized: %1", nullptr, event.turns).arg(event.summary)
          : tr("%n earlier turn(s) dropped to make room", nullptr, event.turns);
  markers_.append(marker);
  emit statsChanged();
}

void ChatController::stop() {
  if (active_) engine_->cancel(active_->request);
}

void ChatController::switchBranch(qint64 message_id, int delta) {
  if (generating() || !view_matches_current()) return;
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
    storage_->write([conversation, leaf](ConversationStore& s) {
      return s.set_active_leaf(conversation, leaf);
    });
  }
}

void ChatController::copyText(const QString& text) {
  if (auto* clipboard = QGuiApplication::clipboard()) clipboard->setText(text);
}

void ChatController::dismissError() { set_error(QString()); }

void ChatController::set_error(const QString& message) {
  last_error_ = message;
  emit lastErrorChanged();
}

bool ChatController::shows(ConversationKey id) const { return current_ && *current_ == id; }

void ChatController::touch_conversation(ConversationKey id) {
  if (auto rec = conversations_.get(id)) {
    rec->updated_ms = QDateTime::currentMSecsSinceEpoch();
    conversations_.upsert(*rec);
  }
}

}  // namespace hearth::ui
