// The CPU backend: scalar reference kernels (always compiled, the test oracle)
// and fast kernels chosen at start-up from the CPU's features, run on a
// persistent thread pool.
#pragma once

#include <hearth/engine/backend/backend.h>

#include <memory>

namespace hearth::backend {

enum class KernelChoice {
  Fastest,    // the best kernels this CPU supports
  Reference,  // scalar reference kernels only (tests, debugging)
};

struct CpuBackendOptions {
  int threads = 0;  // 0: one per online core
  KernelChoice kernels = KernelChoice::Fastest;
};

std::unique_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options = {});

}  // namespace hearth::backend
