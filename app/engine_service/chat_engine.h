// The inference engine as EngineService drives it: load a model with progress,
// generate a reply piece by piece, stop when asked. One implementation adapts
// the engine library's runtime; tests use scripted doubles. Implementations
// are called on the engine thread only and may block there.
#pragma once

#include <hearth/core/log.h>
#include <hearth/core/result.h>

#include <functional>
#include <memory>
#include <string_view>

#include "engine/engine_types.h"

namespace hearth::app {

class ChatEngine {
 public:
  using ProgressFn = std::function<void(double fraction)>;
  // Receives complete UTF-8 text pieces (never half a character).
  using PieceFn = std::function<void(std::string_view piece)>;
  using ContextEventFn = std::function<void(const ui::ContextEvent& event)>;
  // Polled before every prefill batch and token (and between the pieces of a
  // load): true stops the work. A reply then finishes normally with
  // stop_reason "cancelled" (with nothing in it when the prompt's prefill was
  // stopped); a load fails with ErrorCode::Cancelled.
  using CancelledFn = std::function<bool()>;

  virtual ~ChatEngine() = default;

  virtual Result<ui::ModelInfo> load(const ui::LoadRequest& request, const ProgressFn& progress,
                                     const CancelledFn& cancelled) = 0;
  virtual void unload() = 0;
  // `on_reasoning` receives the reply's reasoning (thinking), which a
  // reasoning model writes before the answer that goes to `on_piece`.
  virtual Result<ui::GenerationStats> generate(const ui::GenerationRequest& request,
                                               const PieceFn& on_piece,
                                               const PieceFn& on_reasoning,
                                               const ContextEventFn& on_event,
                                               const CancelledFn& cancelled) = 0;

  // The local API on the loaded model: starts, reconfigures or stops it as
  // `request` says, and keeps serving across model loads until told to stop
  // (called on the engine thread). The returned status says why when it
  // could not start. The default: no local API in this engine.
  virtual ui::LocalApiStatus configure_local_api(const ui::LocalApiRequest& request) {
    ui::LocalApiStatus s;
    if (request.enabled) s.error = QStringLiteral("This build of Hearth cannot serve the local API.");
    return s;
  }
  // Its figures now; any thread.
  virtual ui::LocalApiStatus local_api_status() const { return {}; }

  // Lower-priority work (a due summary): the service runs it one step (one
  // token) at a time while no reply is waiting, so a reply that arrives
  // pre-empts it after at most one step.
  virtual bool has_background_work() const { return false; }
  virtual Status background_step(const ContextEventFn& on_event) {
    (void)on_event;
    return {};
  }
};

// The engine this build links: the runtime when the engine library provides
// one, otherwise an engine that explains why no model can be loaded.
// `prefix_cache_dir` (empty: none) keeps system-prompt KV on disk between runs.
std::unique_ptr<ChatEngine> make_default_chat_engine(const QString& prefix_cache_dir = QString());
// The same with the application's log sink for the engine's own messages
// (backend choice, tokenizer, prefix cache): warnings the engine reports
// reach the app's log instead of being dropped.
std::unique_ptr<ChatEngine> make_default_chat_engine(const QString& prefix_cache_dir, const Logger& logger);

}  // namespace hearth::app
