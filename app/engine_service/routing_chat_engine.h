// The engine thread's dispatcher between this computer's engine and remote
// endpoints. A load whose model path names a remote model
// ("remote:<endpoint id>/<model id>", see ui/engine/remote_model_path.h)
// connects a RemoteChatEngine for it; any other path goes to the local engine
// unchanged. Replies, cancels and figures then come from whichever engine the
// last load chose. The Auto model's path (auto_model_path.h) builds an
// AutoChatEngine over the load's small and large models, each a fresh local
// engine (from `make_local`) or a remote one. The local API and background
// work stay with the local engine: they serve the local model only.
#pragma once

#include <hearth/core/log.h>

#include <functional>
#include <memory>
#include <string>

#include "engine_service/chat_engine.h"
#include "engine_service/remote_endpoints.h"

namespace hearth::app {

class RoutingChatEngine final : public ChatEngine {
 public:
  using LocalEngineFactory = std::function<std::unique_ptr<ChatEngine>()>;
  RoutingChatEngine(std::unique_ptr<ChatEngine> local, std::shared_ptr<const RemoteEndpoints> endpoints,
                    LocalEngineFactory make_local = {}, const Logger& logger = {});
  ~RoutingChatEngine() override;

  Result<ui::ModelInfo> load(const ui::LoadRequest& request, const ProgressFn& progress,
                             const CancelledFn& cancelled) override;
  void unload() override;
  Result<ui::GenerationStats> generate(const ui::GenerationRequest& request, const PieceFn& on_piece,
                                       const PieceFn& on_reasoning, const ContextEventFn& on_event,
                                       const CancelledFn& cancelled) override;
  ui::LocalApiStatus configure_local_api(const ui::LocalApiRequest& request) override {
    return local_->configure_local_api(request);
  }
  ui::LocalApiStatus local_api_status() const override { return local_->local_api_status(); }
  bool has_background_work() const override { return !remote_ && local_->has_background_work(); }

  Status background_step(const ContextEventFn& on_event) override { return local_->background_step(on_event); }

 private:
  std::unique_ptr<ChatEngine> local_;
  std::shared_ptr<const RemoteEndpoints> endpoints_;
  struct RemoteModel {
    std::unique_ptr<ChatEngine> engine;  // not loaded yet
    QString name;                        // "GPU box · llama-3.1-70b"
  };
  // The engine for a "remote:" path; errors name what is missing.
  Result<RemoteModel> make_remote(const QString& path) const;
  Result<ui::ModelInfo> load_auto(const ui::LoadRequest& request, const ProgressFn& progress,
                                  const CancelledFn& cancelled);

  LocalEngineFactory make_local_;
  Logger logger_;
  // Set while a remote model or the Auto pair is loaded: replies go there.
  std::unique_ptr<ChatEngine> remote_;
  bool local_loaded_ = false;
};

}  // namespace hearth::app
