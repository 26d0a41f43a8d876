// A ChatEngine whose replies come from a remote OpenAI-compatible endpoint.
// "Loading" checks that the endpoint answers and serves the model; a reply
// renders the conversation as OpenAI messages (system prompt, turns), drops
// the oldest turns that do not fit the context (token counts estimated and
// calibrated by the server's usage figures, see remote/context_fit.h), and
// streams content and reasoning. A stream cut mid-reply keeps what arrived
// and finishes with stop_reason "cut" (last_error() says why); other
// failures are errors. Runs on the engine thread like the local engine.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "engine_service/chat_engine.h"
#include "remote/context_fit.h"
#include "remote/endpoint.h"

namespace hearth::remote {
class OpenAiClient;
}

namespace hearth::app {

struct RemoteEngineConfig {
  remote::EndpointConfig endpoint;
  std::string model;  // the server's model id
  // Used when the server does not say its model's context length (0: no trimming).
  int context_length = 0;
};

class RemoteChatEngine final : public ChatEngine {
 public:
  explicit RemoteChatEngine(RemoteEngineConfig config);
  ~RemoteChatEngine() override;

  Result<ui::ModelInfo> load(const ui::LoadRequest& request, const ProgressFn& progress,
                             const CancelledFn& cancelled) override;
  void unload() override;
  Result<ui::GenerationStats> generate(const ui::GenerationRequest& request, const PieceFn& on_piece,
                                       const PieceFn& on_reasoning, const ContextEventFn& on_event,
                                       const CancelledFn& cancelled) override;

  // Why the last reply ended early ("cut"), empty otherwise; any thread.
  std::string last_error() const;

 private:
  RemoteEngineConfig config_;
  std::unique_ptr<remote::OpenAiClient> client_;
  int context_max_ = 0;
  remote::TokenEstimator estimator_;  // one per model: its tokenizer's rate
  mutable std::mutex error_mutex_;
  std::string last_error_;
};

// The stop reason of a reply that the connection cut short.
inline constexpr const char* kStopReasonCut = "cut";

}  // namespace hearth::app
