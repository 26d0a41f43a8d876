#include "controllers/reply_controller.h"

#include <QVariantMap>

#include <algorithm>
#include <string_view>

#include "controllers/conversation_list_controller.h"
#include "controllers/model_controller.h"
#include "controllers/open_conversation_controller.h"
#include "controllers/settings_controller.h"
#include "engine/remote_model_path.h"
#include "viewmodels/message_tree_index.h"

namespace hearth::ui {
namespace {

// A streaming reply is written to the database this often, so a crash loses
// at most this much of it.
constexpr int kPersistIntervalMs = 400;
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

struct NewTurn {
  ConversationRecord conversation;
  bool created = false;
  std::optional<MessageRecord> user;
  MessageRecord assistant;
  // The saved messages from the root down to the assistant's parent: what the
  // request sends, read from the store so it does not depend on what is open
  // when the job returns.
  std::vector<MessageRecord> history;
  // The last user message with its sources from attached documents, if any.
  std::optional<Grounding> grounding;
};

// The share of the context document sources may take: a third of it, at most
// the user's setting.
std::int64_t source_budget(const settings::Settings& s) {
  return std::min<std::int64_t>(s.documents.source_budget_tokens, s.load.context_length / 3);
}

}  // namespace

ReplyController::ReplyController(StorageExecutor* storage, EngineClient* engine, ModelController* model,
                                 SettingsController* settings, ConversationListController* list,
                                 OpenConversationController* open, QObject* parent)
    : QObject(parent),
      storage_(storage),
      engine_(engine),
      model_(model),
      settings_(settings),
      list_(list),
      open_(open) {
  persist_timer_.setInterval(kPersistIntervalMs);
  connect(&persist_timer_, &QTimer::timeout, this, &ReplyController::persist_stream);
  connect(engine_, &EngineClient::chunk, this, &ReplyController::on_chunk);
  connect(engine_, &EngineClient::reasoningChunk, this, &ReplyController::on_reasoning_chunk);
  connect(engine_, &EngineClient::finished, this, &ReplyController::on_finished);
  connect(engine_, &EngineClient::failed, this, &ReplyController::on_failed);
  connect(engine_, &EngineClient::contextEvent, this, &ReplyController::on_context_event);
  connect(model_, &ModelController::stateChanged, this, [this] {
    emit composerChanged();
    emit statsChanged();
  });
  // Figures and markers belong to the conversation they were made in.
  connect(open_, &OpenConversationController::opened, this, &ReplyController::clear_figures);
  connect(list_, &ConversationListController::conversationDeleted, this, [this](ConversationKey id) {
    if (active_ && active_->conversation == id) stop();
  });
}

ReplyController::~ReplyController() {
  if (active_) {
    persist_stream();
    engine_->cancel(active_->request);
  }
}

void ReplyController::clear_figures() {
  last_stats_ = GenerationStats{};
  markers_.clear();
  emit statsChanged();
}

std::optional<OpenConversationController::StreamingReply> ReplyController::streaming_into(
    ConversationKey conversation) const {
  if (!active_ || !(active_->conversation == conversation)) return std::nullopt;
  return OpenConversationController::StreamingReply{active_->message, active_->text, active_->reasoning};
}

bool ReplyController::canSend() const { return model_->ready() && !generating(); }

QString ReplyController::composerHint() const {
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

int ReplyController::contextMax() const {
  return last_stats_.context_max > 0 ? last_stats_.context_max : model_->contextMax();
}

void ReplyController::send(const QString& text) {
  const QString trimmed = text.trimmed();
  if (trimmed.isEmpty() || !canSend()) return;
  if (open_->view_matches_current()) {
    begin_reply(open_->view().leaf(), trimmed);
  } else {
    begin_reply(std::nullopt, trimmed, ParentFrom::StoredLeaf);
  }
}

void ReplyController::regenerate(qint64 assistant_message_id) {
  // Message ids come from the view; while an open loads it holds another conversation.
  if (!canSend() || !open_->view_matches_current()) return;
  const MessageRecord* m = open_->view().tree().find(MessageKey{assistant_message_id});
  if (!m || m->role != StoredRole::Assistant || !m->parent) return;
  begin_reply(m->parent, std::nullopt);
}

void ReplyController::askLargeModel(qint64 assistant_message_id) {
  // A new reply beside this one (a branch), from the Auto model's large half.
  escalate_next_ = true;
  regenerate(assistant_message_id);
  escalate_next_ = false;
}

void ReplyController::editMessage(qint64 user_message_id, const QString& text) {
  const QString trimmed = text.trimmed();
  if (trimmed.isEmpty() || !canSend() || !open_->view_matches_current()) return;
  const MessageRecord* m = open_->view().tree().find(MessageKey{user_message_id});
  if (!m || m->role != StoredRole::User) return;
  if (QString::fromStdString(m->content) == trimmed) return;
  // The edit becomes a sibling of the original: a new branch.
  begin_reply(m->parent, trimmed);
}

void ReplyController::begin_reply(std::optional<MessageKey> parent, std::optional<QString> user_text,
                                 ParentFrom from) {
  starting_ = true;
  emit generatingChanged();
  emit composerChanged();
  const bool escalate = escalate_next_;
  const std::optional<ConversationKey> existing = open_->current();
  const std::string title = title_from(user_text.value_or(QString())).toStdString();
  const std::optional<std::string> user =
      user_text ? std::optional<std::string>(user_text->toStdString()) : std::nullopt;
  const quint64 generation = open_->generation();
  // A choice made before the conversation existed goes with it.
  const std::optional<StoredOverflow> pending_overflow = existing ? std::nullopt : open_->overflow();
  const std::string pending_reasoning = existing ? std::string() : open_->conversationReasoning().toStdString();
  const std::int64_t budget = source_budget(settings_->settings());
  // The conversation remembers a remote model it replies with (and forgets it
  // when continued on this computer); local files are not recorded here.
  const QString model_path = model_->modelPath();
  const std::string remote_model = is_remote_model_path(model_path) ? model_path.toStdString() : std::string();

  // One storage job: the user's message is committed before generation starts.
  storage_->run(
      [existing, title, user, parent, from, pending_overflow, pending_reasoning, grounder = grounder_,
       budget, remote_model](ConversationStore& s) -> Result<NewTurn> {
        NewTurn turn;
        if (existing) {
          // Read back for its overflow policy and reasoning switch: every request uses the stored choices.
          HEARTH_TRY(turn.conversation, s.get_conversation(*existing));
        } else {
          HEARTH_TRY(turn.conversation, s.create_conversation(title));
          turn.created = true;
          if (pending_overflow) {
            HEARTH_CHECK(s.set_overflow_policy(turn.conversation.id, pending_overflow));
            turn.conversation.overflow = pending_overflow;
          }
          if (pending_reasoning != turn.conversation.reasoning) {
            HEARTH_CHECK(s.set_reasoning(turn.conversation.id, pending_reasoning));
            turn.conversation.reasoning = pending_reasoning;
          }
        }
        const bool had_remote = is_remote_model_path(QString::fromStdString(turn.conversation.model));
        if ((had_remote || !remote_model.empty()) && turn.conversation.model != remote_model) {
          HEARTH_CHECK(s.set_model(turn.conversation.id, remote_model));
          turn.conversation.model = remote_model;
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
        // The message being answered, grounded in the conversation's documents
        // (its sources are stored with it before the request goes out).
        if (grounder && s.database() && !turn.history.empty() && turn.history.back().role == StoredRole::User) {
          MessageRecord& asked = turn.history.back();
          HEARTH_TRY(turn.grounding,
                     grounder->ground(*s.database(), turn.conversation.id, asked.id, asked.content, budget));
          if (turn.grounding) {
            asked.sources = turn.grounding->sources;
            if (turn.user) turn.user->sources = turn.grounding->sources;
          }
        }
        return turn;
      },
      this,
      [this, generation, escalate](Result<NewTurn> result) {
        starting_ = false;
        if (!result.ok()) {
          emit generatingChanged();
          emit composerChanged();
          emit errorOccurred(tr("Could not save your message: %1")
                        .arg(QString::fromStdString(result.error().message)));
          return;
        }
        NewTurn turn = std::move(result).value();
        const bool visible = generation == open_->generation();
        if (turn.created) {
          // A choice made while the conversation was being created applies from its
          // next message on.
          if (visible && open_->overflow() != turn.conversation.overflow) {
            const ConversationKey id = turn.conversation.id;
            const std::optional<StoredOverflow> choice = open_->overflow();
            storage_->write([id, choice](ConversationStore& s) { return s.set_overflow_policy(id, choice); });
          }
          const std::string reasoning = open_->conversationReasoning().toStdString();
          if (visible && reasoning != turn.conversation.reasoning) {
            const ConversationKey id = turn.conversation.id;
            storage_->write([id, reasoning](ConversationStore& s) { return s.set_reasoning(id, reasoning); });
          }
          ConversationRecord listed = turn.conversation;
          if (visible) {
            listed.overflow = open_->overflow();
            listed.reasoning = reasoning;
          }
          list_->upsert(listed);
          if (visible) open_->adopt_created(turn.conversation);
        }
        list_->touch(turn.conversation.id);
        if (visible) {
          if (turn.user) open_->view().add_and_show(*turn.user);
          open_->view().add_and_show(turn.assistant);
        }
        start_generation(turn.conversation.id, turn.assistant.id, turn.conversation, turn.history, turn.grounding,
                         escalate);
      });
}

void ReplyController::start_generation(ConversationKey conversation, MessageKey assistant,
                                      const ConversationRecord& stored,
                                      const std::vector<MessageRecord>& history,
                                      const std::optional<Grounding>& grounding, bool escalate) {
  const std::optional<StoredOverflow> overflow = stored.overflow;
  GenerationRequest request;
  SentTurns sent;
  sent.conversation = conversation;
  const settings::Settings& s = settings_->settings();
  if (!s.system_prompt.empty()) {
    request.turns.append({ChatRole::System, QString::fromStdString(s.system_prompt)});
    sent.messages.push_back(std::nullopt);
  }
  for (std::size_t i = 0; i < history.size(); ++i) {
    const MessageRecord& m = history[i];
    // The message being answered carries its sources; earlier ones go as written.
    const bool grounded = grounding && i + 1 == history.size();
    const std::string& content = grounded ? grounding->turn_text : m.content;
    // A reply's reasoning goes along; the template decides whether it is rendered again.
    request.turns.append({to_chat_role(m.role), QString::fromStdString(content), QString::fromStdString(m.reasoning)});
    sent.messages.push_back(m.id);
  }
  last_source_tokens_ = grounding ? grounding->source_tokens : 0;
  request.sampling = to_sampling(s.sampling);
  // The conversation's own policy when it has one, else the typed global setting.
  request.overflow_policy = overflow ? OpenConversationController::overflow_name(*overflow)
                                     : QString::fromLatin1(settings::to_string(s.overflow_policy));
  request.conversation_id = conversation.value;
  // The stored choice (read back with the turn); a template without a switch ignores it.
  request.reasoning = QString::fromStdString(stored.reasoning);
  request.use_response_cache = s.response_cache;
  request.escalate = escalate;

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

void ReplyController::on_reasoning_chunk(RequestId id, const QString& text) {
  if (!active_ || active_->request != id) return;  // a stale request
  if (!active_->thinking.isValid()) active_->thinking.start();
  active_->reasoning += text.toStdString();
  active_->dirty = true;
  if (open_->shows(active_->conversation)) open_->view().append_reasoning(active_->message, text);
}

void ReplyController::end_thinking() {
  if (!active_->thinking.isValid() || active_->reasoning_ms) return;
  active_->reasoning_ms = double(active_->thinking.elapsed());
  if (open_->shows(active_->conversation)) open_->view().set_reasoning_ms(active_->message, *active_->reasoning_ms);
}

void ReplyController::on_chunk(RequestId id, const QString& text) {
  if (!active_ || active_->request != id) return;  // a stale request
  end_thinking();
  active_->text += text.toStdString();
  active_->dirty = true;
  // The reply belongs to the conversation it was sent in; another one may be open now.
  if (open_->shows(active_->conversation)) open_->view().append_text(active_->message, text);
}

void ReplyController::persist_stream() {
  if (!active_ || !active_->dirty) return;
  active_->dirty = false;
  const MessageKey id = active_->message;
  const std::string text = active_->text;
  const std::string reasoning = active_->reasoning;
  ReplyFigures figures;
  figures.reasoning_ms = active_->reasoning_ms;
  storage_->write([id, text, reasoning, figures](ConversationStore& s) {
    return s.update_message(id, text, MessageState::Streaming, figures, reasoning);
  });
}

void ReplyController::on_finished(RequestId id, const GenerationStats& stats) {
  if (!active_ || active_->request != id) return;
  persist_timer_.stop();
  ReplyFigures figures;
  figures.ttft_ms = stats.ttft_ms;
  figures.tokens_per_second = stats.tokens_per_second;
  figures.tokens = stats.generated_tokens;
  // A reply from the response cache says so where the backend is named.
  figures.backend = stats.from_cache ? std::string("response cache") : model_->backend().toStdString();
  // An Auto reply names the model that wrote it and why it was chosen.
  if (!stats.answered_by.isEmpty()) {
    figures.backend = tr("%1 (Auto: %2 model, %3)")
                          .arg(stats.answered_by, stats.routed_to, stats.route_reason)
                          .toStdString();
  }
  end_thinking();
  // The engine times the thinking where the pieces are made; the view's own
  // measure (the pieces arrive batched) stands in only without it.
  if (!active_->reasoning.empty()) {
    figures.reasoning_ms = stats.reasoning_ms >= 0 ? std::optional<double>(stats.reasoning_ms) : active_->reasoning_ms;
  }
  const MessageKey message = active_->message;
  const std::string text = active_->text;
  // Stored as the engine's chat layer keeps it: without the whitespace that
  // closed the thinking.
  std::string reasoning = active_->reasoning;
  while (!reasoning.empty() && std::string_view(" \n\t\r").find(reasoning.back()) != std::string_view::npos) {
    reasoning.pop_back();
  }
  // A remote stream that broke off keeps its text, marked as interrupted.
  const bool cut = stats.stop_reason == QLatin1String("cut");
  const MessageState state = cut ? MessageState::Interrupted : MessageState::Complete;
  storage_->write([message, text, figures, reasoning, state](ConversationStore& s) {
    return s.update_message(message, text, state, figures, reasoning);
  });
  if (open_->shows(active_->conversation)) open_->view().set_state(message, state, &figures);
  if (cut) emit errorOccurred(tr("The connection to the endpoint broke off mid-reply; the text so far is kept."));
  last_stats_ = stats;
  active_.reset();
  emit statsChanged();
  emit generatingChanged();
  emit composerChanged();
  emit replyFinished(message.value);
}

void ReplyController::on_failed(RequestId id, const QString& message) {
  if (!active_ || active_->request != id) return;
  persist_timer_.stop();
  const MessageKey key = active_->message;
  const std::string text = active_->text;
  const std::string reasoning = active_->reasoning;
  end_thinking();
  ReplyFigures figures;
  figures.reasoning_ms = active_->reasoning_ms;
  storage_->write([key, text, reasoning, figures](ConversationStore& s) {
    return s.update_message(key, text, MessageState::Error, figures, reasoning);
  });
  if (open_->shows(active_->conversation)) open_->view().set_state(key, MessageState::Error);
  active_.reset();
  emit errorOccurred(tr("The reply failed: %1").arg(message));
  emit generatingChanged();
  emit composerChanged();
}

void ReplyController::on_context_event(RequestId id, const ContextEvent& event) {
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

  if (!open_->shows(conversation)) return;  // stored; shown when that conversation is open
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

void ReplyController::stop() {
  if (active_) engine_->cancel(active_->request);
}

}  // namespace hearth::ui

namespace hearth::ui {

QString ReplyController::lastSpeculation() const {
  const GenerationStats& s = last_stats_;
  if (s.from_cache) return tr("answered from the response cache");
  if (s.speculation_off) return tr("drafts paused: slower here");
  if (s.draft_acceptance < 0) return {};
  QString text = tr("drafts %1% kept").arg(qRound(100.0 * s.draft_acceptance));
  if (s.speculation_speedup > 0) text += tr(" · %1× speed").arg(s.speculation_speedup, 0, 'f', 2);
  return text;
}

}  // namespace hearth::ui
