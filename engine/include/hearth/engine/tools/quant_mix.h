// Which type each tensor of a model gets when quantizing to a target such as
// Q4_K_M. The rules follow the reference engine's published quantizer, so a
// file Hearth writes has the same per-tensor types as one the reference
// writes from the same source (and the tests compare the two).
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/quant/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::tools {

// Quantization targets offered by `hearth-cli quantize`. A target is a
// recipe: a default type plus the mix rules of its `_M` variant.
enum class QuantTarget {
  Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K_M, Q4_K_M, Q5_K_M, Q6_K, IQ4_NL, IQ4_XS, F16, BF16,
  // Mixture-of-experts models: the stacked expert tensors in MXFP4, every
  // other matrix in Q8_0 (the reference's MXFP4_MOE).
  MXFP4_MOE,
};

std::string_view to_string(QuantTarget target);                      // "Q4_K_M"
Result<QuantTarget> quant_target_from_name(std::string_view name);   // case-insensitive
std::vector<QuantTarget> all_quant_targets();

// The type most tensors get (Q4_K for Q4_K_M).
DType default_type(QuantTarget target);
// The reference's `general.file_type` value for the target (Q4_K_M = 15).
uint32_t file_type_id(QuantTarget target);

// What the rules need to know about one tensor and the model around it.
struct TensorContext {
  std::string name;
  uint32_t n_dims = 0;
  int64_t row_length = 0;   // dims[0], the innermost dimension
  int64_t layer = -1;       // N of "blk.N.", -1 for global tensors
  int64_t n_layer = 0;      // layers of the model (from the tensors present)
  int64_t n_gqa = 1;        // n_head / n_head_kv
  bool has_output = true;   // false when the output matrix is tied to token_embd
  int64_t n_expert = 0;     // {arch}.expert_count, 0 for dense models
  bool has_imatrix = false; // quantizing with importance data (changes a few rules)
};

// True when the reference's rule `use_more_bits` asks for more bits in layer
// i of n: the first and last eighth of the layers and every third in between.
bool use_more_bits(int64_t i, int64_t n);

// The type for one tensor: 1-D tensors (norms, biases) and the MoE router
// (ffn_gate_inp, which the reference never quantizes) stay F32; otherwise
// the target's rules; then a row length that is not a whole number of the
// chosen type's blocks falls back to a compatible smaller-block type (Q4_K ->
// Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, Q2_K/Q3_K/IQ4_XS -> IQ4_NL) and, if even
// that does not fit, F16.
DType choose_tensor_type(QuantTarget target, const TensorContext& tensor);

// N of a "blk.N." prefix, -1 when the name has none.
int64_t layer_of(std::string_view tensor_name);

}  // namespace hearth::tools
