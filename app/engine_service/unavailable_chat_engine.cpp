// The engine of a build without the inference runtime: it refuses to load
// with a message the window shows, so the app still starts and stores chats.
#include "engine_service/chat_engine.h"

namespace hearth::app {
namespace {

class UnavailableChatEngine final : public ChatEngine {
 public:
  Result<ui::ModelInfo> load(const ui::LoadRequest& request, const ProgressFn&, const CancelledFn&) override {
    return make_error(ErrorCode::Unsupported,
                      "this build of Hearth has no inference runtime, so '" +
                          request.model_path.toStdString() + "' cannot be loaded");
  }
  void unload() override {}
  Result<ui::GenerationStats> generate(const ui::GenerationRequest&, const PieceFn&, const PieceFn&,
                                       const ContextEventFn&, const CancelledFn&) override {
    return make_error(ErrorCode::Unsupported, "no inference runtime in this build");
  }
};

}  // namespace

#ifndef HEARTH_HAVE_RUNTIME
std::unique_ptr<ChatEngine> make_default_chat_engine(const QString&) {
  return std::make_unique<UnavailableChatEngine>();
}
std::unique_ptr<ChatEngine> make_default_chat_engine(const QString&, const Logger&) {
  return std::make_unique<UnavailableChatEngine>();
}
#endif

}  // namespace hearth::app
