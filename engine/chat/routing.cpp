#include "hearth/engine/chat/routing.h"

#include <fmt/format.h>
#include <hearth/core/text_length.h>

namespace hearth::chat {

const char* to_string(RouteTarget target) { return target == RouteTarget::Large ? "large" : "small"; }

std::optional<RouteDecision> route_by_rules(const RouteInput& input, const RouterRules& rules) {
  if (input.escalate) return RouteDecision{RouteTarget::Large, "asked for the large model", {}, {}};
  const std::string& last = input.last_user_message;
  const size_t chars = character_count(last);
  if (chars > static_cast<size_t>(rules.long_prompt_chars)) {
    return RouteDecision{RouteTarget::Large, fmt::format("long message ({} characters)", chars), {}, {}};
  }
  if (rules.code_goes_large && last.find("```") != std::string::npos) {
    return RouteDecision{RouteTarget::Large, "code block", {}, {}};
  }
  if (input.turns > static_cast<size_t>(rules.long_history_turns)) {
    return RouteDecision{RouteTarget::Large, fmt::format("long conversation ({} turns)", input.turns), {}, {}};
  }
  return std::nullopt;
}

RouteDecision route_by_scores(const ProbeScores& scores, const RouterRules& rules) {
  RouteDecision d;
  d.score = scores.draft;
  d.familiarity = scores.familiarity;
  if (scores.familiarity && *scores.familiarity < rules.min_familiarity) {
    d.target = RouteTarget::Large;
    d.reason = fmt::format("question unfamiliar to the small model ({:.2f} < {:.2f})", *scores.familiarity,
                           rules.min_familiarity);
    return d;
  }
  if (scores.draft && *scores.draft < rules.min_mean_logprob) {
    d.target = RouteTarget::Large;
    d.reason = fmt::format("small model unsure ({:.2f} < {:.2f})", *scores.draft, rules.min_mean_logprob);
    return d;
  }
  if (!scores.draft && !scores.familiarity) {
    d.reason = "no score from the small model";
    return d;
  }
  d.reason = scores.draft ? fmt::format("small model confident ({:.2f})", *scores.draft)
                          : fmt::format("question familiar ({:.2f})", *scores.familiarity);
  return d;
}

}  // namespace hearth::chat
