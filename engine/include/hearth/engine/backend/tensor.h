// A tensor as the backends see it: a typed, shaped view of memory. Weights point
// into the mapped model file (used in place); activations are placed by the
// backend that runs the graph; KV storage belongs to the KV cache.
#pragma once

#include <hearth/engine/quant/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace hearth::backend {

enum class TensorKind {
  Weight,      // read-only model data, `data` set at bind time
  Input,       // caller-provided (token ids, positions), `data` set before compute
  Activation,  // intermediate; the executing backend assigns `data`
};

// How a weight's rows lie in memory. Interleaved16: groups of 16 rows
// rearranged at load for the CPU's kernels (quant/interleave.h); every
// backend reads both (the CPU with its own kernels or through
// copy_plain_rows, Vulkan converts at upload).
enum class WeightLayout : uint8_t { Plain, Interleaved16 };

struct Tensor {
  DType type = DType::F32;
  // Shape, innermost first: a matrix of `rows` rows of `cols` elements is
  // {cols, rows, 1, 1}. Activations are {width, n_tokens, 1, 1}.
  std::array<int64_t, 4> ne{1, 1, 1, 1};
  TensorKind kind = TensorKind::Activation;
  void* data = nullptr;
  WeightLayout layout = WeightLayout::Plain;
  std::string name;  // weights: the GGUF name, for error messages

  int64_t cols() const { return ne[0]; }
  int64_t rows() const { return ne[1] * ne[2] * ne[3]; }
  int64_t elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  // Bytes of one row (ne[0] elements), following the type's block layout.
  size_t row_bytes() const {
    const auto& t = traits(type);
    return static_cast<size_t>(ne[0] / t.block_elements) * t.block_bytes;
  }
  size_t bytes() const { return row_bytes() * static_cast<size_t>(rows()); }
  template <typename T>
  T* as() const { return static_cast<T*>(data); }
};

}  // namespace hearth::backend
