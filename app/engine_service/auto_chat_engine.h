// An "Auto" model: a small and a large engine (local or remote) behind one
// ChatEngine. Each request is routed (router.h): by the rules, else by a short
// greedy probe of the small model whose mean token log-probability says how sure
// it is. The chosen engine streams the reply; its stats name the model that
// answered and why, and every decision goes to the log so the threshold can be
// tuned. A remote small model cannot report log-probabilities here: then the
// rules decide and the rest goes to the small model.
#pragma once

#include <hearth/core/log.h>

#include <memory>

#include "engine_service/chat_engine.h"
#include "engine_service/router.h"

namespace hearth::app {

class AutoChatEngine final : public ChatEngine {
 public:
  AutoChatEngine(std::unique_ptr<ChatEngine> small, std::unique_ptr<ChatEngine> large, RouterRules rules,
                    const Logger& logger = {});

  // Loads both: `request` for the small model, `large_request` for the large one.
  Result<ui::ModelInfo> load_pair(const ui::LoadRequest& small_request, const ui::LoadRequest& large_request,
                                  const ProgressFn& progress, const CancelledFn& cancelled);
  // ChatEngine's load: the small model only (the large one keeps what it has).
  Result<ui::ModelInfo> load(const ui::LoadRequest& request, const ProgressFn& progress,
                             const CancelledFn& cancelled) override;
  void unload() override;
  Result<ui::GenerationStats> generate(const ui::GenerationRequest& request, const PieceFn& on_piece,
                                       const PieceFn& on_reasoning, const ContextEventFn& on_event,
                                       const CancelledFn& cancelled) override;

  // The decision for a request, probing the small model when the rules leave it
  // open (exposed for tests and the log).
  Result<RouteDecision> decide(const ui::GenerationRequest& request, const CancelledFn& cancelled);

 private:
  std::unique_ptr<ChatEngine> small_;
  std::unique_ptr<ChatEngine> large_;
  RouterRules rules_;
  Logger logger_;
  QString small_name_;
  QString large_name_;
};

}  // namespace hearth::app
