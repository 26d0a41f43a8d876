// The CPU backend: scalar reference kernels (always compiled, the test oracle)
// and fast kernels chosen at start-up from the CPU's features, run on a
// persistent thread pool.
#pragma once

#include <hearth/engine/backend/backend.h>
#include <hearth/engine/backend/matmul_observer.h>
#include <hearth/engine/quant/kernels.h>

#include <memory>

namespace hearth::backend {

enum class KernelChoice {
  Fastest,    // the best kernels this CPU supports
  Reference,  // scalar reference kernels only (tests, debugging)
};

struct CpuBackendOptions {
  int threads = 0;  // 0: one per online core
  KernelChoice kernels = KernelChoice::Fastest;
  // The highest instruction-set level Fastest may use: lower it to measure
  // what a CPU without AVX-512 (most laptops) gets from the same binary.
  quant::KernelLevel max_level = quant::KernelLevel::Avx512;
  // Sees every MatMul/MatMulId input before the product runs (importance
  // collection); not owned, must outlive the backend. Null: no observer.
  MatmulObserver* observer = nullptr;
  // Times every node (a group of products run as one counts once) for
  // Backend::op_timings (hearth-cli bench --profile); off: no clock reads.
  bool time_ops = false;
};

std::unique_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options = {});

}  // namespace hearth::backend
