#include "hearth/engine/runtime/session.h"

#include <hearth/engine/chat/stop.h>

#include <fmt/format.h>

#include <algorithm>
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

}  // namespace

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::MaxTokens: return "max_tokens";
    case StopReason::EndOfGeneration: return "end_of_generation";
    case StopReason::StopString: return "stop_string";
    case StopReason::ContextFull: return "context_full";
    case StopReason::Cancelled: return "cancelled";
  }
  return "?";
}


Result<std::unique_ptr<Session>> Session::create(const model::Model& model, backend::Backend& backend,
                                                 const SessionConfig& config) {
  if (config.n_batch <= 0) return make_error(ErrorCode::InvalidArgument, "session n_batch must be positive");
  std::unique_ptr<Session> s(new Session(model, backend, config));
  // Sliding-window layers are rings of window + n_batch positions on every
  // backend: the kernels (CPU and Vulkan) index the block table by logical
  // block, and the view tells them the table's length apart from the ring's
  // physical blocks. The ring bookkeeping (holds_history, re-prefills) lives
  // in the cache and the model, not in a backend.
  HEARTH_TRY(s->cache_, kv::KvCache::create(backend, model.kv_config(config.n_ctx, config.kv_type, config.n_batch,
                                                                      kv::WindowedLayers::Ring)));
  // Scratch up front, from the same function the memory estimate uses, so
  // the memory the user was shown is what is in use from the first token.
  HEARTH_TRY(const kv::ScratchSizes scratch, kv::scratch_sizes(model.memory_dims(), config.n_ctx, config.n_batch));
  HEARTH_CHECK(backend.reserve_scratch(backend::ScratchReservation{scratch.activation_bytes, scratch.matmul_bytes(), scratch.expert_bytes}));
  return s;
}

void Session::reset() {
  context_.clear();
  logits_.clear();
  cache_->clear();
}

Status Session::adopt_context(std::vector<int32_t> tokens) {
  if (static_cast<int64_t>(tokens.size()) > cache_->capacity()) {
    return make_error(ErrorCode::LimitExceeded, fmt::format("adopted context of {} tokens exceeds the KV cache of {}",
                                                            tokens.size(), cache_->capacity()));
  }
  if (!cache_->holds_history(static_cast<int64_t>(tokens.size()))) {
    HEARTH_CHECK(reprefill(std::move(tokens)));
    logits_.clear();  // as below: the next prefill computes them
    return {};
  }
  context_ = std::move(tokens);
  logits_.clear();
  cache_->set_used(static_cast<int64_t>(context_.size()));
  return {};
}

Status Session::reprefill(std::vector<int32_t> tokens) {
  ++reprefills_;
  reset();
  return prefill(tokens);
}

Status Session::truncate(size_t n) {
  if (n > context_.size()) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("cannot keep {} tokens of a context of {}", n, context_.size()));
  }
  if (!cache_->holds_history(static_cast<int64_t>(n))) {
    return reprefill(std::vector<int32_t>(context_.begin(), context_.begin() + static_cast<std::ptrdiff_t>(n)));
  }
  context_.resize(n);
  cache_->set_used(static_cast<int64_t>(n));
  if (n == 0) logits_.clear();
  return {};
}

Status Session::prefill(std::span<const int32_t> tokens, const Cancellation& cancel) {
  if (static_cast<int64_t>(context_.size() + tokens.size()) > config_.n_ctx) {
    if (context_.empty()) {
      return make_error(ErrorCode::LimitExceeded, fmt::format("the prompt has {} tokens but the context holds {}",
                                                              tokens.size(), config_.n_ctx));
    }
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("{} more tokens do not fit: {} of the context's {} positions are already used",
                                  tokens.size(), context_.size(), config_.n_ctx));
  }
  for (size_t start = 0; start < tokens.size(); start += static_cast<size_t>(config_.n_batch)) {
    if (cancel.requested()) {
      return make_error(ErrorCode::Cancelled, fmt::format("prefill cancelled after {} of {} tokens", start,
                                                          tokens.size()));
    }
    const size_t n = std::min(tokens.size() - start, static_cast<size_t>(config_.n_batch));
    positions_.resize(n);
    std::iota(positions_.begin(), positions_.end(), static_cast<int32_t>(context_.size()));
    const auto batch = tokens.subspan(start, n);
    ++forward_passes_;
    HEARTH_CHECK(model_.forward(backend_, *cache_, model::Batch{batch, positions_}, model::LogitsRows::Last, logits_));
    context_.insert(context_.end(), batch.begin(), batch.end());
  }
  return {};
}

Status Session::decode(int32_t token) { return prefill(std::span<const int32_t>(&token, 1)); }

Result<GenerateResult> Session::generate(std::span<const int32_t> prompt, const GenerateOptions& options,
                                         const DetokenizeFn& detokenize, const StreamFn& on_token,
                                         const Cancellation& cancel) {
  GenerateResult result;
  const auto t0 = Clock::now();
  HEARTH_CHECK(prefill(prompt, cancel));
  const auto t_prefill = Clock::now();
  if (logits_.empty()) return make_error(ErrorCode::InvalidArgument, "generate: empty context and empty prompt");

  sampling::Sampler sampler(options.sampler);
  for (int32_t t : context_) sampler.accept(t);
  chat::StopMatcher stops(options.stop_strings);
  std::vector<double> gaps;
  auto last = t_prefill;
  Clock::time_point first_token_time{};
  result.reason = StopReason::MaxTokens;

  for (int32_t i = 0; i < options.max_tokens; ++i) {
    if (cancel.requested()) {
      result.reason = StopReason::Cancelled;
      break;
    }
    const int32_t token = sampler.sample(logits_);
    const auto now = Clock::now();
    if (i == 0) {
      first_token_time = now;
    } else {
      gaps.push_back(ms_between(last, now));
    }
    last = now;
    if (std::find(options.end_of_generation.begin(), options.end_of_generation.end(), token) !=
        options.end_of_generation.end()) {
      result.reason = StopReason::EndOfGeneration;
      break;
    }
    result.tokens.push_back(token);
    const std::string shown = stops.push(detokenize ? detokenize(token) : std::string()).text;
    result.text += shown;
    if (on_token) on_token(TokenEvent{token, shown});
    if (stops.stopped()) {
      result.reason = StopReason::StopString;
      break;
    }
    if (static_cast<int64_t>(context_.size()) >= config_.n_ctx) {
      result.reason = StopReason::ContextFull;
      break;
    }
    if (i + 1 < options.max_tokens) HEARTH_CHECK(decode(token));
  }
  if (!stops.stopped()) {
    const std::string tail = stops.flush();
    if (!tail.empty()) {
      result.text += tail;
      if (on_token) on_token(TokenEvent{-1, tail});
    }
  }
  const auto t_end = Clock::now();

  Figures& f = result.figures;
  f.prompt_tokens = static_cast<int64_t>(prompt.size());
  f.generated_tokens = static_cast<int64_t>(result.tokens.size());
  f.context_tokens = static_cast<int64_t>(context_.size());
  const double prefill_ms = ms_between(t0, t_prefill);
  f.prefill_tps = prefill_ms > 0 ? static_cast<double>(prompt.size()) * 1000.0 / prefill_ms : 0;
  if (first_token_time != Clock::time_point{}) f.ttft_ms = ms_between(t0, first_token_time);
  if (!gaps.empty()) {
    const double sum = std::accumulate(gaps.begin(), gaps.end(), 0.0);
    f.decode_tps = 1000.0 * static_cast<double>(gaps.size()) / sum;
    f.inter_token_p50_ms = percentile(gaps, 0.50);
    f.inter_token_p95_ms = percentile(gaps, 0.95);
  }
  (void)t_end;
  return result;
}

}  // namespace hearth::runtime
