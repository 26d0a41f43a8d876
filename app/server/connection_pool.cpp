#include "connection_pool.h"

namespace hearth::server {

ConnectionPool::ConnectionPool(size_t workers, size_t max_waiting) : max_waiting_(max_waiting) {
  for (size_t i = 0; i < workers; ++i) main_.threads.emplace_back([this] { run(main_); });
  reject_.threads.emplace_back([this] { run(reject_); });
  reject_thread_ = reject_.threads.front().get_id();
}

ConnectionPool::~ConnectionPool() { shutdown(); }

void ConnectionPool::enqueue(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    // A task must run even when rejected: it owns the socket and closes it.
    Lane& lane = main_.tasks.size() < max_waiting_ ? main_ : reject_;
    lane.tasks.push_back(std::move(task));
  }
  wake_.notify_all();
}

bool ConnectionPool::rejecting() const { return std::this_thread::get_id() == reject_thread_; }

void ConnectionPool::run(Lane& lane) {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !lane.tasks.empty(); });
      if (lane.tasks.empty()) return;  // stopping, nothing left
      task = std::move(lane.tasks.front());
      lane.tasks.pop_front();
    }
    task();
  }
}

void ConnectionPool::shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  for (Lane* lane : {&main_, &reject_}) {
    for (auto& t : lane->threads) {
      if (t.joinable()) t.join();
    }
  }
}

}  // namespace hearth::server
