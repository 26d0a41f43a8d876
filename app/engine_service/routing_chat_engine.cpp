#include "engine_service/routing_chat_engine.h"

#include "engine/auto_model_path.h"
#include "engine/remote_model_path.h"
#include "engine_service/auto_chat_engine.h"
#include "engine_service/remote_chat_engine.h"

namespace hearth::app {

RoutingChatEngine::RoutingChatEngine(std::unique_ptr<ChatEngine> local,
                                     std::shared_ptr<const RemoteEndpoints> endpoints, LocalEngineFactory make_local,
                                     const Logger& logger)
    : local_(std::move(local)),
      endpoints_(std::move(endpoints)),
      make_local_(std::move(make_local)),
      logger_(logger) {}

RoutingChatEngine::~RoutingChatEngine() = default;

Result<ui::ModelInfo> RoutingChatEngine::load(const ui::LoadRequest& request, const ProgressFn& progress,
                                              const CancelledFn& cancelled) {
  // One model at a time, as before: whichever was loaded goes first.
  unload();
  if (ui::is_auto_model_path(request.model_path)) return load_auto(request, progress, cancelled);
  if (!ui::is_remote_model_path(request.model_path)) {
    auto info = local_->load(request, progress, cancelled);
    local_loaded_ = info.ok();
    return info;
  }
  HEARTH_TRY(RemoteModel remote, make_remote(request.model_path));
  HEARTH_TRY(ui::ModelInfo info, remote.engine->load(request, progress, cancelled));
  // The app knows the model by its remote path (settings, conversations,
  // reload); the window shows which endpoint serves it.
  info.path = request.model_path;
  info.name = remote.name;
  remote_ = std::move(remote.engine);
  return info;
}

Result<RoutingChatEngine::RemoteModel> RoutingChatEngine::make_remote(const QString& path) const {
  const auto ref = ui::parse_remote_model_path(path);
  if (!ref) {
    return make_error(ErrorCode::InvalidArgument, "'" + path.toStdString() + "' does not name an endpoint and a model");
  }
  const auto entry = endpoints_ ? endpoints_->find(ref->endpoint_id.toStdString()) : std::nullopt;
  if (!entry) {
    return make_error(ErrorCode::NotFound, "the endpoint of " + ref->model.toStdString() +
                                               " is no longer configured (Settings, Backends)");
  }
  RemoteEngineConfig config;
  config.endpoint = entry->config;
  config.model = ref->model.toStdString();
  RemoteModel out;
  out.engine = std::make_unique<RemoteChatEngine>(std::move(config));
  out.name = entry->name.isEmpty() ? ref->model : entry->name + QStringLiteral(" · ") + ref->model;
  return out;
}

Result<ui::ModelInfo> RoutingChatEngine::load_auto(const ui::LoadRequest& request, const ProgressFn& progress,
                                                   const CancelledFn& cancelled) {
  if (request.auto_small_path.isEmpty() || request.auto_large_path.isEmpty()) {
    return make_error(ErrorCode::InvalidArgument,
                      "the Auto model needs a small and a large model (Settings, Backends, Auto model)");
  }
  if (request.auto_small_path == request.auto_large_path) {
    return make_error(ErrorCode::InvalidArgument, "the Auto model's small and large models are the same model");
  }
  // Each half: a remote engine (connected here, loaded by the pair below) or a
  // fresh local engine of its own, so both models stay loaded side by side.
  auto half = [&](const QString& path) -> Result<std::unique_ptr<ChatEngine>> {
    if (ui::is_auto_model_path(path)) {
      return make_error(ErrorCode::InvalidArgument, "the Auto model cannot contain itself");
    }
    if (!ui::is_remote_model_path(path)) {
      if (!make_local_) return make_error(ErrorCode::Unsupported, "this build cannot load a second local model");
      return make_local_();
    }
    HEARTH_TRY(RemoteModel remote, make_remote(path));
    return std::move(remote.engine);
  };
  HEARTH_TRY(auto small, half(request.auto_small_path));
  HEARTH_TRY(auto large, half(request.auto_large_path));
  RouterRules rules;
  rules.min_mean_logprob = request.auto_min_confidence;
  rules.min_familiarity = request.auto_min_familiarity;
  auto pair = std::make_unique<AutoChatEngine>(std::move(small), std::move(large), rules, logger_);
  ui::LoadRequest small_request = request;
  small_request.model_path = request.auto_small_path;
  ui::LoadRequest large_request = request;
  large_request.model_path = request.auto_large_path;
  HEARTH_TRY(ui::ModelInfo info, pair->load_pair(small_request, large_request, progress, cancelled));
  info.path = request.model_path;  // conversations and the settings remember "Auto"
  info.load_id = request.load_id;
  remote_ = std::move(pair);
  return info;
}

void RoutingChatEngine::unload() {
  if (remote_) {
    remote_->unload();
    remote_.reset();
  }
  if (local_loaded_) {
    local_->unload();
    local_loaded_ = false;
  }
}

Result<ui::GenerationStats> RoutingChatEngine::generate(const ui::GenerationRequest& request,
                                                        const PieceFn& on_piece, const PieceFn& on_reasoning,
                                                        const ContextEventFn& on_event,
                                                        const CancelledFn& cancelled) {
  ChatEngine& engine = remote_ ? *remote_ : *local_;
  return engine.generate(request, on_piece, on_reasoning, on_event, cancelled);
}

}  // namespace hearth::app
