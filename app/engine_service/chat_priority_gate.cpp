#include "engine_service/chat_priority_gate.h"

namespace hearth::app {

void ChatPriorityGate::chat_begins() {
  std::lock_guard lock(mutex_);
  ++chats_;
}

void ChatPriorityGate::chat_ends() {
  {
    std::lock_guard lock(mutex_);
    --chats_;
  }
  changed_.notify_all();
}

void ChatPriorityGate::wait_turn() {
  std::unique_lock lock(mutex_);
  if (chats_ == 0 || open_for_good_) return;
  ++waits_;
  changed_.wait(lock, [&] { return chats_ == 0 || open_for_good_; });
}

void ChatPriorityGate::open_for_good() {
  {
    std::lock_guard lock(mutex_);
    open_for_good_ = true;
  }
  changed_.notify_all();
}

int64_t ChatPriorityGate::waits() const {
  std::lock_guard lock(mutex_);
  return waits_;
}

}  // namespace hearth::app
