// Per-tensor type rules, after the reference engine's quantizer (its
// llama_tensor_get_type as of early 2025). Only the rules that apply to the
// targets Hearth offers are kept; the comments say which reference rule each
// branch mirrors so a reader can check them against its source.
#include "hearth/engine/tools/quant_mix.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>

namespace hearth::tools {
namespace {

struct TargetInfo {
  QuantTarget target;
  std::string_view name;
  DType type;
  uint32_t file_type;  // the reference's llama_ftype value
};

constexpr std::array<TargetInfo, 15> kTargets{{
    {QuantTarget::Q8_0, "Q8_0", DType::Q8_0, 7},
    {QuantTarget::Q4_0, "Q4_0", DType::Q4_0, 2},
    {QuantTarget::Q4_1, "Q4_1", DType::Q4_1, 3},
    {QuantTarget::Q5_0, "Q5_0", DType::Q5_0, 8},
    {QuantTarget::Q5_1, "Q5_1", DType::Q5_1, 9},
    {QuantTarget::Q2_K, "Q2_K", DType::Q2_K, 10},
    {QuantTarget::Q3_K_M, "Q3_K_M", DType::Q3_K, 12},
    {QuantTarget::Q4_K_M, "Q4_K_M", DType::Q4_K, 15},
    {QuantTarget::Q5_K_M, "Q5_K_M", DType::Q5_K, 17},
    {QuantTarget::Q6_K, "Q6_K", DType::Q6_K, 18},
    {QuantTarget::IQ4_NL, "IQ4_NL", DType::IQ4_NL, 25},
    {QuantTarget::IQ4_XS, "IQ4_XS", DType::IQ4_XS, 30},
    {QuantTarget::F16, "F16", DType::F16, 1},
    {QuantTarget::BF16, "BF16", DType::BF16, 32},
    {QuantTarget::MXFP4_MOE, "MXFP4_MOE", DType::MXFP4, 38},
}};

const TargetInfo& info(QuantTarget target) {
  for (const auto& t : kTargets) {
    if (t.target == target) return t;
  }
  return kTargets[0];
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

bool is_quantized_target(QuantTarget t) { return t != QuantTarget::F16 && t != QuantTarget::BF16; }

// The reference's fallback when a row is not a whole number of blocks.
DType fallback_type(DType type) {
  switch (type) {
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::IQ4_XS: return DType::IQ4_NL;
    case DType::Q4_K: return DType::Q5_0;
    case DType::Q5_K: return DType::Q5_1;
    case DType::Q6_K: return DType::Q8_0;
    case DType::MXFP4: return DType::Q8_0;
    default: return DType::F16;
  }
}

DType mixed_type(QuantTarget target, const TensorContext& t) {
  DType type = default_type(target);
  const int64_t il = t.layer;
  const int64_t nl = t.n_layer;
  const std::string_view name = t.name;

  // MXFP4_MOE: tensors stacked by expert (3-D) in MXFP4, everything else
  // (output and embedding included) in Q8_0.
  if (target == QuantTarget::MXFP4_MOE) return t.n_dims >= 3 ? DType::MXFP4 : DType::Q8_0;

  // Output matrix (or the embedding that doubles as it): more bits, as the
  // logits are sensitive to it.
  if (name == "output.weight" || (!t.has_output && name == "token_embd.weight")) {
    if (t.row_length % 256 != 0) return DType::Q8_0;
    return type == DType::Q8_0 ? DType::Q8_0 : DType::Q6_K;
  }
  if (name == "token_embd.weight") return type;  // unchanged for the targets offered

  // The reference's rules for 8-expert models (Mixtral-like): K and V in
  // Q8_0 (a small cost next to the experts), the attention output in Q5_K
  // for the lower-bit targets.
  if (t.n_expert == 8 && (contains(name, "attn_v.weight") || contains(name, "attn_k.weight"))) return DType::Q8_0;
  if (t.n_expert == 8 && contains(name, "attn_output.weight") &&
      (target == QuantTarget::Q2_K || target == QuantTarget::Q3_K_M || target == QuantTarget::IQ4_NL ||
       target == QuantTarget::Q4_K_M || target == QuantTarget::IQ4_XS)) {
    return DType::Q5_K;
  }
  if (contains(name, "attn_v.weight")) {
    switch (target) {
      case QuantTarget::Q2_K: return t.n_gqa >= 4 ? DType::Q4_K : DType::Q3_K;
      case QuantTarget::Q3_K_M: return il < 2 ? DType::Q5_K : DType::Q4_K;
      case QuantTarget::IQ4_NL:
      case QuantTarget::IQ4_XS: return t.n_gqa >= 4 ? DType::Q5_K : type;
      case QuantTarget::Q4_K_M:
      case QuantTarget::Q5_K_M: return use_more_bits(il, nl) ? DType::Q6_K : type;
      default: return type;
    }
  }
  if (contains(name, "ffn_down")) {
    switch (target) {
      case QuantTarget::Q2_K: return DType::Q3_K;
      case QuantTarget::Q3_K_M: return il < nl / 16 ? DType::Q5_K : DType::Q4_K;
      case QuantTarget::Q4_K_M:
      case QuantTarget::Q5_K_M: return use_more_bits(il, nl) ? DType::Q6_K : type;
      case QuantTarget::IQ4_NL:
      case QuantTarget::IQ4_XS: return il < nl / 8 && !t.has_imatrix ? DType::Q5_K : type;
      // With importance data the reference guards the first eighth of the
      // layers' ffn_down with the offset formats; without, it leaves them.
      case QuantTarget::Q4_0: return il < nl / 8 && t.has_imatrix ? DType::Q4_1 : type;
      case QuantTarget::Q5_0: return il < nl / 8 && t.has_imatrix ? DType::Q5_1 : type;
      default: return type;
    }
  }
  if (contains(name, "attn_output.weight")) {
    if (target == QuantTarget::Q2_K) return DType::Q3_K;
    if (target == QuantTarget::Q3_K_M) return DType::Q4_K;
    return type;
  }
  if (contains(name, "attn_qkv.weight")) {  // fused Q/K/V (Phi-3)
    if (target == QuantTarget::Q3_K_M) return DType::Q4_K;
    if (target == QuantTarget::Q4_K_M) return DType::Q5_K;
    if (target == QuantTarget::Q5_K_M) return DType::Q6_K;
  }
  return type;
}

}  // namespace

std::string_view to_string(QuantTarget target) { return info(target).name; }

Result<QuantTarget> quant_target_from_name(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const auto& t : kTargets) {
    if (t.name == upper) return t.target;
  }
  std::string list;
  for (const auto& t : kTargets) list += fmt::format("{}{}", list.empty() ? "" : ", ", t.name);
  return make_error(ErrorCode::InvalidArgument, fmt::format("unknown quantization type '{}' (one of {})", name, list));
}

std::vector<QuantTarget> all_quant_targets() {
  std::vector<QuantTarget> out;
  for (const auto& t : kTargets) out.push_back(t.target);
  return out;
}

DType default_type(QuantTarget target) { return info(target).type; }
uint32_t file_type_id(QuantTarget target) { return info(target).file_type; }

bool use_more_bits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

int64_t layer_of(std::string_view name) {
  constexpr std::string_view kPrefix = "blk.";
  if (name.substr(0, kPrefix.size()) != kPrefix) return -1;
  const char* first = name.data() + kPrefix.size();
  const char* last = name.data() + name.size();
  int64_t layer = -1;
  const auto [ptr, ec] = std::from_chars(first, last, layer);
  if (ec != std::errc() || ptr == last || *ptr != '.') return -1;
  return layer;
}

DType choose_tensor_type(QuantTarget target, const TensorContext& t) {
  if (t.n_dims < 2) return DType::F32;  // norms and biases: tiny, and sensitive
  if (contains(t.name, "ffn_gate_inp.weight")) return DType::F32;  // the router: left as it is
  // Only weights are quantized; 2-D biases (gpt-oss's per-expert ones) stay.
  constexpr std::string_view kWeight = ".weight";
  if (t.name.size() < kWeight.size() || t.name.compare(t.name.size() - kWeight.size(), kWeight.size(), kWeight) != 0) {
    return DType::F32;
  }
  DType type = is_quantized_target(target) ? mixed_type(target, t) : default_type(target);
  if (t.row_length % traits(type).block_elements != 0) {
    type = fallback_type(type);
    if (t.row_length % traits(type).block_elements != 0) type = DType::F16;
  }
  return type;
}

}  // namespace hearth::tools
