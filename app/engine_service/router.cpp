#include "engine_service/router.h"

namespace hearth::app {

chat::RouteInput route_input(const ui::GenerationRequest& request) {
  chat::RouteInput input;
  input.escalate = request.escalate;
  input.turns = static_cast<size_t>(request.turns.size());
  for (auto it = request.turns.crbegin(); it != request.turns.crend(); ++it) {
    if (it->role == ui::ChatRole::User) {
      input.last_user_message = it->text.toStdString();
      break;
    }
  }
  return input;
}

}  // namespace hearth::app
