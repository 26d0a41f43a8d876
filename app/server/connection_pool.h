// The threads that serve connections, with a cap. cpp-httplib hands every
// accepted connection to a task queue; this one runs at most `workers` of
// them at once and lets `max_waiting` more wait. Past that, a connection goes
// to a single reject lane whose thread the router recognises (rejecting()),
// so it gets a quick 503 with Retry-After instead of a thread of its own.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hearth::server {

class ConnectionPool {
 public:
  ConnectionPool(size_t workers, size_t max_waiting);
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  void enqueue(std::function<void()> task);
  // Finishes the tasks already queued, then joins the threads.
  void shutdown();
  // True on the reject lane's thread: the connection being served is over the cap.
  bool rejecting() const;

 private:
  struct Lane {
    std::deque<std::function<void()>> tasks;
    std::vector<std::thread> threads;
  };
  void run(Lane& lane);

  size_t max_waiting_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  Lane main_;
  Lane reject_;
  std::thread::id reject_thread_;
};

}  // namespace hearth::server
