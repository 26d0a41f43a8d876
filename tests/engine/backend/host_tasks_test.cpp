// Backend::run_host_tasks: every index exactly once, on the CPU backend's
// threads as on the default (one after another), the calls free to overlap.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/backend/split_backend.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace hearth::backend {
namespace {

class SerialOnly final : public Backend {
 public:
  const char* name() const override { return "serial"; }
  DeviceInfo device() const override { return {}; }
  bool supports(Op, DType) const override { return false; }
  Result<std::unique_ptr<Buffer>> allocate(size_t, BufferUsage) override {
    return make_error(ErrorCode::Unsupported, "no buffers");
  }
  Status compute(Graph&) override { return make_error(ErrorCode::Unsupported, "no graphs"); }
};

std::vector<int> run_counts(Backend& backend, int64_t n, std::set<std::thread::id>* threads = nullptr) {
  std::vector<std::atomic<int>> counts(static_cast<size_t>(n));
  std::mutex mutex;
  backend.run_host_tasks(n, [&](int64_t i) {
    counts[static_cast<size_t>(i)].fetch_add(1);
    if (threads) {
      std::lock_guard lock(mutex);
      threads->insert(std::this_thread::get_id());
    }
  });
  std::vector<int> out;
  for (auto& c : counts) out.push_back(c.load());
  return out;
}

TEST(HostTasks, EveryIndexRunsOnceOnTheCpuBackendsThreads) {
  CpuBackendOptions o;
  o.threads = 3;
  auto cpu = make_cpu_backend(o);
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{7}, int64_t{500}}) {
    EXPECT_EQ(run_counts(*cpu, n), std::vector<int>(static_cast<size_t>(n), 1)) << n;
  }
}

TEST(HostTasks, TheDefaultRunsThemInOrderOnTheCaller) {
  SerialOnly serial;
  std::vector<int64_t> order;
  serial.run_host_tasks(5, [&](int64_t i) { order.push_back(i); });
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  std::set<std::thread::id> threads;
  EXPECT_EQ(run_counts(serial, 9, &threads), std::vector<int>(9, 1));
  EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST(HostTasks, ASplitRunsThemOnItsBackBackend) {
  CpuBackendOptions o;
  o.threads = 2;
  SplitBackend split(std::make_unique<SerialOnly>(), make_cpu_backend(o), SplitPlacement{1});
  EXPECT_EQ(run_counts(split, 300), std::vector<int>(300, 1));
}

}  // namespace
}  // namespace hearth::backend
