// Uniform values in [-1, 1] from a fixed seed: the inputs of the backend's
// tests and benchmarks, the same on every run.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace hearth::backend::testing {

inline std::vector<float> random_vec(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace hearth::backend::testing
