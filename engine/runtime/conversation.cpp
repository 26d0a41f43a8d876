#include "hearth/engine/runtime/conversation.h"

#include <hearth/engine/runtime/kv_shift.h>
#include <hearth/engine/runtime/prefix_reuse.h>
#include <hearth/engine/sampling/sampler.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <numeric>

namespace hearth::runtime {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

}  // namespace

const char* to_string(OverflowPolicy policy) {
  switch (policy) {
    case OverflowPolicy::Stop: return "stop";
    case OverflowPolicy::Evict: return "evict";
    case OverflowPolicy::Summarize: return "summarize";
  }
  return "?";
}

Result<OverflowPolicy> parse_overflow_policy(std::string_view text) {
  if (text == "stop") return OverflowPolicy::Stop;
  if (text == "evict") return OverflowPolicy::Evict;
  if (text == "summarize") return OverflowPolicy::Summarize;
  return make_error(ErrorCode::InvalidArgument,
                    fmt::format("overflow policy '{}' is not one of stop, evict, summarize", text));
}

const char* to_string(OverflowAction action) {
  switch (action) {
    case OverflowAction::Stopped: return "stopped";
    case OverflowAction::Evicted: return "evicted";
    case OverflowAction::Summarized: return "summarized";
  }
  return "?";
}

Conversation::Conversation(Session& session, const model::Model& model, backend::Backend& backend,
                           ConversationConfig config, DetokenizeFn detokenize, kv::PrefixIndex* prefix)
    : session_(session),
      model_(model),
      backend_(backend),
      config_(std::move(config)),
      detokenize_(std::move(detokenize)),
      prefix_(prefix) {}

Conversation::~Conversation() = default;

Status Conversation::set_system(std::span<const int32_t> tokens, const Cancellation& cancel) {
  if (summary_running_) return make_error(ErrorCode::InvalidArgument, "set_system while a summary is running");
  turns_.clear();
  turn_begin_ = -1;
  if (tokens.empty()) {
    session_.reset();
    return {};
  }
  HEARTH_CHECK(prefill_reusing(session_, prefix_, tokens, cancel));
  turns_.push_back(Turn{next_id_++, TurnRole::System, 0, static_cast<int64_t>(tokens.size())});
  return {};
}

int64_t Conversation::pinned_end() const {
  int64_t end = 0;
  for (const Turn& t : turns_) {
    if (t.role == TurnRole::Exchange) break;
    end = t.end;
  }
  return end;
}

void Conversation::begin_turn() { turn_begin_ = static_cast<int64_t>(session_.context().size()); }

void Conversation::end_turn() {
  const auto end = static_cast<int64_t>(session_.context().size());
  if (turn_begin_ >= 0 && end > turn_begin_) turns_.push_back(Turn{next_id_++, TurnRole::Exchange, turn_begin_, end});
  turn_begin_ = -1;
}

Status Conversation::rollback(int64_t n) {
  if (summary_running_) return make_error(ErrorCode::InvalidArgument, "rollback while a summary is running");
  const auto used = static_cast<int64_t>(session_.context().size());
  const int64_t floor = turn_begin_ >= 0 ? turn_begin_
                        : (!turns_.empty() && turns_.back().role == TurnRole::Exchange) ? turns_.back().begin
                                                                                         : used;
  if (n < 0 || used - n < floor) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("rolling back {} of {} tokens would cut into an earlier turn (it starts at {})",
                                  n, used, floor));
  }
  if (n == 0) return {};
  HEARTH_CHECK(session_.truncate(static_cast<size_t>(used - n)));
  if (turn_begin_ < 0) turns_.back().end = used - n;
  return {};
}

Status Conversation::keep_turns(size_t keep) {
  if (summary_running_) return make_error(ErrorCode::InvalidArgument, "keep_turns while a summary is running");
  if (keep > turns_.size()) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("keep_turns({}) of {} turns", keep, turns_.size()));
  }
  turns_.resize(keep);
  turn_begin_ = -1;
  HEARTH_CHECK(session_.truncate(static_cast<size_t>(turns_.empty() ? 0 : turns_.back().end)));
  return {};
}

Status Conversation::replace_range(int64_t begin, int64_t end, std::span<const int32_t> insert) {
  const std::vector<int32_t> ctx = session_.context();
  const auto used = static_cast<int64_t>(ctx.size());
  const auto m = static_cast<int64_t>(insert.size());
  const int64_t delta = begin + m - end;
  if (used + delta > session_.n_ctx()) {
    return make_error(ErrorCode::LimitExceeded, fmt::format("replacing positions {}..{} by {} tokens overflows {}",
                                                            begin, end, m, session_.n_ctx()));
  }
  auto& cache = session_.cache();
  std::vector<int32_t> next(ctx.begin(), ctx.begin() + begin);
  next.insert(next.end(), insert.begin(), insert.end());
  next.insert(next.end(), ctx.begin() + end, ctx.end());
  if (cache.has_rings()) {
    // Sliding-window rings hold only the last positions, which a shift
    // cannot re-rotate into a full window: prefill the kept context again.
    cache.invalidate_rings();
  } else {
    HEARTH_CHECK(relocate_and_insert(cache, begin, end, insert));
  }
  HEARTH_CHECK(session_.adopt_context(std::move(next)));
  update_turns(begin, end, delta);
  return {};
}

Status Conversation::relocate_and_insert(kv::KvCache& cache, int64_t begin, int64_t end,
                                         std::span<const int32_t> insert) {
  const auto used = static_cast<int64_t>(session_.context().size());
  const auto m = static_cast<int64_t>(insert.size());
  HEARTH_CHECK(relocate_positions(backend_, cache, model_.hparams(), end, begin + m, used - end));
  if (m > 0) {
    // Attention is causal by position, so the note only sees what precedes it.
    std::vector<int32_t> positions(static_cast<size_t>(m));
    std::iota(positions.begin(), positions.end(), static_cast<int32_t>(begin));
    std::vector<float> logits;
    HEARTH_CHECK(model_.forward(backend_, cache, model::Batch{insert, positions}, model::LogitsRows::Last, logits));
  }
  return {};
}

void Conversation::update_turns(int64_t begin, int64_t end, int64_t delta) {
  std::vector<Turn> kept;
  for (Turn t : turns_) {
    if (t.begin >= begin && t.end <= end) continue;
    if (t.begin >= end) {
      t.begin += delta;
      t.end += delta;
    }
    kept.push_back(t);
  }
  turns_ = std::move(kept);
  if (turn_begin_ >= end) turn_begin_ += delta;
}

Status Conversation::evict_for(int64_t needed, bool& fits, const Cancellation& cancel) {
  const auto t0 = Clock::now();
  const auto used = static_cast<int64_t>(session_.context().size());
  const int64_t start = pinned_end();
  int64_t end = start;
  std::vector<int64_t> dropped;
  for (const Turn& t : turns_) {
    if (t.role != TurnRole::Exchange) continue;
    if (used - (end - start) + needed <= session_.n_ctx()) break;
    end = t.end;
    dropped.push_back(t.id);
  }
  fits = used - (end - start) + needed <= session_.n_ctx();
  if (!fits) return {};  // nothing is dropped for a turn that would not fit anyway
  if (dropped.empty()) return {};
  if (cancel.requested()) return make_error(ErrorCode::Cancelled, "evicting turns was cancelled before the K-shift");
  HEARTH_CHECK(replace_range(start, end, {}));
  OverflowEvent e;
  e.action = OverflowAction::Evicted;
  e.turn_ids = std::move(dropped);
  e.tokens_freed = end - start;
  e.pause_ms = ms_since(t0);
  events_.push_back(std::move(e));
  return {};
}

Result<bool> Conversation::make_room(int64_t needed, const Cancellation& cancel) {
  if (summary_running_) return make_error(ErrorCode::InvalidArgument, "make_room while a summary is running");
  const auto used = static_cast<int64_t>(session_.context().size());
  if (used + needed <= session_.n_ctx()) return true;
  if (config_.policy == OverflowPolicy::Summarize) {
    // The summary was not made ahead (no room, or turns too long for the
    // threshold): make it now, a pause the event reports.
    HEARTH_TRY(auto job, start_summary());
    if (job) {
      while (true) {
        // Dropping the job on cancel gives the cache tail back.
        if (cancel.requested()) return make_error(ErrorCode::Cancelled, "the summary was cancelled");
        HEARTH_TRY(const bool done, job->step());
        if (done) break;
      }
      HEARTH_CHECK(job->finish());
      if (static_cast<int64_t>(session_.context().size()) + needed <= session_.n_ctx()) return true;
    }
  }
  bool fits = false;
  if (config_.policy != OverflowPolicy::Stop) HEARTH_CHECK(evict_for(needed, fits, cancel));
  if (fits) return true;
  OverflowEvent e;
  e.action = OverflowAction::Stopped;
  e.reason = config_.policy == OverflowPolicy::Stop
                 ? fmt::format("context full: {} of {} positions used, the turn needs {} more", used,
                               session_.n_ctx(), needed)
                 : fmt::format("the turn needs {} positions but only {} of {} are not pinned", needed,
                               session_.n_ctx() - pinned_end(), session_.n_ctx());
  events_.push_back(std::move(e));
  return false;
}

bool Conversation::summary_due(int64_t upcoming) const {
  if (config_.policy != OverflowPolicy::Summarize || summary_running_) return false;
  const auto used = static_cast<double>(static_cast<int64_t>(session_.context().size()) + upcoming);
  if (used < config_.summarize_at * static_cast<double>(session_.n_ctx())) return false;
  return std::any_of(turns_.begin(), turns_.end(), [](const Turn& t) { return t.role == TurnRole::Exchange; });
}

Result<std::unique_ptr<SummaryJob>> Conversation::start_summary() {
  if (summary_running_) return make_error(ErrorCode::InvalidArgument, "a summary is already running");
  // The note replaces the previous note (if any) and the oldest exchanges,
  // about half of what is not the system prompt, keeping the latest exchange.
  int64_t start = 0;
  std::vector<const Turn*> exchanges;
  std::vector<int64_t> ids;
  for (const Turn& t : turns_) {
    if (t.role == TurnRole::System) start = t.end;
    if (t.role == TurnRole::Summary) ids.push_back(t.id);
    if (t.role == TurnRole::Exchange) exchanges.push_back(&t);
  }
  if (exchanges.empty()) return std::unique_ptr<SummaryJob>();
  const auto used = static_cast<int64_t>(session_.context().size());
  const int64_t target = start + (used - start) / 2;
  int64_t end = start;
  for (size_t i = 0; i < exchanges.size(); ++i) {
    if (i > 0 && (end >= target || i + 1 == exchanges.size())) break;
    end = exchanges[i]->end;
    ids.push_back(exchanges[i]->id);
  }
  const auto request = static_cast<int64_t>(config_.summary_request.size());
  const auto prefix = static_cast<int64_t>(config_.note_prefix.size());
  const int64_t room = session_.n_ctx() - used - request;
  const int64_t max_tokens =
      std::min<int64_t>({config_.summary_max_tokens, room, end - start - prefix - 1});
  if (max_tokens < 1) return std::unique_ptr<SummaryJob>();
  std::unique_ptr<SummaryJob> job(new SummaryJob(*this));
  job->saved_context_ = session_.context();
  job->covered_end_ = end;
  job->covered_ids_ = std::move(ids);
  job->max_tokens_ = static_cast<int32_t>(max_tokens);
  summary_running_ = true;
  return job;
}

Result<bool> SummaryJob::step() {
  if (done_) return true;
  const auto t0 = Clock::now();
  Session& s = conv_.session_;
  const auto& cfg = conv_.config_;
  if (s.context().size() == saved_context_.size()) {
    // First step: the request, appended after the whole conversation.
    if (!cfg.summary_request.empty()) {
      HEARTH_CHECK(s.prefill(cfg.summary_request));
    } else {
      done_ = true;
    }
  } else {
    const int32_t token = sampling::argmax(s.last_logits());
    const bool eog = std::find(cfg.end_of_generation.begin(), cfg.end_of_generation.end(), token) !=
                     cfg.end_of_generation.end();
    if (!eog) summary_.push_back(token);
    if (eog || static_cast<int32_t>(summary_.size()) >= max_tokens_) {
      done_ = true;
    } else {
      HEARTH_CHECK(s.decode(token));
    }
  }
  elapsed_ms_ += ms_since(t0);
  return done_;
}

Status SummaryJob::finish() {
  if (!done_ || finished_) return make_error(ErrorCode::InvalidArgument, "summary finish before it is done");
  const auto t0 = Clock::now();
  Conversation& c = conv_;
  finished_ = true;
  c.summary_running_ = false;
  // Drop the request and the generated tail, then fold the turns into the note.
  HEARTH_CHECK(c.session_.adopt_context(saved_context_));
  int64_t start = 0;
  for (const Turn& t : c.turns_) {
    if (t.role == TurnRole::System) start = t.end;
  }
  std::vector<int32_t> note = c.config_.note_prefix;
  note.insert(note.end(), summary_.begin(), summary_.end());
  HEARTH_CHECK(c.replace_range(start, covered_end_, note));
  const auto at = std::find_if(c.turns_.begin(), c.turns_.end(), [](const Turn& t) { return t.role != TurnRole::System; });
  c.turns_.insert(at, Turn{c.next_id_++, TurnRole::Summary, start, start + static_cast<int64_t>(note.size())});

  OverflowEvent e;
  e.action = OverflowAction::Summarized;
  e.turn_ids = covered_ids_;
  e.tokens_freed = covered_end_ - start - static_cast<int64_t>(note.size());
  if (c.detokenize_) {
    for (int32_t t : summary_) e.summary += c.detokenize_(t);
  }
  e.pause_ms = elapsed_ms_ + ms_since(t0);
  c.events_.push_back(std::move(e));
  return {};
}

SummaryJob::~SummaryJob() {
  if (finished_) return;
  // Abandoned (chat needed the session): forget the tail, keep the turns.
  conv_.summary_running_ = false;
  (void)conv_.session_.adopt_context(saved_context_);
}

}  // namespace hearth::runtime
