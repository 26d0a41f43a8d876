// The highest CPU kernel level the backend tests let the fast kernels use.
// The regular programs test the best level this CPU has; the *_avx2 variants
// are the same sources built with HEARTH_TEST_MAX_KERNEL_LEVEL=Avx2, so what a
// CPU without AVX-512 runs is tested on every machine that has AVX2 (the cap
// goes through CpuBackendOptions::max_level, as --cpu-kernels does).
#pragma once

#include <hearth/engine/backend/cpu_backend.h>

#ifndef HEARTH_TEST_MAX_KERNEL_LEVEL
#define HEARTH_TEST_MAX_KERNEL_LEVEL Avx512
#endif

namespace hearth::backend::testing {

inline constexpr quant::KernelLevel kMaxKernelLevel = quant::KernelLevel::HEARTH_TEST_MAX_KERNEL_LEVEL;

inline CpuBackendOptions cpu_options(int threads, KernelChoice kernels = KernelChoice::Fastest) {
  CpuBackendOptions o;
  o.threads = threads;
  o.kernels = kernels;
  o.max_level = kMaxKernelLevel;
  return o;
}

}  // namespace hearth::backend::testing
