// The first CompletionBackend: one runtime::Session serves the requests one
// at a time, in arrival order, on its own worker thread; a bounded queue holds
// the rest. Consecutive requests that share a prompt prefix (the same system
// prompt, a conversation that goes on) reuse its KV (reported as cached
// tokens). A batched scheduler replaces this behind the same interface.
#pragma once

#include <hearth/engine/backend/backend.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/session.h>
#include <hearth/server/backend.h>
#include <hearth/server/token_choice.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

namespace hearth::server {

struct EngineBackendConfig {
  int64_t n_ctx = 4096;
  DType kv_type = DType::F16;
  size_t max_queued = 16;   // waiting requests beyond the running one; more get LimitExceeded
  std::string model_id;     // what /v1/models lists
  int64_t created = 0;
};

class EngineBackend final : public CompletionBackend {
 public:
  // `model`, `backend` and `format` outlive the EngineBackend.
  static Result<std::unique_ptr<EngineBackend>> create(const model::Model& model, backend::Backend& backend,
                                                       const runtime::ChatFormat& format,
                                                       const EngineBackendConfig& config);
  ~EngineBackend() override;

  Result<uint64_t> submit(GenerationRequest request, GenerationCallbacks callbacks) override;
  void cancel(uint64_t id) override;
  const ModelDescription& model() const override { return description_; }
  const runtime::ChatFormat& format() const override { return format_; }
  std::vector<int32_t> end_of_generation() const override { return end_of_generation_; }
  int64_t vocab_size() const override { return vocab_size_; }
  int64_t pending() const override;

 private:
  struct Job {
    uint64_t id = 0;
    GenerationRequest request;
    GenerationCallbacks callbacks;
    std::atomic<bool> cancelled{false};
  };

  EngineBackend(const runtime::ChatFormat& format, std::unique_ptr<runtime::Session> session,
                const EngineBackendConfig& config, int64_t vocab_size);
  void worker();
  Completion run(Job& job);

  const runtime::ChatFormat& format_;
  std::unique_ptr<runtime::Session> session_;
  EngineBackendConfig config_;
  ModelDescription description_;
  std::vector<int32_t> end_of_generation_;
  int64_t vocab_size_ = 0;
  TokenChooser chooser_;  // the worker thread's

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::unique_ptr<Job>> queue_;
  Job* running_ = nullptr;  // guarded by mutex_ (the pointer); the job's flag is atomic
  uint64_t next_id_ = 1;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace hearth::server
