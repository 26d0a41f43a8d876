// What the HTTP server asks of whatever runs the model: take a generation
// request (prompt tokens already rendered by the engine's chat layer), stream
// its tokens back through callbacks, and stop it on request. The first
// implementation (engine_backend.h) serves one request at a time on a worker
// thread; a batched scheduler can replace it behind the same interface.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/runtime/cancellation.h>
#include <hearth/engine/runtime/chat_format.h>
#include <hearth/engine/sampling/sampler.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace hearth::server {

// Restricts which tokens may come next (grammar-constrained sampling). One
// instance follows one sequence; the backend feeds it every accepted token.
class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;
  // Sets allowed[t] = false for every token that may not come next; the
  // vector has one entry per vocabulary token, all true on entry. An
  // end-of-generation token is allowed only when the output is complete.
  virtual void mask(std::vector<bool>& allowed, const std::vector<int32_t>& end_of_generation) const = 0;
  // Records the token that was chosen.
  virtual void accept(int32_t token) = 0;
  // Whether the output so far is a whole document (generation may end).
  virtual bool complete() const = 0;
};

struct GenerationRequest {
  std::vector<int32_t> prompt;
  sampling::SamplerConfig sampler;
  int32_t max_tokens = 16;
  std::vector<std::string> stop;
  // Strip spaces before the first visible character (chat replies, as the
  // engine's chat layer shows them); completions keep every byte.
  bool strip_leading_space = false;
  // -1: no logprobs; 0..20: the chosen token's logprob and that many alternatives.
  int32_t top_logprobs = -1;
  // The model's end-of-generation tokens are never drawn (the reply runs to
  // max_tokens or a stop string).
  bool ignore_eos = false;
  // Score how familiar the last N prompt tokens are to the model
  // (Completion::prompt_mean_logprob); 0: off. The "auto" model's probe asks
  // for it; a backend that cannot score leaves prompt_scored_tokens at 0.
  int32_t score_prompt_tokens = 0;
  std::unique_ptr<TokenConstraint> constraint;  // null: unconstrained
  runtime::Cancellation cancel;                 // asked before every prefill batch and token
};

struct TokenLogprob {
  std::string text;
  float logprob = 0;
};

// One generated token as shown: text may be empty while a stop string or an
// incomplete UTF-8 character is held back.
struct TokenOut {
  int32_t token = -1;  // -1: text released at the end (held-back bytes)
  std::string text;
  bool has_logprob = false;
  TokenLogprob chosen;
  std::vector<TokenLogprob> top;
};

enum class FinishReason { Stop, Length, Cancelled, Error };
const char* to_string(FinishReason reason);

struct Completion {
  FinishReason reason = FinishReason::Stop;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;  // prompt tokens whose KV was reused
  // With GenerationRequest::score_prompt_tokens: the mean log-probability of
  // the scored prompt tokens, and how many were scored.
  double prompt_mean_logprob = 0;
  int64_t prompt_scored_tokens = 0;
  std::string error;          // FinishReason::Error: why
};

struct GenerationCallbacks {
  std::function<void(const TokenOut&)> on_token;
  std::function<void(const Completion&)> on_done;  // called exactly once, last
};

struct ModelDescription {
  std::string id;            // what /v1/models lists and requests may name
  int64_t context_length = 0;
  int64_t created = 0;       // seconds since the epoch (the file's mtime)
};

// Speculative decoding over the requests finished so far (all zero when the
// backend does not speculate), for /health.
struct SpeculationTotals {
  int64_t requests = 0;  // requests that drafted (or could have: the policy may keep drafts off)
  int64_t drafted = 0;
  int64_t accepted = 0;
};

class CompletionBackend {
 public:
  virtual ~CompletionBackend() = default;
  // Queues the request. LimitExceeded when the queue is full (HTTP 429),
  // InvalidArgument when the prompt does not fit the context.
  virtual Result<uint64_t> submit(GenerationRequest request, GenerationCallbacks callbacks) = 0;
  // Stops a queued or running request; its on_done reports Cancelled.
  virtual void cancel(uint64_t id) = 0;
  virtual const ModelDescription& model() const = 0;
  // The chat layer requests are rendered with (message text never becomes control tokens).
  virtual const runtime::ChatFormat& format() const = 0;
  virtual std::vector<int32_t> end_of_generation() const = 0;
  virtual int64_t vocab_size() const = 0;
  // Requests queued or running, for /health and the app's request count.
  virtual int64_t pending() const = 0;
  virtual SpeculationTotals speculation() const { return {}; }
};

}  // namespace hearth::server
