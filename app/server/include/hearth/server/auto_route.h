// The local API's "auto" model: a request naming it is answered by the
// server's own (small) model or by a second, large one, decided as the app's
// Auto model decides (hearth/engine/chat/routing.h): the rules first, then a
// short greedy probe of the small model that scores how familiar the
// question is and how sure its first tokens are.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/chat/routing.h>
#include <hearth/server/backend.h>
#include <hearth/server/openai_request.h>

#include <string>

namespace hearth::server {

struct AutoRoute {
  CompletionBackend* large = nullptr;  // outlives the server; the small one is the server's own
  chat::RouterRules rules;
  std::string id = "auto";             // the name clients ask for
};

struct RoutedRequest {
  CompletionBackend* backend = nullptr;
  chat::RouteDecision decision;
};

// Decides which backend answers `request`. The probe runs on `small` and is
// never shown; it fails only when the small model cannot run at all.
Result<RoutedRequest> route_request(CompletionBackend& small, const AutoRoute& route, const ParsedRequest& request);

// "large; question unfamiliar to the small model (-11.06 < -5.00); draft -0.89; familiarity -11.06":
// the X-Hearth-Route header, and the log line.
std::string describe(const chat::RouteDecision& decision);

}  // namespace hearth::server
