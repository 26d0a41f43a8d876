#include "engine_service/conversation_driver.h"

#include <hearth/engine/runtime/prefix_persist.h>

#include <algorithm>

namespace hearth::app {
namespace {

bool same(const ui::ChatTurn& a, const ui::ChatTurn& b) { return a.role == b.role && a.text == b.text; }

qsizetype leading_system(const QList<ui::ChatTurn>& turns) {
  qsizetype n = 0;
  while (n < turns.size() && turns[n].role == ui::ChatRole::System) ++n;
  return n;
}

}  // namespace

runtime::ConversationConfig ConversationDriver::config(runtime::OverflowPolicy policy) const {
  runtime::ConversationConfig c;
  c.policy = policy;
  c.summary_request = engine_.summary_request;
  c.note_prefix = engine_.note_prefix;
  const int64_t n_ctx = engine_.session->n_ctx();
  c.summary_max_tokens = static_cast<int32_t>(std::min<int64_t>(48, std::max<int64_t>(4, n_ctx / 8)));
  // At 80% of the context, or earlier when the request and the summary would
  // no longer fit in what is left.
  const double tail = static_cast<double>(c.summary_request.size()) + c.summary_max_tokens + 8;
  c.summarize_at = std::clamp(1.0 - tail / static_cast<double>(n_ctx), 0.1, 0.8);
  c.end_of_generation = engine_.end_of_generation;
  return c;
}

void ConversationDriver::forget() {
  summary_.reset();
  summary_wanted_ = false;
  conv_.reset();
  transcript_.reset();
  turns_.clear();
  conversation_id_ = -1;
}

Status ConversationDriver::rebuild(const ui::GenerationRequest& request, runtime::OverflowPolicy policy) {
  forget();
  conv_ = std::make_unique<runtime::Conversation>(*engine_.session, *engine_.model, *engine_.backend,
                                                  config(policy), engine_.detokenize, engine_.prefixes);
  transcript_.emplace(engine_.render);
  HEARTH_TRY(const auto pinned, transcript_->start(request.turns.mid(0, leading_system(request.turns))));
  const bool use_disk = engine_.disk && engine_.can_shift && pinned.size() > 1 &&
                        std::find(disk_known_.begin(), disk_known_.end(), pinned) == disk_known_.end();
  if (use_disk) {
    engine_.session->reset();
    // A stale or corrupt file is deleted by the cache and not used; a failed
    // lookup only costs the prefill.
    auto restored = runtime::restore_prefix(*engine_.disk, engine_.model_identity, *engine_.session, pinned);
    restored_from_disk_ = restored.ok() ? *restored : 0;
  }
  // The system prompt's blocks come from the prefix index when another
  // conversation (or an earlier run of this one) prefilled them.
  HEARTH_CHECK(conv_->set_system(pinned));
  if (use_disk) {
    disk_known_.push_back(pinned);
    // restore_prefix looks up all but the last pinned token (prefilled for
    // fresh logits), so that is what is saved. Saving is best effort.
    const auto whole = static_cast<int64_t>(pinned.size());
    if (restored_from_disk_ + 1 < whole) {
      (void)runtime::save_prefix(*engine_.disk, engine_.model_identity, *engine_.session, whole - 1);
    }
  }
  conversation_id_ = request.conversation_id;
  policy_ = policy;
  return {};
}

bool ConversationDriver::rewind_to(qsizetype changed) {
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
    transcript_->truncate(at.first, at.produced_at);
    return true;
  }
  return false;
}

Status ConversationDriver::apply_rollback(size_t rollback, std::vector<Pending>& pending) {
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

void ConversationDriver::forward_events(const EventFn& on_event, std::string* stopped) {
  int64_t pinned = 0;
  for (const auto& t : conv_->turns()) {
    if (t.role == runtime::TurnRole::System) pinned = t.end;
  }
  for (const runtime::OverflowEvent& e : conv_->take_events()) {
    if (e.action == runtime::OverflowAction::Stopped) {
      if (stopped) *stopped = e.reason;
      continue;
    }
    ui::ContextEvent out;
    out.kind = e.action == runtime::OverflowAction::Summarized ? ui::ContextEvent::Kind::Summarized
                                                               : ui::ContextEvent::Kind::Dropped;
    out.conversation_id = conversation_id_;
    out.at_token = static_cast<int>(pinned);
    out.tokens_freed = static_cast<int>(e.tokens_freed);
    out.pause_ms = e.pause_ms;
    out.summary = QString::fromStdString(e.summary).trimmed();
    for (int64_t id : e.turn_ids) {
      const auto it = turns_.find(id);
      if (it == turns_.end()) continue;  // an earlier note folded into this one
      ++out.turns;
      out.first_message = out.first_message < 0 ? static_cast<int>(it->second.first)
                                                : std::min(out.first_message, static_cast<int>(it->second.first));
      out.last_message = std::max(out.last_message, static_cast<int>(it->second.last));
      turns_.erase(it);
    }
    if (on_event) on_event(out);
  }
}

Result<ConversationDriver::Prepared> ConversationDriver::prepare(const ui::GenerationRequest& request,
                                                                 runtime::OverflowPolicy policy, int64_t reply_room,
                                                                 const EventFn& on_event) {
  const QList<ui::ChatTurn>& turns = request.turns;
  restored_from_disk_ = 0;
  if (turns.isEmpty() || turns.back().role != ui::ChatRole::User) {
    return make_error(ErrorCode::InvalidArgument, "the conversation must end with the user's message");
  }
  bool rebuilt = false;
  bool continued = false;
  if (conv_ && conversation_id_ == request.conversation_id && policy_ == policy) {
    const auto& held = transcript_->messages();
    qsizetype k = 0;
    while (k < held.size() && k < turns.size() && same(held[k], turns[k])) ++k;
    continued = (k == held.size() && turns.size() > k) || (k >= leading_system(held) && rewind_to(k));
  }
  if (!continued) {
    HEARTH_CHECK(rebuild(request, policy));
    rebuilt = true;
  }

  // Earlier exchanges the context does not hold yet (after a rebuild), then
  // the new user message with the template's assistant header.
  std::vector<Pending> pending;
  const qsizetype last = turns.size() - 1;
  qsizetype i = transcript_->messages().size();
  while (i < last) {
    qsizetype end = i + 1;
    while (end < last && turns[end].role != ui::ChatRole::User) ++end;
    const size_t before = transcript_->produced();
    HEARTH_TRY(auto part, transcript_->append(turns.mid(i, end - i), GenerationPrompt::No));
    HEARTH_CHECK(apply_rollback(part.rollback, pending));
    pending.push_back({std::move(part.tokens), {i, end - 1, before - std::min(before, part.rollback)}});
    i = end;
  }
  const size_t before = transcript_->produced();
  HEARTH_TRY(auto prompt, transcript_->append(turns.mid(last, 1), GenerationPrompt::Yes));
  HEARTH_CHECK(apply_rollback(prompt.rollback, pending));
  reply_turn_ = {last, last + 1, before - std::min(before, prompt.rollback)};

  Prepared out;
  out.prompt = std::move(prompt.tokens);
  auto size_of = [](const std::vector<Pending>& list) {
    int64_t n = 0;
    for (const auto& p : list) n += static_cast<int64_t>(p.tokens.size());
    return n;
  };
  if (rebuilt && policy != runtime::OverflowPolicy::Stop) {
    // A rebuilt context starts with the newest exchanges that fit instead of
    // prefilling turns only to evict them again.
    const int64_t free = engine_.session->n_ctx() - static_cast<int64_t>(engine_.session->context().size());
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
      ui::ContextEvent e;
      e.kind = ui::ContextEvent::Kind::Dropped;
      e.conversation_id = conversation_id_;
      e.at_token = static_cast<int>(engine_.session->context().size());
      for (size_t k = 0; k < skip; ++k) {
        if (pending[k].messages.last <= reported_through_) continue;
        if (e.first_message < 0) e.first_message = static_cast<int>(pending[k].messages.first);
        e.last_message = static_cast<int>(pending[k].messages.last);
        e.tokens_freed += static_cast<int>(pending[k].tokens.size());
        ++e.turns;
      }
      if (e.turns > 0 && on_event) on_event(e);
      reported_through_ = std::max<qsizetype>(reported_through_, pending[skip - 1].messages.last);
      pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(skip));
    }
  }
  if (!rebuilt && !engine_.can_shift && policy != runtime::OverflowPolicy::Stop) {
    // Without K-shift (the cache is not host-visible: a discrete GPU) room is
    // made the way a rebuild makes it: prefilling only the newest turns that fit.
    const int64_t used = static_cast<int64_t>(engine_.session->context().size());
    if (used + size_of(pending) + static_cast<int64_t>(out.prompt.size()) + reply_room > engine_.session->n_ctx()) {
      forget();
      return prepare(request, policy, reply_room, on_event);
    }
  }
  for (const Pending& p : pending) {
    if (p.tokens.empty()) continue;
    HEARTH_TRY(const bool room, conv_->make_room(static_cast<int64_t>(p.tokens.size())));
    forward_events(on_event, &out.stopped);
    if (!room) return out;
    conv_->begin_turn();
    HEARTH_CHECK(engine_.session->prefill(p.tokens));
    conv_->end_turn();
    turns_[conv_->turns().back().id] = p.messages;
  }
  HEARTH_TRY(const bool room, conv_->make_room(static_cast<int64_t>(out.prompt.size()) + reply_room));
  forward_events(on_event, &out.stopped);
  if (!room && out.stopped.empty()) out.stopped = "the message does not fit in the context";
  return out;
}

void ConversationDriver::begin_reply() { conv_->begin_turn(); }

void ConversationDriver::end_reply(const QString& shown, size_t reply_tokens_in_context) {
  const size_t before = conv_->turns().size();
  conv_->end_turn();
  if (conv_->turns().size() > before) {
    turns_[conv_->turns().back().id] = reply_turn_;
  }
  const auto& ctx = engine_.session->context();
  const size_t n = std::min(reply_tokens_in_context, ctx.size());
  transcript_->reply(shown, std::span<const int32_t>(ctx).subspan(ctx.size() - n));
  if (policy_ == runtime::OverflowPolicy::Summarize && engine_.can_shift && !conv_->turns().empty()) {
    // The next turn is expected to be about as long as this one.
    const auto& t = conv_->turns().back();
    if (conv_->summary_due(t.end - t.begin)) {
      // Starting only sets the job up (no compute); a job that cannot start
      // (no room, turns too short) leaves the limit to evict.
      auto job = conv_->start_summary();
      if (job.ok() && *job) {
        summary_ = std::move(job).value();
        summary_wanted_ = true;
      }
    }
  }
}

Status ConversationDriver::background_step(const EventFn& on_event) {
  if (!summary_wanted_ || !conv_) return {};
  auto fail = [&](Error error) -> Status {
    summary_.reset();
    summary_wanted_ = false;
    return error;
  };
  if (!summary_) {
    // Pre-empted by a reply that did not make a summary due again.
    summary_wanted_ = false;
    return {};
  }
  auto done = summary_->step();
  if (!done.ok()) return fail(done.error());
  if (!*done) return {};
  auto finished = summary_->finish();
  summary_.reset();
  summary_wanted_ = false;
  if (!finished.ok()) return finished;
  forward_events(on_event, nullptr);
  return {};
}

Status ConversationDriver::preempt(int64_t reply_room, const EventFn& on_event) {
  if (!summary_) return {};
  if (!summary_->done() && !conv_->turns().empty()) {
    // When the next exchange (about as long as the last, plus the reply) will
    // not fit without the summary, make_room would have to summarise from
    // scratch: finishing the steps left is the shorter wait.
    const auto& t = conv_->turns().back();
    if (t.end + (t.end - t.begin) + reply_room > engine_.session->n_ctx()) {
      while (true) {
        auto done = summary_->step();
        if (!done.ok()) {
          summary_.reset();
          summary_wanted_ = false;
          return done.error();
        }
        if (*done) break;
      }
    }
  }
  if (summary_->done()) {
    auto finished = summary_->finish();
    summary_.reset();
    summary_wanted_ = false;
    HEARTH_CHECK(finished);
    forward_events(on_event, nullptr);
    return {};
  }
  // Dropping the job gives the cache tail back; it starts over after the
  // reply when that reply leaves a summary due.
  summary_.reset();
  summary_wanted_ = false;
  return {};
}

}  // namespace hearth::app
