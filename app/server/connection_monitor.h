// Deadlines and hang-ups that cpp-httplib 0.11 does not offer. Its read
// timeout applies to each read, so a client that sends one header byte every
// few seconds (slowloris) would hold a thread for hours, and a handler never
// learns that its client went away. The monitor looks at the server's
// connected sockets a few times a second: a connection whose request has not
// reached a handler within `request_deadline` of being seen is shut down, and
// a watched request whose client closed the connection is told so (its
// generation is cancelled).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace hearth::server {

class ConnectionMonitor {
 public:
  // The server's connected sockets, file descriptor -> peer ("addr|port"):
  // by default read from /proc/self/fd (connections_on_port); a test passes
  // its own to decide what a scan sees and when.
  using Listing = std::function<std::map<int, std::string>()>;
  ConnectionMonitor(int port, std::chrono::milliseconds request_deadline);
  ConnectionMonitor(Listing listing, std::chrono::milliseconds request_deadline);
  ~ConnectionMonitor();
  ConnectionMonitor(const ConnectionMonitor&) = delete;
  ConnectionMonitor& operator=(const ConnectionMonitor&) = delete;

  // The peer key of `addr`:`port` as a Listing names it.
  static std::string peer_key(const std::string& addr, int port);
  // A handler serves the request from `addr`:`port` (as cpp-httplib reports
  // the remote end): the deadline no longer applies, and `on_hangup` is
  // called once, from the monitor's thread, if the client closes.
  uint64_t watch(const std::string& addr, int port, std::function<void()> on_hangup);
  void unwatch(uint64_t id);
  // Connections shut down for missing the deadline so far.
  int64_t expired() const;

 private:
  struct Conn {
    std::string peer;
    std::chrono::steady_clock::time_point seen;
    bool shut = false;
  };
  struct Watch {
    std::string peer;
    std::function<void()> on_hangup;
    std::chrono::steady_clock::time_point since;  // when watch() was called
  };
  void loop();
  void scan();

  Listing listing_;
  std::chrono::milliseconds deadline_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<int, Conn> conns_;            // by file descriptor
  std::map<uint64_t, Watch> watches_;
  // Peers whose request reached a handler, and when it did.
  std::map<std::string, std::chrono::steady_clock::time_point> served_;
  uint64_t next_id_ = 1;
  int64_t expired_ = 0;
  std::thread thread_;
};

}  // namespace hearth::server
