// Replies: sending a message (or regenerating a reply, or editing a message
// into a new branch), streaming the tokens into the view, stopping, persisting
// the reply as it grows, and the figures of the last reply (speed, context use,
// what the overflow policy did). The new turn is saved by one storage job and
// the request is built from what that job saved, so switching conversations
// meanwhile cannot change what is sent or where the reply lands.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "controllers/open_conversation_controller.h"
#include "documents/document_grounder.h"
#include "engine/engine_client.h"
#include "store/storage_executor.h"

namespace hearth::ui {

class ConversationListController;
class ModelController;
class SettingsController;

class ReplyController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Created by the app")

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
  // Speculative decoding in the last reply ("drafts 62% kept · 1.4× faster",
  // "drafts paused: slower here"), empty when nothing was drafted.
  Q_PROPERTY(QString lastSpeculation READ lastSpeculation NOTIFY statsChanged)
  // Tokens (estimated) the last message's document sources took in the prompt;
  // the context gauge shows them in their own colour.
  Q_PROPERTY(int lastSourceTokens READ lastSourceTokens NOTIFY statsChanged)

 public:
  ReplyController(StorageExecutor* storage, EngineClient* engine, ModelController* model,
                  SettingsController* settings, ConversationListController* list,
                  OpenConversationController* open, QObject* parent = nullptr);
  ~ReplyController() override;

  bool generating() const { return active_.has_value() || starting_; }
  bool canSend() const;
  QString composerHint() const;
  double lastTokensPerSecond() const { return last_stats_.tokens_per_second; }
  double lastTtftMs() const { return last_stats_.ttft_ms; }
  double lastPauseMs() const { return last_stats_.pause_ms; }
  int contextUsed() const { return last_stats_.context_used; }
  int contextMax() const;
  QVariantList contextMarkers() const { return markers_; }
  QString lastSpeculation() const;
  int lastSourceTokens() const { return static_cast<int>(last_source_tokens_); }
  // Grounds messages in the conversation's attached documents; used on the
  // storage thread only (inside the storage jobs that save a turn).
  void set_grounder(std::shared_ptr<DocumentGrounder> grounder) { grounder_ = std::move(grounder); }
  // The reply streaming into `conversation`, if any, with its text so far.
  std::optional<OpenConversationController::StreamingReply> streaming_into(ConversationKey conversation) const;

  Q_INVOKABLE void send(const QString& text);
  Q_INVOKABLE void stop();
  Q_INVOKABLE void regenerate(qint64 assistant_message_id);
  // The Auto model: a new reply to the same message (a branch) from the large model.
  Q_INVOKABLE void askLargeModel(qint64 assistant_message_id);
  Q_INVOKABLE void editMessage(qint64 user_message_id, const QString& text);

 signals:
  void generatingChanged();
  void composerChanged();
  void statsChanged();
  // A reply finished (tests and the status line listen).
  void replyFinished(qint64 message_id);
  void errorOccurred(const QString& message);

 private:
  // Set only while askLargeModel starts its reply: begin_reply takes it along.
  bool escalate_next_ = false;
  struct ActiveReply {
    RequestId request = 0;
    ConversationKey conversation;
    MessageKey message;
    std::string text;
    std::string reasoning;
    bool dirty = false;
    // The thinking's length as the view shows it when the answer starts (the
    // pieces arrive batched); the engine's own figure replaces it at the end.
    QElapsedTimer thinking;
    std::optional<double> reasoning_ms;
  };
  // Where a new turn hangs: under a message the view shows, or under the leaf the
  // conversation opens on as stored (a send before the open conversation's
  // messages arrived: the view still holds another conversation's).
  enum class ParentFrom { View, StoredLeaf };

  void begin_reply(std::optional<MessageKey> parent, std::optional<QString> user_text,
                   ParentFrom from = ParentFrom::View);
  void start_generation(ConversationKey conversation, MessageKey assistant, const ConversationRecord& stored,
                        const std::vector<MessageRecord>& history, const std::optional<Grounding>& grounding,
                        bool escalate);
  void on_chunk(RequestId id, const QString& text);
  void on_reasoning_chunk(RequestId id, const QString& text);
  // The thinking ended (the answer started, or the reply ended while thinking).
  void end_thinking();
  void on_finished(RequestId id, const GenerationStats& stats);
  void on_failed(RequestId id, const QString& message);
  void on_context_event(RequestId id, const ContextEvent& event);
  void persist_stream();
  void clear_figures();

  StorageExecutor* storage_;
  EngineClient* engine_;
  ModelController* model_;
  SettingsController* settings_;
  ConversationListController* list_;
  OpenConversationController* open_;

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
  std::shared_ptr<DocumentGrounder> grounder_;
  std::int64_t last_source_tokens_ = 0;
};

}  // namespace hearth::ui
