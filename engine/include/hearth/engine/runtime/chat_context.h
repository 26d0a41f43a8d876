// The one chat layer: a conversation's messages -> the model's prompt tokens
// (ChatFormat) -> a KV context kept between replies. The app, hearth-cli and
// the local server all call it, so they render, count and make room alike.
//
// A request carries the whole conversation. When it continues what the
// context holds, only what the template adds is prefilled (a reply the
// template renders differently from the tokens generated is rolled back and
// re-encoded, so the context always equals a fresh encoding of the
// transcript); an edited or regenerated message rewinds to its turn; anything
// else rebuilds from the system prompt (restored from the prefix index or the
// disk prefix cache). The overflow policy (stop, evict with K-shift,
// summarize) makes room, and every action comes back as a ChatEvent naming
// the request's messages it affected. A due summary is background work, one
// token per step; a reply pre-empts it.
#pragma once

#include <hearth/engine/kv/prefix_disk_cache.h>
#include <hearth/engine/kv/prefix_index.h>
#include <hearth/engine/runtime/cancellation.h>
#include <hearth/engine/runtime/chat_format.h>
#include <hearth/engine/runtime/conversation.h>
#include <hearth/engine/runtime/session.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::runtime {

// What an overflow policy did, by the indices of the request's messages.
struct ChatEvent {
  enum class Kind { Dropped, Summarized };
  Kind kind = Kind::Dropped;
  int64_t first_message = -1;
  int64_t last_message = -1;
  int64_t turns = 0;         // exchanges affected
  int64_t tokens_freed = 0;
  int64_t at_token = 0;      // where in the context it happened
  std::string summary;       // Summarized: the note's text
  double pause_ms = 0;
  int64_t conversation_id = -1;  // the request's
};
using ChatEventFn = std::function<void(const ChatEvent&)>;
using TextFn = std::function<void(std::string_view piece)>;

// What a ChatContext drives; every pointer outlives it (prefixes and disk
// may be null).
struct ChatParts {
  Session* session = nullptr;
  const model::Model* model = nullptr;
  backend::Backend* backend = nullptr;
  const ChatFormat* format = nullptr;
  kv::PrefixIndex* prefixes = nullptr;
  // Whether cached keys can be moved and re-rotated (and blocks copied in and
  // out): only when the cache is host-visible. Without it evict and summarize
  // make room by prefilling only the newest turns that fit.
  bool can_shift = true;
  // Saved system prompts: a rebuilt context restores its pinned start from
  // here, and saves it when it had to be computed.
  kv::PrefixDiskCache* disk = nullptr;
  kv::ModelIdentity model_identity;
};

struct ChatRequest {
  std::vector<chat::ChatMessage> messages;  // system message(s) first; the last is the user's
  int64_t conversation_id = 0;              // another id rebuilds the context
  OverflowPolicy policy = OverflowPolicy::Stop;
  // The reasoning switch, where the template offers one (ChatFormat::reasoning()).
  chat::ReasoningChoice reasoning = chat::ReasoningChoice::Default;
  // max_tokens is the reply's limit; it is capped at a quarter of the
  // context so evicting or summarising always leaves the reply room.
  GenerateOptions options;
};

struct ChatReply {
  GenerateResult result;
  // The reply as shown (it starts at its first visible character): what the
  // caller sends back as the assistant's message next time.
  std::string shown;
  // The reply's reasoning (thinking), apart from `shown`; empty for none.
  // The transcript keeps it with the reply for the template, which decides
  // whether later turns render it again.
  std::string reasoning;
  // Non-empty: the policy could not make room (why, for the user); nothing
  // was generated and the context starts over next time.
  std::string stopped;
  int64_t prefix_restored_tokens = 0;  // pinned positions restored from disk
};

// Where a reply streams: the answer's text, its reasoning (a model that
// thinks first), and what the overflow policy did.
struct ReplyStreams {
  TextFn on_text;
  TextFn on_reasoning;
  ChatEventFn on_event;
};

class ChatContext {
 public:
  explicit ChatContext(ChatParts parts);
  ~ChatContext();
  ChatContext(const ChatContext&) = delete;
  ChatContext& operator=(const ChatContext&) = delete;

  // Brings the context to the request's conversation, makes room, prefills
  // the last user message with the template's assistant header and
  // generates, streaming the shown text. A cancelled request (`cancel`
  // asked before every batch and token) ends early: during generation with
  // StopReason::Cancelled and the reply so far; before it with
  // ErrorCode::Cancelled, the next request starting over.
  Result<ChatReply> reply(const ChatRequest& request, const ReplyStreams& streams, const Cancellation& cancel = {});
  Result<ChatReply> reply(const ChatRequest& request, const TextFn& on_text, const ChatEventFn& on_event,
                          const Cancellation& cancel = {}) {
    return reply(request, ReplyStreams{on_text, {}, on_event}, cancel);
  }

  bool has_background_work() const { return summary_wanted_; }
  // One token of a due summary.
  Status background_step(const ChatEventFn& on_event, const Cancellation& cancel = {});
  // Forgets the context (the next request rebuilds it).
  void forget();

  // Tokens of the pinned system prompt in the context (0 before a request).
  int64_t pinned_tokens() const;
  // The reply limit reply() applies to `max_tokens`.
  int64_t reply_room(int64_t max_tokens) const;
  const Session& session() const { return *parts_.session; }
  const ChatFormat& format() const { return *parts_.format; }

 private:
  struct TurnMessages {
    int64_t first = 0;  // indices into the transcript's messages
    int64_t last = 0;
    size_t produced_at = 0;  // transcript tokens before this turn
  };
  struct Pending {
    std::vector<int32_t> tokens;
    TurnMessages messages;
  };
  struct Prepared {
    std::vector<int32_t> prompt;  // the last user message's tokens
    std::string stopped;
  };
  struct Append {
    std::vector<int32_t> tokens;  // to prefill
    size_t rollback = 0;          // trailing produced tokens the rendering replaces
  };

  Result<Prepared> prepare(const ChatRequest& request, int64_t reply_room, const ChatEventFn& on_event,
                           const Cancellation& cancel);
  Status rebuild(const ChatRequest& request, const Cancellation& cancel);
  bool rewind_to(int64_t changed);
  Status apply_rollback(size_t rollback, std::vector<Pending>& pending);
  void forward_events(const ChatEventFn& on_event, std::string* stopped);
  Status preempt(int64_t reply_room, const ChatEventFn& on_event, const Cancellation& cancel);
  void begin_reply();
  void end_reply(const std::string& shown, const std::string& reasoning, size_t reply_tokens_in_context);
  ConversationConfig config(OverflowPolicy policy) const;

  // The transcript: every message taken in (evicted ones too, since the
  // template renders the whole conversation) and the tokens produced for it.
  Result<std::vector<int32_t>> start_transcript(std::vector<chat::ChatMessage> system);
  Result<Append> append_messages(const std::vector<chat::ChatMessage>& messages, chat::GenerationPrompt prompt);

  ChatParts parts_;
  std::vector<int32_t> summary_request_;  // asks the model for a summary
  std::vector<int32_t> note_prefix_;      // starts the pinned note

  int64_t conversation_id_ = -1;
  OverflowPolicy policy_ = OverflowPolicy::Stop;
  chat::ReasoningChoice reasoning_ = chat::ReasoningChoice::Default;
  chat::Value variables_;  // the template variables of reasoning_
  std::unique_ptr<Conversation> conv_;
  std::vector<chat::ChatMessage> messages_;  // the transcript's messages
  std::vector<int32_t> produced_;            // ... and its tokens
  std::map<int64_t, TurnMessages> turns_;    // exchange turn id -> its messages
  TurnMessages reply_turn_;
  std::unique_ptr<SummaryJob> summary_;
  bool summary_wanted_ = false;
  // The newest message a rebuild reported as dropped, so a later rebuild of
  // the same conversation does not report it again.
  int64_t reported_conversation_ = -1;
  int64_t reported_through_ = -1;
  int64_t restored_from_disk_ = 0;
  // Pinned starts already looked up or saved: the prefix index holds them.
  std::vector<std::vector<int32_t>> disk_known_;
};

}  // namespace hearth::runtime
