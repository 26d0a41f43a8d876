// The app's own chat comes before the local API: while a reply is being
// generated, the API's batch waits at the start of its next step, so a burst
// of API requests delays the user's next token by at most the one step that
// was already running. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace hearth::app {

class ChatPriorityGate {
 public:
  // The engine thread, around each reply.
  void chat_begins();
  void chat_ends();
  // The API's batch loop, before every step: returns at once unless a reply
  // is running, else when it ends (or the gate is opened for good).
  void wait_turn();
  // Lets every waiter through from now on (the API is stopping).
  void open_for_good();
  // Steps that had to wait for a reply (tests, the status line).
  int64_t waits() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int chats_ = 0;
  bool open_for_good_ = false;
  int64_t waits_ = 0;
};

// Holds the gate for one reply.
class ChatTurn {
 public:
  explicit ChatTurn(ChatPriorityGate& gate) : gate_(gate) { gate_.chat_begins(); }
  ~ChatTurn() { gate_.chat_ends(); }
  ChatTurn(const ChatTurn&) = delete;
  ChatTurn& operator=(const ChatTurn&) = delete;

 private:
  ChatPriorityGate& gate_;
};

}  // namespace hearth::app
