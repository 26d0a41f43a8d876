// ChatContext: bringing the KV context to a request's conversation (the
// transcript, rebuilds, rewinds, room). The reply and background work are in
// chat_context_reply.cpp.
#include "hearth/engine/runtime/chat_context.h"

#include <hearth/engine/runtime/prefix_persist.h>

#include <algorithm>

namespace hearth::runtime {
namespace {

bool same(const chat::ChatMessage& a, const chat::ChatMessage& b) { return a.role == b.role && a.content == b.content; }

int64_t leading_system(const std::vector<chat::ChatMessage>& messages) {
  int64_t n = 0;
  while (n < static_cast<int64_t>(messages.size()) && messages[static_cast<size_t>(n)].role == "system") ++n;
  return n;
}

std::vector<chat::ChatMessage> slice(const std::vector<chat::ChatMessage>& m, int64_t begin, int64_t end) {
  return {m.begin() + begin, m.begin() + end};
}

}  // namespace

ChatContext::ChatContext(ChatParts parts) : parts_(std::move(parts)) {
  const ChatFormat& f = *parts_.format;
  if (f.origin() == TemplateOrigin::Completion) {
    summary_request_ = f.encode_literal("\nIn short:");
  } else {
    // A standalone request, as the template renders one user message.
    auto ask = f.encode({{"user", "Summarize briefly.", {}}}, chat::GenerationPrompt::Add);
    if (ask.ok()) summary_request_ = std::move(ask).value();
    const int32_t bos = f.tokenizer().vocab().special.bos;
    if (!summary_request_.empty() && summary_request_.front() == bos) summary_request_.erase(summary_request_.begin());
  }
  note_prefix_ = f.encode_literal("\nEarlier in this conversation:");
}

ChatContext::~ChatContext() = default;

int64_t ChatContext::pinned_tokens() const {
  if (!conv_) return 0;
  int64_t end = 0;
  for (const Turn& t : conv_->turns()) {
    if (t.role == TurnRole::System) end = t.end;
  }
  return end;
}

int64_t ChatContext::reply_room(int64_t max_tokens) const {
  return std::min<int64_t>(std::max<int64_t>(1, max_tokens), std::max<int64_t>(8, parts_.session->n_ctx() / 4));
}

ConversationConfig ChatContext::config(OverflowPolicy policy) const {
  ConversationConfig c;
  c.policy = policy;
  c.summary_request = summary_request_;
  c.note_prefix = note_prefix_;
  const int64_t n_ctx = parts_.session->n_ctx();
  c.summary_max_tokens = static_cast<int32_t>(std::min<int64_t>(48, std::max<int64_t>(4, n_ctx / 8)));
  // At 80% of the context, or earlier when the request and the summary would
  // no longer fit in what is left.
  const double tail = static_cast<double>(c.summary_request.size()) + c.summary_max_tokens + 8;
  c.summarize_at = std::clamp(1.0 - tail / static_cast<double>(n_ctx), 0.1, 0.8);
  c.end_of_generation = parts_.format->end_of_generation();
  return c;
}

void ChatContext::forget() {
  summary_.reset();
  summary_wanted_ = false;
  conv_.reset();
  messages_.clear();
  produced_.clear();
  turns_.clear();
  conversation_id_ = -1;
}

Result<std::vector<int32_t>> ChatContext::start_transcript(std::vector<chat::ChatMessage> system) {
  messages_ = std::move(system);
  // What two renderings with different first messages share is the system part.
  auto a = messages_, b = messages_;
  a.push_back({"user", "a", {}});
  b.push_back({"user", "b", {}});
  HEARTH_TRY(const auto ra, parts_.format->encode(a, chat::GenerationPrompt::Add, variables_));
  HEARTH_TRY(const auto rb, parts_.format->encode(b, chat::GenerationPrompt::Add, variables_));
  const auto end = std::mismatch(ra.begin(), ra.end(), rb.begin(), rb.end()).first;
  produced_.assign(ra.begin(), end);
  return produced_;
}

Result<ChatContext::Append> ChatContext::append_messages(const std::vector<chat::ChatMessage>& messages,
                                                         chat::GenerationPrompt prompt) {
  std::vector<chat::ChatMessage> all = messages_;
  all.insert(all.end(), messages.begin(), messages.end());
  HEARTH_TRY(auto full, parts_.format->encode(all, prompt, variables_));
  const auto common = static_cast<size_t>(
      std::mismatch(produced_.begin(), produced_.end(), full.begin(), full.end()).first - produced_.begin());
  Append out;
  out.rollback = produced_.size() - common;
  out.tokens.assign(full.begin() + static_cast<std::ptrdiff_t>(common), full.end());
  produced_ = std::move(full);
  messages_ = std::move(all);
  return out;
}

Status ChatContext::rebuild(const ChatRequest& request, const Cancellation& cancel) {
  forget();
  Session& session = *parts_.session;
  reasoning_ = request.reasoning;
  variables_ = chat::reasoning_variables(parts_.format->reasoning(), reasoning_);
  conv_ = std::make_unique<Conversation>(
      session, *parts_.model, *parts_.backend, config(request.policy),
      [this](int32_t t) { return parts_.format->tokenizer().token_to_piece(t); }, parts_.prefixes);
  HEARTH_TRY(const auto pinned, start_transcript(slice(request.messages, 0, leading_system(request.messages))));
  const bool use_disk = parts_.disk && parts_.can_shift && pinned.size() > 1 &&
                        std::find(disk_known_.begin(), disk_known_.end(), pinned) == disk_known_.end();
  if (use_disk) {
    session.reset();
    // A stale or corrupt file is deleted by the cache and not used; a failed
    // lookup only costs the prefill.
    auto restored = restore_prefix(*parts_.disk, parts_.model_identity, session, pinned);
    restored_from_disk_ = restored.ok() ? *restored : 0;
  }
  // The system prompt's blocks come from the prefix index when another
  // conversation (or an earlier run of this one) prefilled them.
  HEARTH_CHECK(conv_->set_system(pinned, cancel));
  if (use_disk) {
    disk_known_.push_back(pinned);
    // restore_prefix looks up all but the last pinned token (prefilled for
    // fresh logits), so that is what is saved. Saving is best effort.
    const auto whole = static_cast<int64_t>(pinned.size());
    if (restored_from_disk_ + 1 < whole) {
      (void)save_prefix(*parts_.disk, parts_.model_identity, session, whole - 1);
    }
  }
  conversation_id_ = request.conversation_id;
  policy_ = request.policy;
  return {};
}

bool ChatContext::rewind_to(int64_t changed) {
  const auto& turns = conv_->turns();
  for (size_t i = 0; i < turns.size(); ++i) {
    const auto it = turns_.find(turns[i].id);
    if (it == turns_.end() || it->second.last < changed) continue;
    // The changed message was evicted or summarised: the context cannot be rewound to it.
    if (it->second.first > changed) return false;
    const TurnMessages at = it->second;
    std::vector<int64_t> kept;
    for (size_t k = 0; k < i; ++k) kept.push_back(turns[k].id);
    if (!conv_->keep_turns(i).ok()) return false;
    std::erase_if(turns_, [&](const auto& entry) {
      return std::find(kept.begin(), kept.end(), entry.first) == kept.end();
    });
    messages_.resize(static_cast<size_t>(std::min<int64_t>(at.first, static_cast<int64_t>(messages_.size()))));
    produced_.resize(std::min(at.produced_at, produced_.size()));
    return true;
  }
  return false;
}

Status ChatContext::apply_rollback(size_t rollback, std::vector<Pending>& pending) {
  if (rollback == 0) return {};
  if (!pending.empty()) {
    // Not prefilled yet: the previous pending turn simply loses its tail.
    auto& tokens = pending.back().tokens;
    tokens.resize(tokens.size() - std::min(rollback, tokens.size()));
    return {};
  }
  // Only the newest exchange's tail can be replaced; once it was evicted or
  // summarised its tokens are gone from the context and nothing is undone.
  const auto& turns = conv_->turns();
  if (turns.empty() || !turns_.count(turns.back().id)) return {};
  const int64_t length = turns.back().end - turns.back().begin;
  return conv_->rollback(std::min(static_cast<int64_t>(rollback), length));
}

void ChatContext::forward_events(const ChatEventFn& on_event, std::string* stopped) {
  int64_t pinned = 0;
  for (const auto& t : conv_->turns()) {
    if (t.role == TurnRole::System) pinned = t.end;
  }
  for (const OverflowEvent& e : conv_->take_events()) {
    if (e.action == OverflowAction::Stopped) {
      if (stopped) *stopped = e.reason;
      continue;
    }
    ChatEvent out;
    out.kind = e.action == OverflowAction::Summarized ? ChatEvent::Kind::Summarized : ChatEvent::Kind::Dropped;
    out.at_token = pinned;
    out.conversation_id = conversation_id_;
    out.tokens_freed = e.tokens_freed;
    out.pause_ms = e.pause_ms;
    out.summary = e.summary;
    for (int64_t id : e.turn_ids) {
      const auto it = turns_.find(id);
      if (it == turns_.end()) continue;  // an earlier note folded into this one
      ++out.turns;
      out.first_message = out.first_message < 0 ? it->second.first : std::min(out.first_message, it->second.first);
      out.last_message = std::max(out.last_message, it->second.last);
      turns_.erase(it);
    }
    if (on_event) on_event(out);
  }
}

Result<ChatContext::Prepared> ChatContext::prepare(const ChatRequest& request, int64_t reply_room,
                                                   const ChatEventFn& on_event, const Cancellation& cancel) {
  const auto& msgs = request.messages;
  Session& session = *parts_.session;
  restored_from_disk_ = 0;
  if (msgs.empty() || msgs.back().role != "user") {
    return make_error(ErrorCode::InvalidArgument, "the conversation must end with the user's message");
  }
  bool rebuilt = false;
  bool continued = false;
  // Another reasoning choice renders the system part differently (gpt-oss,
  // SmolLM3), so the context starts over.
  if (conv_ && conversation_id_ == request.conversation_id && policy_ == request.policy &&
      reasoning_ == request.reasoning) {
    int64_t k = 0;
    const auto held = static_cast<int64_t>(messages_.size());
    const auto given = static_cast<int64_t>(msgs.size());
    while (k < held && k < given && same(messages_[static_cast<size_t>(k)], msgs[static_cast<size_t>(k)])) ++k;
    continued = (k == held && given > k) || (k >= leading_system(messages_) && rewind_to(k));
  }
  if (!continued) {
    HEARTH_CHECK(rebuild(request, cancel));
    rebuilt = true;
  }

  // Earlier exchanges the context does not hold yet (after a rebuild), then
  // the new user message with the template's assistant header.
  std::vector<Pending> pending;
  const auto last = static_cast<int64_t>(msgs.size()) - 1;
  auto i = static_cast<int64_t>(messages_.size());
  while (i < last) {
    int64_t end = i + 1;
    while (end < last && msgs[static_cast<size_t>(end)].role != "user") ++end;
    const size_t before = produced_.size();
    HEARTH_TRY(auto part, append_messages(slice(msgs, i, end), chat::GenerationPrompt::Omit));
    HEARTH_CHECK(apply_rollback(part.rollback, pending));
    pending.push_back({std::move(part.tokens), {i, end - 1, before - std::min(before, part.rollback)}});
    i = end;
  }
  const size_t before = produced_.size();
  HEARTH_TRY(auto prompt, append_messages(slice(msgs, last, last + 1), chat::GenerationPrompt::Add));
  HEARTH_CHECK(apply_rollback(prompt.rollback, pending));
  reply_turn_ = {last, last + 1, before - std::min(before, prompt.rollback)};

  Prepared out;
  out.prompt = std::move(prompt.tokens);
  auto size_of = [](const std::vector<Pending>& list) {
    int64_t n = 0;
    for (const auto& p : list) n += static_cast<int64_t>(p.tokens.size());
    return n;
  };
  if (rebuilt && request.policy != OverflowPolicy::Stop) {
    // A rebuilt context starts with the newest exchanges that fit instead of
    // prefilling turns only to evict them again.
    const int64_t free = session.n_ctx() - static_cast<int64_t>(session.context().size());
    const int64_t needed = static_cast<int64_t>(out.prompt.size()) + reply_room;
    size_t skip = 0;
    int64_t rest = size_of(pending);
    while (skip < pending.size() && rest + needed > free) {
      rest -= static_cast<int64_t>(pending[skip].tokens.size());
      ++skip;
    }
    if (skip > 0) {
      // Messages an earlier rebuild of this conversation already reported stay unreported.
      if (reported_conversation_ != conversation_id_) reported_through_ = -1;
      reported_conversation_ = conversation_id_;
      ChatEvent e;
      e.kind = ChatEvent::Kind::Dropped;
      e.conversation_id = conversation_id_;
      e.at_token = static_cast<int64_t>(session.context().size());
      for (size_t k = 0; k < skip; ++k) {
        if (pending[k].messages.last <= reported_through_) continue;
        if (e.first_message < 0) e.first_message = pending[k].messages.first;
        e.last_message = pending[k].messages.last;
        e.tokens_freed += static_cast<int64_t>(pending[k].tokens.size());
        ++e.turns;
      }
      if (e.turns > 0 && on_event) on_event(e);
      reported_through_ = std::max(reported_through_, pending[skip - 1].messages.last);
      pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(skip));
    }
  }
  if (!rebuilt && !parts_.can_shift && request.policy != OverflowPolicy::Stop) {
    // Without K-shift (the cache is not host-visible: a discrete GPU) room is
    // made the way a rebuild makes it: prefilling only the newest turns that fit.
    const auto used = static_cast<int64_t>(session.context().size());
    if (used + size_of(pending) + static_cast<int64_t>(out.prompt.size()) + reply_room > session.n_ctx()) {
      forget();
      return prepare(request, reply_room, on_event, cancel);
    }
  }
  for (const Pending& p : pending) {
    if (p.tokens.empty()) continue;
    HEARTH_TRY(const bool room, conv_->make_room(static_cast<int64_t>(p.tokens.size()), cancel));
    forward_events(on_event, &out.stopped);
    if (!room) return out;
    conv_->begin_turn();
    HEARTH_CHECK(session.prefill(p.tokens, cancel));
    conv_->end_turn();
    turns_[conv_->turns().back().id] = p.messages;
  }
  HEARTH_TRY(const bool room, conv_->make_room(static_cast<int64_t>(out.prompt.size()) + reply_room, cancel));
  forward_events(on_event, &out.stopped);
  if (!room && out.stopped.empty()) out.stopped = "the message does not fit in the context";
  return out;
}

}  // namespace hearth::runtime
