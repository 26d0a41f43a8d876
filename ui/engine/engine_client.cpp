#include "engine/engine_client.h"

namespace hearth::ui {

void register_engine_metatypes() {
  qRegisterMetaType<RequestId>("hearth::ui::RequestId");
  qRegisterMetaType<LoadRequest>();
  qRegisterMetaType<ModelInfo>();
  qRegisterMetaType<GenerationRequest>();
  qRegisterMetaType<GenerationStats>();
  qRegisterMetaType<ContextEvent>();
}

}  // namespace hearth::ui
