#include "engine_service/auto_chat_engine.h"

#include <fmt/format.h>

namespace hearth::app {

AutoChatEngine::AutoChatEngine(std::unique_ptr<ChatEngine> small, std::unique_ptr<ChatEngine> large,
                                     RouterRules rules, const Logger& logger)
    : small_(std::move(small)), large_(std::move(large)), rules_(rules), logger_(logger) {}

Result<ui::ModelInfo> AutoChatEngine::load_pair(const ui::LoadRequest& small_request,
                                                   const ui::LoadRequest& large_request, const ProgressFn& progress,
                                                   const CancelledFn& cancelled) {
  // Progress: the small model is the first half, the large one the second.
  HEARTH_TRY(ui::ModelInfo large, large_->load(large_request, [&](double f) { if (progress) progress(0.5 + f / 2); },
                                               cancelled));
  HEARTH_TRY(ui::ModelInfo small, small_->load(small_request, [&](double f) { if (progress) progress(f / 2); },
                                               cancelled));
  small_name_ = small.name;
  large_name_ = large.name;
  ui::ModelInfo info = small;
  info.name = QStringLiteral("Auto (%1 / %2)").arg(small.name, large.name);
  return info;
}

Result<ui::ModelInfo> AutoChatEngine::load(const ui::LoadRequest& request, const ProgressFn& progress,
                                              const CancelledFn& cancelled) {
  HEARTH_TRY(ui::ModelInfo small, small_->load(request, progress, cancelled));
  small_name_ = small.name;
  return small;
}

void AutoChatEngine::unload() {
  small_->unload();
  large_->unload();
}

Result<RouteDecision> AutoChatEngine::decide(const ui::GenerationRequest& request, const CancelledFn& cancelled) {
  if (auto ruled = chat::route_by_rules(route_input(request), rules_)) return *ruled;
  // The probe: the small model reads the question (scoring how familiar it
  // is) and drafts its first greedy tokens (scoring how sure it is); shown to
  // no one. Its context is the reply's, so the reply then reuses it.
  ui::GenerationRequest probe = request;
  probe.max_new_tokens = rules_.probe_tokens;
  probe.sampling.temperature = 0;
  probe.collect_logprobs = true;
  probe.score_prompt_tokens = rules_.familiarity_tokens;
  probe.use_response_cache = false;
  auto drafted = small_->generate(probe, [](std::string_view) {}, [](std::string_view) {}, nullptr, cancelled);
  if (!drafted.ok()) return drafted.take_error();
  if (drafted->stop_reason == QLatin1String("cancelled")) {
    return make_error(ErrorCode::Cancelled, "routing: stopped while the small model was asked");
  }
  ProbeScores scores;
  // A remote small model, or an empty draft, reports nothing to score.
  if (drafted->generated_tokens > 0 && drafted->mean_logprob != 0) scores.draft = drafted->mean_logprob;
  if (drafted->prompt_scored_tokens > 0) scores.familiarity = drafted->prompt_mean_logprob;
  return chat::route_by_scores(scores, rules_);
}

Result<ui::GenerationStats> AutoChatEngine::generate(const ui::GenerationRequest& request, const PieceFn& on_piece,
                                                        const PieceFn& on_reasoning, const ContextEventFn& on_event,
                                                        const CancelledFn& cancelled) {
  auto decision = decide(request, cancelled);
  if (!decision.ok()) {
    if (decision.error().code != ErrorCode::Cancelled) return decision.take_error();
    ui::GenerationStats stopped;
    stopped.stop_reason = QStringLiteral("cancelled");
    return stopped;
  }
  const bool large = decision->target == RouteTarget::Large;
  // One line per decision, with both scores, so a user can tune the thresholds.
  logger_.info("route: {} ({}); draft {}, familiarity {}", chat::to_string(decision->target), decision->reason,
               decision->score ? fmt::format("{:.3f}", *decision->score) : std::string("-"),
               decision->familiarity ? fmt::format("{:.3f}", *decision->familiarity) : std::string("-"));
  ChatEngine& engine = large ? *large_ : *small_;
  HEARTH_TRY(ui::GenerationStats stats, engine.generate(request, on_piece, on_reasoning, on_event, cancelled));
  stats.routed_to = QString::fromLatin1(chat::to_string(decision->target));
  stats.route_reason = QString::fromStdString(decision->reason);
  if (decision->score) stats.route_score = *decision->score;
  if (decision->familiarity) stats.route_familiarity = *decision->familiarity;
  stats.answered_by = large ? large_name_ : small_name_;
  return stats;
}

}  // namespace hearth::app
