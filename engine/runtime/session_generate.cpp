// Session::generate: the token loop, plain or speculative. Both emit through
// one Emitter, so stop conditions, streaming and figures are the same
// whichever way a token was computed.
#include <hearth/engine/chat/stop.h>
#include <hearth/engine/runtime/session.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <numeric>

namespace hearth::runtime {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// The next step emits nothing: the emitter stopped generation.
constexpr int32_t kStopped = -1;
// The drafter proposed nothing: decode plainly.
constexpr int32_t kNoDraft = -2;

}  // namespace

struct Session::Emitter {
  Emitter(const GenerateOptions& o, const DetokenizeFn& d, const StreamFn& t, GenerateResult& r, int64_t ctx)
      : options(o), detokenize(d), on_token(t), result(r), n_ctx(ctx) {}
  const GenerateOptions& options;
  const DetokenizeFn& detokenize;
  const StreamFn& on_token;
  GenerateResult& result;
  int64_t n_ctx;
  chat::StopMatcher stops{options.stop_strings};
  std::vector<double> gaps;
  Clock::time_point last{};
  Clock::time_point first_token_time{};

  // Emits `token`, which follows `context_size` tokens in the cache (the
  // token itself not yet among them). False when generation ends here
  // (result.reason says why).
  bool emit(int32_t token, size_t context_size) {
    const auto now = Clock::now();
    if (result.tokens.empty()) {
      first_token_time = now;
    } else {
      gaps.push_back(ms_between(last, now));
    }
    last = now;
    const auto& eog = options.end_of_generation;
    if (std::find(eog.begin(), eog.end(), token) != eog.end()) {
      result.reason = StopReason::EndOfGeneration;
      return false;
    }
    result.tokens.push_back(token);
    const std::string shown = stops.push(detokenize ? detokenize(token) : std::string()).text;
    result.text += shown;
    if (on_token) on_token(TokenEvent{token, shown});
    if (stops.stopped()) {
      result.reason = StopReason::StopString;
      return false;
    }
    if (static_cast<int64_t>(context_size) >= n_ctx) {
      result.reason = StopReason::ContextFull;
      return false;
    }
    if (static_cast<int64_t>(result.tokens.size()) >= options.max_tokens) {
      result.reason = StopReason::MaxTokens;
      return false;
    }
    return true;
  }
};

Result<int32_t> Session::speculative_step(int32_t token, int32_t draft_length, sampling::Sampler& sampler,
                                          const GenerateOptions& options, Emitter& emitter) {
  Speculator& spec = *options.speculator;
  const auto t0 = Clock::now();
  draft_context_.assign(context_.begin(), context_.end());
  draft_context_.push_back(token);
  auto proposed = spec.drafter().propose(draft_context_, draft_length, sampler.config());
  if (!proposed.ok()) {
    spec.on_draft_error(proposed.error().message);
    return kNoDraft;
  }
  Draft& draft = *proposed;
  if (draft.tokens.size() > static_cast<size_t>(draft_length)) draft.tokens.resize(static_cast<size_t>(draft_length));
  if (draft.tokens.empty()) return kNoDraft;
  const auto t1 = Clock::now();

  const size_t base = context_.size();
  const auto n = static_cast<int32_t>(draft.tokens.size());
  draft_context_.assign(1, token);
  draft_context_.insert(draft_context_.end(), draft.tokens.begin(), draft.tokens.end());
  HEARTH_CHECK(verify(draft_context_, verify_rows_));
  const auto vocab = static_cast<size_t>(model_.hparams().n_vocab);
  auto row = [&](int32_t i) {
    return std::span<const float>(verify_rows_.data() + static_cast<size_t>(i) * vocab, vocab);
  };
  int32_t accepted = 0;
  int32_t next = -1;
  for (; accepted < n; ++accepted) {
    const auto q = draft.q.empty() ? std::span<const sampling::Candidate>()
                                   : std::span<const sampling::Candidate>(draft.q[static_cast<size_t>(accepted)]);
    const auto verdict = sampler.verify(row(accepted), draft.tokens[static_cast<size_t>(accepted)], q);
    if (!verdict.accepted) {
      next = verdict.token;
      break;
    }
  }
  if (next < 0) next = sampler.sample(row(n));
  // Rejected drafts leave the cache; the logits after the last kept token
  // stay the session's.
  HEARTH_CHECK(truncate(base + 1 + static_cast<size_t>(accepted)));
  const auto kept_row = row(accepted);
  logits_.assign(kept_row.begin(), kept_row.end());
  spec.on_verify(n, accepted, ms_between(t0, t1), ms_between(t1, Clock::now()));

  for (int32_t i = 0; i < accepted; ++i) {
    if (!emitter.emit(draft.tokens[static_cast<size_t>(i)], base + 1 + static_cast<size_t>(i))) {
      // As if decoded plainly: the cache holds every emitted token but the last.
      HEARTH_CHECK(truncate(base + 1 + static_cast<size_t>(i)));
      const auto r = row(i);
      logits_.assign(r.begin(), r.end());
      return kStopped;
    }
  }
  return next;
}

Result<GenerateResult> Session::generate(std::span<const int32_t> prompt, const GenerateOptions& options,
                                         const DetokenizeFn& detokenize, const StreamFn& on_token,
                                         const Cancellation& cancel) {
  GenerateResult result;
  const auto t0 = Clock::now();
  if (options.score_prompt_tokens > 0) {
    HEARTH_CHECK(prefill_scored(prompt, static_cast<size_t>(options.score_prompt_tokens), result.prompt_logprobs,
                                cancel));
  } else {
    HEARTH_CHECK(prefill(prompt, cancel));
  }
  const auto t_prefill = Clock::now();
  if (logits_.empty()) return make_error(ErrorCode::InvalidArgument, "generate: empty context and empty prompt");

  Speculator* spec = options.speculator;
  const SpecFigures spec_before = spec ? spec->figures() : SpecFigures{};
  sampling::Sampler sampler(options.sampler);
  for (int32_t t : context_) sampler.accept(t);
  Emitter emitter(options, detokenize, on_token, result, config_.n_ctx);
  emitter.last = t_prefill;
  result.reason = StopReason::MaxTokens;

  if (options.max_tokens > 0) {
    if (cancel.requested()) {
      result.reason = StopReason::Cancelled;
    } else {
      // log p(token) under the model's own distribution: a stable log-softmax.
      auto note_logprob = [&](int32_t token) {
        if (options.collect_logprobs && !spec) result.logprobs.push_back(log_prob_of(logits_, token));
      };
      int32_t token = sampler.sample(logits_);
      note_logprob(token);
      while (emitter.emit(token, context_.size())) {
        if (cancel.requested()) {
          result.reason = StopReason::Cancelled;
          break;
        }
        const auto step_start = Clock::now();
        int32_t length = spec ? spec->draft_length() : 0;
        if (length > 0) {
          // The verify pass holds the token and the drafts: within one
          // batch, the context and what is left of max_tokens (the step
          // emits one token of its own after the drafts).
          const int64_t room = std::min<int64_t>({config_.n_batch - 1, config_.n_ctx - 1 - static_cast<int64_t>(context_.size()),
                                                  options.max_tokens - 1 - static_cast<int64_t>(result.tokens.size())});
          length = static_cast<int32_t>(std::min<int64_t>(length, room));
        }
        if (length > 0) {
          HEARTH_TRY(const int32_t next, speculative_step(token, length, sampler, options, emitter));
          if (next == kStopped) break;
          if (next != kNoDraft) {
            token = next;
            continue;
          }
        }
        HEARTH_CHECK(decode(token));
        token = sampler.sample(logits_);
        note_logprob(token);
        if (spec) spec->on_plain_step(ms_between(step_start, Clock::now()));
      }
    }
  }
  if (!emitter.stops.stopped()) {
    const std::string tail = emitter.stops.flush();
    if (!tail.empty()) {
      result.text += tail;
      if (on_token) on_token(TokenEvent{-1, tail});
    }
  }

  Figures& f = result.figures;
  f.prompt_tokens = static_cast<int64_t>(prompt.size());
  f.generated_tokens = static_cast<int64_t>(result.tokens.size());
  f.context_tokens = static_cast<int64_t>(context_.size());
  const double prefill_ms = ms_between(t0, t_prefill);
  f.prefill_tps = prefill_ms > 0 ? static_cast<double>(prompt.size()) * 1000.0 / prefill_ms : 0;
  if (emitter.first_token_time != Clock::time_point{}) f.ttft_ms = ms_between(t0, emitter.first_token_time);
  if (!emitter.gaps.empty()) {
    const double sum = std::accumulate(emitter.gaps.begin(), emitter.gaps.end(), 0.0);
    f.decode_tps = sum > 0 ? 1000.0 * static_cast<double>(emitter.gaps.size()) / sum : 0;
    f.inter_token_p50_ms = percentile(emitter.gaps, 0.50);
    f.inter_token_p95_ms = percentile(emitter.gaps, 0.95);
  }
  if (spec) result.spec = spec->figures().since(spec_before);
  return result;
}

}  // namespace hearth::runtime
