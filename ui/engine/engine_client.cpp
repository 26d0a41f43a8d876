#include "engine/engine_client.h"

namespace hearth::ui {

void EngineClient::configureLocalApi(const LocalApiRequest& request) {
  LocalApiStatus status;
  if (request.enabled) status.error = QStringLiteral("This engine cannot serve the local API.");
  emit localApiStatus(status);
}

void register_engine_metatypes() {
  qRegisterMetaType<RequestId>("hearth::ui::RequestId");
  qRegisterMetaType<LoadRequest>();
  qRegisterMetaType<ModelInfo>();
  qRegisterMetaType<GenerationRequest>();
  qRegisterMetaType<GenerationStats>();
  qRegisterMetaType<ContextEvent>();
  qRegisterMetaType<LocalApiRequest>();
  qRegisterMetaType<LocalApiStatus>();
}

}  // namespace hearth::ui
