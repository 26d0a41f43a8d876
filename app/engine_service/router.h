// Which model of an "Auto" pair answers a request: the small one for what it
// can, the large one for what needs it. Rules first (an explicit escalation, a
// long prompt, code, a long conversation), then the small model's own
// confidence: the mean log-probability of the first tokens of its greedy draft.
// A draft the small model is unsure of (below the threshold) goes to the large
// model. Plain decisions over request text and a number, so they can be logged
// and tuned.
#pragma once

#include <QString>

#include <optional>

#include "engine/engine_types.h"

namespace hearth::app {

struct RouterRules {
  int long_prompt_chars = 2000;    // the last user message longer than this: large
  bool code_goes_large = true;     // a fenced code block (```) in the last message: large
  int long_history_turns = 16;     // more turns than this in the conversation: large
  int probe_tokens = 16;           // tokens of the small model's draft that are scored
  double min_mean_logprob = -2.0;  // nats per token; a less confident draft goes large
};

enum class RouteTarget { Small, Large };

struct RouteDecision {
  RouteTarget target = RouteTarget::Small;
  QString reason;  // for the log and the UI: "code block", "confident (-0.84)"
  std::optional<double> score;  // the probe's mean log-probability when one ran
};

// The rules' verdict, or nullopt when they leave it to the small model's score.
std::optional<RouteDecision> route_by_rules(const ui::GenerationRequest& request, const RouterRules& rules);
// The verdict on a probe's mean log-probability.
RouteDecision route_by_score(double mean_logprob, const RouterRules& rules);
const char* to_string(RouteTarget target);

}  // namespace hearth::app
