// The app's side of routing an "Auto" pair (the rules and thresholds are the
// engine's, hearth/engine/chat/routing.h, shared with the local API server):
// what the rules read from a GenerationRequest.
#pragma once

#include <hearth/engine/chat/routing.h>

#include "engine/engine_types.h"

namespace hearth::app {

using chat::ProbeScores;
using chat::RouteDecision;
using chat::RouterRules;
using chat::RouteTarget;

// The rules' input: the last user message, the turn count, the escalation.
chat::RouteInput route_input(const ui::GenerationRequest& request);

}  // namespace hearth::app
