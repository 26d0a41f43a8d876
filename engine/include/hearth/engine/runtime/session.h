// A Session owns the KV cache of one conversation: it prefills prompts in
// batches, decodes token by token, streams pieces through a callback, stops on
// end-of-generation tokens, stop strings or cancellation, and measures itself.
#pragma once

#include <hearth/engine/backend/backend.h>
#include <hearth/engine/kv/kv_cache.h>
#include <hearth/engine/kv/memory_estimate.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/cancellation.h>
#include <hearth/engine/runtime/speculation.h>
#include <hearth/engine/sampling/sampler.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::runtime {

struct SessionConfig {
  int64_t n_ctx = 2048;
  DType kv_type = DType::F16;
  // Prompt tokens per forward pass; the activation memory reserved on the
  // backend at create() is sized for this batch (kv::scratch_sizes).
  int32_t n_batch = static_cast<int32_t>(kv::kScratchBatchTokens);
};

enum class StopReason { MaxTokens, EndOfGeneration, StopString, ContextFull, Cancelled };
const char* to_string(StopReason reason);


struct GenerateOptions {
  int32_t max_tokens = 256;
  sampling::SamplerConfig sampler;
  std::vector<int32_t> end_of_generation;  // token ids that end a reply (EOS, EOT, ...)
  std::vector<std::string> stop_strings;
  // Speculative decoding (nullptr: off). Not owned; it keeps its adaptive
  // state across the requests of a conversation.
  Speculator* speculator = nullptr;
  // Record the model's log-probability of each generated token (natural log,
  // of the raw distribution before sampling settings), in GenerateResult::
  // logprobs. Only without a speculator: a router's confidence probe uses it.
  bool collect_logprobs = false;
  // Score the last N prompt tokens (0: none): record the model's
  // log-probability of each of them given what precedes it, in
  // GenerateResult::prompt_logprobs. How familiar a question is to a model
  // says whether it can answer it (a router's second signal); those tokens
  // run with logits for every row, so this is off for ordinary replies.
  int32_t score_prompt_tokens = 0;
};

// Called for every generated token with its text (possibly empty while a stop
// string or a UTF-8 sequence is held back).
struct TokenEvent {
  int32_t token;
  std::string_view text;
};
using StreamFn = std::function<void(const TokenEvent&)>;
// Turns a token into its text piece (the tokenizer's job).
using DetokenizeFn = std::function<std::string(int32_t token)>;

struct Figures {
  double ttft_ms = 0;           // request start to first generated token
  double prefill_tps = 0;
  double decode_tps = 0;
  double inter_token_p50_ms = 0;
  double inter_token_p95_ms = 0;
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  int64_t context_tokens = 0;   // tokens in the KV cache after the request
};

struct GenerateResult {
  std::vector<int32_t> tokens;
  // With GenerateOptions::collect_logprobs: one per sampled token (the last may
  // be the end-of-generation token, which is not in `tokens`); else empty.
  std::vector<float> logprobs;
  // With GenerateOptions::score_prompt_tokens: log p(token | the tokens
  // before it) for the scored prompt tokens that had a predecessor.
  std::vector<float> prompt_logprobs;
  std::string text;
  StopReason reason = StopReason::MaxTokens;
  Figures figures;
  SpecFigures spec;  // this request's share of the speculator's figures
};

// log p(token) under softmax(logits), in natural log (a stable log-softmax).
float log_prob_of(std::span<const float> logits, int32_t token);

class Session {
 public:
  static Result<std::unique_ptr<Session>> create(const model::Model& model, backend::Backend& backend,
                                                 const SessionConfig& config);

  // Appends `tokens` to the context in batches of n_batch; the last token's
  // logits are kept for the next sample. `cancel` is asked before every
  // batch: a cancelled prefill returns ErrorCode::Cancelled with the batches
  // done so far kept as the context (the cache stays consistent with it).
  Status prefill(std::span<const int32_t> tokens, const Cancellation& cancel = {});
  // prefill(), with the last `n_scored` tokens run with logits for every row:
  // appends log p(token | context before it) for each of them that has a
  // predecessor to `logprobs`. last_logits() ends as after prefill().
  Status prefill_scored(std::span<const int32_t> tokens, size_t n_scored, std::vector<float>& logprobs,
                        const Cancellation& cancel = {});
  // Appends one token and computes its logits.
  Status decode(int32_t token);
  std::span<const float> last_logits() const { return logits_; }
  // Appends `tokens` (at most n_batch) in one forward pass and writes the
  // logits after each of them into `rows` (tokens.size() x n_vocab): the
  // verify pass of speculative decoding. last_logits() is left as it was;
  // truncate() drops the rejected tail.
  Status verify(std::span<const int32_t> tokens, std::vector<float>& rows);
  int64_t n_vocab() const;

  // Prefills `prompt` (appended to what the session holds) and generates.
  // `cancel` is checked before every prompt batch and every token.
  Result<GenerateResult> generate(std::span<const int32_t> prompt, const GenerateOptions& options,
                                  const DetokenizeFn& detokenize, const StreamFn& on_token,
                                  const Cancellation& cancel = {});

  void reset();
  // Adopts `tokens` as the context when positions 0..n-1 of the cache already
  // hold their K/V (restored from a prefix cache, or moved and re-rotated by
  // an evict). The next prefill computes fresh logits.
  // With sliding-window rings (every backend), when the rings lost keys the next
  // position's window needs, the tokens are prefilled again instead.
  Status adopt_context(std::vector<int32_t> tokens);
  // Keeps the first `n` tokens of the context (and their K/V); the next
  // prefill continues from there. Lets a chat reuse the common prefix of the
  // previous request instead of prefilling the whole conversation again.
  // Rings that lost the window before n: as adopt_context.
  Status truncate(size_t n);
  // How often adopt_context or truncate had to prefill again (windowed
  // layers whose ring no longer held the positions a rewind needs).
  int64_t reprefills() const { return reprefills_; }
  const std::vector<int32_t>& context() const { return context_; }
  int64_t n_ctx() const { return cache_->capacity(); }
  kv::KvCache& cache() { return *cache_; }
  // Forward passes run so far (prefill batches and decoded tokens): lets a
  // test see where a cancellation took effect.
  int64_t forward_passes() const { return forward_passes_; }

 private:
  struct Emitter;
  // The speculative part of generate(): drafts after `token`, verifies, and
  // emits what was accepted; returns the next token to emit (or -1 when the
  // emitter stopped).
  Result<int32_t> speculative_step(int32_t token, int32_t draft_length, sampling::Sampler& sampler,
                                   const GenerateOptions& options, Emitter& emitter);
  // Prefills `tokens` into an empty cache (the rings' fallback).
  Status reprefill(std::vector<int32_t> tokens);
  int64_t reprefills_ = 0;
  int64_t forward_passes_ = 0;

  Session(const model::Model& model, backend::Backend& backend, const SessionConfig& config)
      : model_(model), backend_(backend), config_(config) {}

  const model::Model& model_;
  backend::Backend& backend_;
  SessionConfig config_;
  std::unique_ptr<kv::KvCache> cache_;
  std::vector<int32_t> context_;
  std::vector<float> logits_;
  std::vector<int32_t> positions_;
  std::vector<float> verify_rows_;
  std::vector<int32_t> draft_context_;
};

}  // namespace hearth::runtime
