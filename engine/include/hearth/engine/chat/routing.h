// Which model of an "Auto" pair answers a request: the small one for what it
// can, the large one for what needs it. The app's Auto model and the local
// API server's "auto" model decide with these same functions.
//
// Rules come first (an explicit escalation, a long message, code, a long
// conversation). Otherwise two scores from the small model itself decide:
// - familiarity: the mean log-probability of the question's tokens under the
//   small model. Text unlike anything it learned (another language, a field
//   it never saw) scores low, even when the model would still write fluently
//   after it;
// - confidence: the mean log-probability of the first tokens of its own
//   greedy draft. A model unsure of its answer scores low.
// Either below its threshold sends the request to the large model. Plain
// decisions over text and numbers, so they can be logged and tuned.
#pragma once

#include <optional>
#include <string>

namespace hearth::chat {

struct RouterRules {
  int long_prompt_chars = 2000;    // the last user message longer than this: large
  bool code_goes_large = true;     // a fenced code block (```) in the last message: large
  int long_history_turns = 16;     // more turns than this in the conversation: large
  int probe_tokens = 16;           // tokens of the small model's draft that are scored
  int familiarity_tokens = 64;     // last prompt tokens whose likelihood is scored (0: off)
  double min_mean_logprob = -2.0;  // nats per token; a less confident draft goes large
  double min_familiarity = -5.0;   // nats per token; a stranger question goes large
};

enum class RouteTarget { Small, Large };
const char* to_string(RouteTarget target);

struct RouteDecision {
  RouteTarget target = RouteTarget::Small;
  std::string reason;                  // for the log and the UI: "code block", "confident (-0.84)"
  std::optional<double> score;         // the draft's mean log-probability when a probe ran
  std::optional<double> familiarity;   // the question's mean log-probability when it was scored
};

// What the rules look at.
struct RouteInput {
  std::string last_user_message;
  size_t turns = 0;       // messages in the conversation, the system prompt included
  bool escalate = false;  // the user asked for the large model
};

// The rules' verdict, or nullopt when they leave it to the small model's scores.
std::optional<RouteDecision> route_by_rules(const RouteInput& input, const RouterRules& rules);

// The small model's probe: its draft's and the question's mean
// log-probabilities (nullopt: not measured, e.g. a remote model).
struct ProbeScores {
  std::optional<double> draft;
  std::optional<double> familiarity;
};
RouteDecision route_by_scores(const ProbeScores& scores, const RouterRules& rules);

}  // namespace hearth::chat
