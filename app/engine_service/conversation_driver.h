// Drives the engine's runtime::Conversation for the app: one conversation's
// context is kept between requests (a follow-up prefills only its new
// message), the conversation's overflow policy makes room (stop, evict with
// K-shift, summarize), and every action comes back as a ui::ContextEvent
// naming the messages it affected. A due summary is background work done one
// token per step; a reply pre-empts it.
#pragma once

#include <hearth/engine/kv/prefix_disk_cache.h>
#include <hearth/engine/kv/prefix_index.h>
#include <hearth/engine/runtime/conversation.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "engine/engine_types.h"
#include "engine_service/chat_transcript.h"

namespace hearth::app {

class ConversationDriver {
 public:
  using EventFn = std::function<void(const ui::ContextEvent&)>;

  struct Engine {
    runtime::Session* session = nullptr;
    const model::Model* model = nullptr;
    backend::Backend* backend = nullptr;
    kv::PrefixIndex* prefixes = nullptr;  // may be null
    // Whether cached keys can be moved and re-rotated (and blocks copied in
    // and out): only when the cache is host-visible. Without it evict and
    // summarize make room by prefilling the newest turns that fit again.
    bool can_shift = true;
    // Saved system prompts (may be null): a rebuilt context restores its
    // pinned start from here, and saves it when it had to be computed.
    kv::PrefixDiskCache* disk = nullptr;
    kv::ModelIdentity model_identity;
    ChatTranscript::RenderFn render;
    runtime::DetokenizeFn detokenize;
    std::vector<int32_t> summary_request;  // asks the model for a summary
    std::vector<int32_t> note_prefix;      // starts the pinned note
    std::vector<int32_t> end_of_generation;
  };
  explicit ConversationDriver(Engine engine) : engine_(std::move(engine)) {}

  struct Prepared {
    std::vector<int32_t> prompt;  // the last user message's tokens; room is made for them and the reply
    std::string stopped;          // non-empty: the policy could not make room (why, for the user)
  };
  // Brings the context to the request's conversation up to (not including)
  // its last message, which must be the user's, and makes room for that
  // message and `reply_room` tokens. Rebuilds the context when the request
  // does not continue what the context holds (another conversation, an edit
  // further back than the context keeps, another policy).
  Result<Prepared> prepare(const ui::GenerationRequest& request, runtime::OverflowPolicy policy,
                           int64_t reply_room, const EventFn& on_event);
  // Call before prefilling the prompt and after the reply has been generated.
  void begin_reply();
  // `shown` is the reply's text as the user sees it (and sends back next time).
  void end_reply(const QString& shown, size_t reply_tokens_in_context);

  bool has_background_work() const { return summary_wanted_; }
  Status background_step(const EventFn& on_event);
  // A reply arrived: a finished summary is applied; an unfinished one is
  // dropped, or finished first when the reply (`reply_room` tokens after a
  // message about as long as the last exchange) would not fit without it.
  Status preempt(int64_t reply_room, const EventFn& on_event);

  // The context was reset outside the driver (model unload).
  void forget();
  // Pinned positions the last prepare() restored from the disk cache.
  int64_t restored_from_disk() const { return restored_from_disk_; }

 private:
  struct TurnMessages {
    qsizetype first = 0;  // indices into the transcript's messages
    qsizetype last = 0;
    size_t produced_at = 0;  // transcript tokens before this turn
  };
  struct Pending {
    std::vector<int32_t> tokens;
    TurnMessages messages;
  };

  Status rebuild(const ui::GenerationRequest& request, runtime::OverflowPolicy policy);
  // Rewinds to the turn holding message `changed` when the context still has it.
  bool rewind_to(qsizetype changed);
  Status apply_rollback(size_t rollback, std::vector<Pending>& pending);
  // Sends the conversation's events on; a Stopped event's reason goes to `stopped`.
  void forward_events(const EventFn& on_event, std::string* stopped);
  runtime::ConversationConfig config(runtime::OverflowPolicy policy) const;

  Engine engine_;
  qint64 conversation_id_ = -1;
  runtime::OverflowPolicy policy_ = runtime::OverflowPolicy::Stop;
  std::unique_ptr<runtime::Conversation> conv_;
  std::optional<ChatTranscript> transcript_;
  std::map<int64_t, TurnMessages> turns_;  // exchange turn id -> its messages
  TurnMessages reply_turn_;                // the exchange being generated
  std::unique_ptr<runtime::SummaryJob> summary_;
  bool summary_wanted_ = false;
  // The newest message a rebuild reported as dropped, so a later rebuild of
  // the same conversation does not report it again.
  qint64 reported_conversation_ = -1;
  qsizetype reported_through_ = -1;
  int64_t restored_from_disk_ = 0;
  // Pinned starts this engine already looked up or saved: the prefix index
  // holds them now, so the disk is not asked again.
  std::vector<std::vector<int32_t>> disk_known_;
};

}  // namespace hearth::app
