#include "engine_service/routing_chat_engine.h"

#include "engine/remote_model_path.h"
#include "engine_service/remote_chat_engine.h"

namespace hearth::app {

RoutingChatEngine::RoutingChatEngine(std::unique_ptr<ChatEngine> local,
                                     std::shared_ptr<const RemoteEndpoints> endpoints)
    : local_(std::move(local)), endpoints_(std::move(endpoints)) {}

RoutingChatEngine::~RoutingChatEngine() = default;

Result<ui::ModelInfo> RoutingChatEngine::load(const ui::LoadRequest& request, const ProgressFn& progress,
                                              const CancelledFn& cancelled) {
  // One model at a time, as before: whichever was loaded goes first.
  unload();
  if (!ui::is_remote_model_path(request.model_path)) {
    auto info = local_->load(request, progress, cancelled);
    local_loaded_ = info.ok();
    return info;
  }
  const auto ref = ui::parse_remote_model_path(request.model_path);
  if (!ref) {
    return make_error(ErrorCode::InvalidArgument,
                      "'" + request.model_path.toStdString() + "' does not name an endpoint and a model");
  }
  const auto entry = endpoints_ ? endpoints_->find(ref->endpoint_id.toStdString()) : std::nullopt;
  if (!entry) {
    return make_error(ErrorCode::NotFound, "the endpoint of " + ref->model.toStdString() +
                                               " is no longer configured (Settings, Backends)");
  }
  RemoteEngineConfig config;
  config.endpoint = entry->config;
  config.model = ref->model.toStdString();
  auto engine = std::make_unique<RemoteChatEngine>(std::move(config));
  auto info = engine->load(request, progress, cancelled);
  if (!info.ok()) return info;
  // The app knows the model by its remote path (settings, conversations,
  // reload); the window shows which endpoint serves it.
  info->path = request.model_path;
  info->name = entry->name.isEmpty() ? ref->model : entry->name + QStringLiteral(" · ") + ref->model;
  remote_ = std::move(engine);
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
