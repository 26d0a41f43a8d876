#include "engine_service/router.h"

namespace hearth::app {

const char* to_string(RouteTarget target) { return target == RouteTarget::Large ? "large" : "small"; }

std::optional<RouteDecision> route_by_rules(const ui::GenerationRequest& request, const RouterRules& rules) {
  if (request.escalate) return RouteDecision{RouteTarget::Large, QStringLiteral("asked for the large model"), {}};
  QString last;
  for (auto it = request.turns.crbegin(); it != request.turns.crend(); ++it) {
    if (it->role == ui::ChatRole::User) {
      last = it->text;
      break;
    }
  }
  if (last.size() > rules.long_prompt_chars) {
    return RouteDecision{RouteTarget::Large, QStringLiteral("long message (%1 characters)").arg(last.size()), {}};
  }
  if (rules.code_goes_large && last.contains(QStringLiteral("```"))) {
    return RouteDecision{RouteTarget::Large, QStringLiteral("code block"), {}};
  }
  if (request.turns.size() > rules.long_history_turns) {
    return RouteDecision{RouteTarget::Large, QStringLiteral("long conversation (%1 turns)").arg(request.turns.size()),
                         {}};
  }
  return std::nullopt;
}

RouteDecision route_by_score(double mean_logprob, const RouterRules& rules) {
  const QString score = QString::number(mean_logprob, 'f', 2);
  if (mean_logprob < rules.min_mean_logprob) {
    return RouteDecision{RouteTarget::Large, QStringLiteral("small model unsure (%1 < %2)")
                                                 .arg(score, QString::number(rules.min_mean_logprob, 'f', 2)),
                         mean_logprob};
  }
  return RouteDecision{RouteTarget::Small, QStringLiteral("small model confident (%1)").arg(score), mean_logprob};
}

}  // namespace hearth::app
