// The batched CompletionBackend: every request becomes a sequence of the
// engine's continuous-batching scheduler (runtime::Scheduler), so concurrent
// clients share each forward pass (one read of the weights serves them all)
// and a request that arrives mid-stream joins at the next step. Requests that
// start with the same tokens (a shared system prompt) share those KV blocks.
//
// The scheduler reports tokens; this adapter adds what the HTTP layer needs
// on top of them (the grammar's mask, logprobs, stop strings, the reply text),
// with the same TokenChooser and ReplyText as the one-at-a-time EngineBackend.
#pragma once

#include <hearth/engine/backend/backend.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/scheduler.h>
#include <hearth/server/backend.h>
#include <hearth/server/live_figures.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>

namespace hearth::server {

// A fresh speculator (its own drafter and rates) for one request.
using SpeculatorFactory = std::function<Result<std::shared_ptr<runtime::Speculator>>()>;

struct SchedulerBackendConfig {
  runtime::SchedulerConfig scheduler;  // n_ctx per sequence, parallel slots, tokens per step, KV type
  size_t max_queued = 16;              // requests waiting beyond the parallel slots; more get LimitExceeded
  std::string model_id;
  int64_t created = 0;
  // Speculative decoding per request (empty: off). A request drafts when the
  // scheduler draws its tokens itself: no grammar (response_format) and no
  // logprobs (those decode plainly); ignore_eos masks the end tokens there.
  // The factory runs on the submitting thread, one call at a time.
  SpeculatorFactory speculators;
};

class SchedulerBackend final : public CompletionBackend {
 public:
  // `model`, `backend` and `format` outlive the SchedulerBackend. Unsupported
  // on a backend that cannot batch sequences (see runtime::Scheduler::create).
  static Result<std::unique_ptr<SchedulerBackend>> create(const model::Model& model, backend::Backend& backend,
                                                          const runtime::ChatFormat& format,
                                                          const SchedulerBackendConfig& config);
  ~SchedulerBackend() override;

  Result<uint64_t> submit(GenerationRequest request, GenerationCallbacks callbacks) override;
  void cancel(uint64_t id) override;
  const ModelDescription& model() const override { return description_; }
  const runtime::ChatFormat& format() const override { return format_; }
  std::vector<int32_t> end_of_generation() const override { return format_.end_of_generation(); }
  int64_t vocab_size() const override { return vocab_size_; }
  int64_t pending() const override;
  SpeculationTotals speculation() const override;

  const runtime::Scheduler& scheduler() const { return *scheduler_; }
  // Recent tokens/s and inter-token latency over all requests.
  LiveFigures live_figures() const { return meter_.figures(LiveMeter::Clock::now()); }

 private:
  struct Job;
  SchedulerBackend(const runtime::ChatFormat& format, const SchedulerBackendConfig& config, int64_t vocab_size);
  void on_event(Job& job, const runtime::SequenceEvent& event);

  const runtime::ChatFormat& format_;
  SchedulerBackendConfig config_;
  ModelDescription description_;
  int64_t vocab_size_ = 0;

  mutable std::mutex mutex_;
  std::mutex speculators_mutex_;  // one factory call at a time
  std::map<uint64_t, std::shared_ptr<Job>> jobs_;  // queued or running, by id
  uint64_t next_id_ = 1;
  SpeculationTotals speculation_;  // guarded by mutex_
  LiveMeter meter_;
  // Last: destroyed first, so its final Cancelled events still find the jobs.
  std::unique_ptr<runtime::Scheduler> scheduler_;
};

}  // namespace hearth::server
