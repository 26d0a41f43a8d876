// Continuous batching: many sequences decoded together, one forward pass per
// step. Every step holds one decode token for each running sequence plus,
// within max_batch_tokens, chunks of pending prompts; a request submitted
// between steps joins at the next one, and a finished or cancelled sequence
// leaves and returns its KV blocks at once. The sequences share one paged
// KV pool (kv::KvPool): each has its own block table, and a prompt that
// starts like a running sequence's context (the same system prompt) shares
// that sequence's blocks instead of computing them again.
//
// Priorities: Interactive sequences (the app's chat) are placed first in
// every step (their decode token, then their prompt chunk) and are admitted
// even when the running slots are full; when the pool's blocks are all
// reserved they preempt the least urgent running sequences (which free
// their blocks, wait, and recompute their context when readmitted). So a
// burst of other requests never delays their next token by more than one
// step.
//
// Admission reserves the blocks a sequence's whole reply can reach
// (min(prompt + max_tokens, n_ctx)), so a running sequence never finds the
// pool empty; the pool holds `parallel` such slots of n_ctx.
//
// Threads: submit() may be called from any thread; step() runs on one thread
// at a time (the run loop's, once start() was called, or a test's), and the
// event callbacks run on it.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/backend/backend.h>
#include <hearth/engine/kv/kv_pool.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/cancellation.h>
#include <hearth/engine/runtime/session.h>
#include <hearth/engine/runtime/speculation.h>
#include <hearth/engine/sampling/sampler.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::runtime {

using SequenceId = int64_t;

enum class Priority { Interactive = 0, Normal = 1, Background = 2 };

struct SequenceRequest {
  std::vector<int32_t> prompt;  // at least one token
  sampling::SamplerConfig sampler;
  int32_t max_tokens = 256;
  std::vector<std::string> stop_strings;
  std::vector<int32_t> end_of_generation;  // ids that end the reply (not streamed)
  // Ids never drawn (a benchmark's ignore_eos): their logits are set to -inf
  // before the sequence's sampler sees a row. Not applied to `choose`.
  std::vector<int32_t> masked_tokens;
  Priority priority = Priority::Normal;
  // Asked at every step, and again right after each Token event, so a
  // caller that sees what it waited for (its own stop rule, a closed
  // connection) ends the sequence before another token is computed.
  Cancellation cancel;
  // Chooses each token from the sequence's row of logits in place of a plain
  // draw (a grammar's mask, log-probabilities); it draws with the sequence's
  // own sampler so penalties and seeds stay per sequence. Empty: the sampler
  // draws. Runs during the step on one of the backend's host threads (the
  // stepping thread or a pool worker, run_host_tasks), beside other
  // sequences' draws but never beside another call for this sequence.
  std::function<int32_t(std::span<const float> logits, sampling::Sampler& sampler)> choose;
  // Speculative decoding for this sequence (null: off). Used only when
  // `choose` is empty (a grammar or log-probabilities need every token
  // drawn in turn). Drafts fill the rows a decode-only step leaves free
  // under kVerifyRowsMax, so a verify pass runs on the same few-token
  // kernels as plain decoding and greedy output stays exactly the same; a
  // step that holds prompt chunks, or decode tokens of kVerifyRowsMax
  // sequences, drafts nothing. The speculator's adaptive policy sees the
  // sequence's own steps (its draft length, its switch-off).
  std::shared_ptr<Speculator> speculator;
};

enum class SequenceEventKind { Token, Finished };

struct SequenceUsage {
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;  // prompt tokens whose K/V came from another sequence's blocks
  int64_t generated_tokens = 0;
};

struct SequenceEvent {
  SequenceId id = 0;
  SequenceEventKind kind = SequenceEventKind::Token;
  // Token: the sampled id and the text safe to show (a possible stop string
  // is held back). Finished: token -1, text the held-back tail (if any).
  int32_t token = -1;
  std::string_view text;
  StopReason reason = StopReason::MaxTokens;  // Finished
  std::string error;                          // Finished by a failed pass (empty otherwise)
  SequenceUsage usage;
};
using SequenceEventFn = std::function<void(const SequenceEvent&)>;

struct SchedulerConfig {
  int64_t n_ctx = 2048;        // positions one sequence may reach (prompt + reply)
  int32_t parallel = 4;        // running sequences the KV pool holds at n_ctx each (KV per slot)
  int32_t max_batch_tokens = static_cast<int32_t>(kv::kScratchBatchTokens);  // tokens per step
  DType kv_type = DType::F16;
  bool share_prefixes = true;  // reuse running sequences' prompt blocks (copy-on-write)
  DetokenizeFn detokenize;     // token text for events and stop strings (may be empty)
  // Called by the run loop before every step, and may block: a host that
  // shares the machine with more urgent work (the app's own chat on another
  // backend) holds the batch here while that work runs, so it waits at most
  // for the one step already under way. Empty: steps run back to back.
  std::function<void()> wait_turn;
};

// What one step did (tests, benchmarks).
struct StepReport {
  int32_t decode_tokens = 0;   // one per sequence that sampled from a decode token
  int32_t prompt_tokens = 0;   // prefill chunk tokens
  int32_t drafted_tokens = 0;  // speculative drafts verified in this pass
  int32_t accepted_tokens = 0; // drafts kept (emitted as tokens)
  std::vector<SequenceId> sampled;  // sequences that produced a token this step, in batch order
};

class Scheduler {
 public:
  // The KV pool holds parallel * n_ctx positions; scratch is reserved for
  // max_batch_tokens rows. Unsupported on a backend whose attention cannot
  // take per-sequence block tables (a Vulkan+CPU split; the CPU and Vulkan
  // backends take them).
  static Result<std::unique_ptr<Scheduler>> create(const model::Model& model, backend::Backend& backend,
                                                   const SchedulerConfig& config);
  ~Scheduler();  // stops the run loop; sequences still active finish as Cancelled
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Queues a request; it joins the batch at the next step. InvalidArgument
  // for an empty prompt or ids outside the vocabulary, LimitExceeded for a
  // prompt that leaves no room in n_ctx or needs more blocks than the pool has.
  Result<SequenceId> submit(SequenceRequest request, SequenceEventFn on_event);

  // One batched forward pass (nothing when no sequence is active). A failed
  // pass finishes the sequences it held with the error, which is returned.
  Result<StepReport> step();

  // The run loop: steps on its own thread while sequences are active, sleeps
  // otherwise. stop() returns after the current step.
  void start();
  void stop();

  // Sequences queued or running (any thread).
  int64_t active() const;
  const kv::KvPool& pool() const { return *pool_; }
  const SchedulerConfig& config() const { return config_; }

 private:
  struct Impl;
  Scheduler(const model::Model& model, backend::Backend& backend, const SchedulerConfig& config);
  const model::Model& model_;
  backend::Backend& backend_;
  SchedulerConfig config_;
  std::unique_ptr<kv::KvPool> pool_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hearth::runtime
