#include "hearth/engine/runtime/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace hearth::runtime {

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

float log_prob_of(std::span<const float> logits, int32_t token) {
  const float max_logit = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l - max_logit));
  return static_cast<float>(static_cast<double>(logits[static_cast<size_t>(token)] - max_logit) - std::log(sum));
}

Status Session::prefill_scored(std::span<const int32_t> tokens, size_t n_scored, std::vector<float>& logprobs,
                               const Cancellation& cancel) {
  n_scored = std::min(n_scored, tokens.size());
  const size_t head = tokens.size() - n_scored;
  HEARTH_CHECK(prefill(tokens.first(head), cancel));
  if (n_scored == 0) return {};
  if (static_cast<int64_t>(context_.size() + n_scored) > config_.n_ctx) {
    return prefill(tokens.subspan(head), cancel);  // its error names the overflow
  }
  // The logits before the first scored token are the prefix's last ones.
  if (!logits_.empty()) logprobs.push_back(log_prob_of(logits_, tokens[head]));
  const auto n_vocab = static_cast<size_t>(model_.hparams().n_vocab);
  for (size_t start = head; start < tokens.size(); start += static_cast<size_t>(config_.n_batch)) {
    if (cancel.requested()) {
      return make_error(ErrorCode::Cancelled, fmt::format("prefill cancelled after {} of {} tokens", start,
                                                          tokens.size()));
    }
    const size_t n = std::min(tokens.size() - start, static_cast<size_t>(config_.n_batch));
    HEARTH_CHECK(verify(tokens.subspan(start, n), verify_rows_));
    // Row i holds the logits after token start + i: they score the next one.
    for (size_t i = 0; i < n && start + i + 1 < tokens.size(); ++i) {
      const std::span<const float> row(verify_rows_.data() + i * n_vocab, n_vocab);
      logprobs.push_back(log_prob_of(row, tokens[start + i + 1]));
    }
    const auto last = verify_rows_.begin() + static_cast<std::ptrdiff_t>((n - 1) * n_vocab);
    logits_.assign(last, last + static_cast<std::ptrdiff_t>(n_vocab));
  }
  return {};
}

Status Session::decode(int32_t token) { return prefill(std::span<const int32_t>(&token, 1)); }

int64_t Session::n_vocab() const { return model_.hparams().n_vocab; }

Status Session::verify(std::span<const int32_t> tokens, std::vector<float>& rows) {
  if (tokens.empty() || static_cast<int64_t>(tokens.size()) > config_.n_batch) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("a verify pass takes 1 to {} tokens, not {}", config_.n_batch, tokens.size()));
  }
  if (static_cast<int64_t>(context_.size() + tokens.size()) > config_.n_ctx) {
    return make_error(ErrorCode::LimitExceeded, fmt::format("{} tokens to verify do not fit after {} of {} positions",
                                                            tokens.size(), context_.size(), config_.n_ctx));
  }
  positions_.resize(tokens.size());
  std::iota(positions_.begin(), positions_.end(), static_cast<int32_t>(context_.size()));
  ++forward_passes_;
  HEARTH_CHECK(model_.forward(backend_, *cache_, model::Batch{tokens, positions_}, model::LogitsRows::All, rows));
  context_.insert(context_.end(), tokens.begin(), tokens.end());
  return {};
}

}  // namespace hearth::runtime
