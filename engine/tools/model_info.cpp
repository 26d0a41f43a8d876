#include "hearth/engine/tools/model_info.h"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace hearth::tools {
namespace {

Result<int64_t> required_count(const gguf::GgufFile& file, const std::string& key) {
  auto v = file.get_uint(key);
  if (!v.ok()) return make_error(v.error().code, fmt::format("{}: {}", file.path().string(), v.error().message));
  if (*v == 0 || *v > (1ull << 32)) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: key '{}' has an unusable value {}",
                                                            file.path().string(), key, *v));
  }
  return static_cast<int64_t>(*v);
}

Result<int64_t> optional_count(const gguf::GgufFile& file, const std::string& key, int64_t fallback) {
  auto v = file.find_uint(key);
  if (!v.ok()) return make_error(v.error().code, fmt::format("{}: {}", file.path().string(), v.error().message));
  if (!*v) return fallback;
  if (**v == 0 || **v > (1ull << 32)) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: key '{}' has an unusable value {}",
                                                            file.path().string(), key, **v));
  }
  return static_cast<int64_t>(**v);
}

// The sliding windows the model loader applies, from the file's metadata.
Result<std::vector<int32_t>> layer_windows(const gguf::GgufFile& file, const std::string& arch, int64_t n_layer) {
  auto key = file.find_uint(arch + ".attention.sliding_window");
  if (!key.ok()) return make_error(key.error().code, fmt::format("{}: {}", file.path().string(), key.error().message));
  return kv::family_layer_windows(arch, *key, n_layer);
}

}  // namespace

Result<ModelSummary> summarize_model(const gguf::GgufFile& file) {
  ModelSummary s;
  auto arch = file.architecture();
  if (!arch.ok()) return make_error(arch.error().code, fmt::format("{}: {}", file.path().string(), arch.error().message));
  s.architecture = *arch;
  s.file_bytes = file.file_size();
  for (const auto& t : file.tensors()) {
    s.parameters += static_cast<uint64_t>(t.elements());
    s.tensor_bytes += t.bytes;
    s.bytes_by_type[std::string(traits(t.type).name)] += t.bytes;
  }
  const std::string& a = s.architecture;
  HEARTH_TRY(s.dims.n_layer, required_count(file, a + ".block_count"));
  HEARTH_TRY(s.dims.n_embd, required_count(file, a + ".embedding_length"));
  HEARTH_TRY(s.dims.n_head, required_count(file, a + ".attention.head_count"));
  HEARTH_TRY(s.dims.n_head_kv, optional_count(file, a + ".attention.head_count_kv", s.dims.n_head));
  HEARTH_TRY(s.dims.head_dim, optional_count(file, a + ".attention.key_length", s.dims.n_embd / s.dims.n_head));
  HEARTH_TRY(s.context_length, optional_count(file, a + ".context_length", 0));
  HEARTH_TRY(s.dims.n_ff, optional_count(file, a + ".feed_forward_length", 0));
  if (const gguf::TensorInfo* embd = file.find_tensor("token_embd.weight")) s.dims.n_vocab = embd->dims[1];
  // A fused QKV matrix, or an up matrix without a gate (gate and up in one),
  // as the model loader binds them (model/arch_phi3.cpp).
  if (file.find_tensor("blk.0.attn_qkv.weight") ||
      (file.find_tensor("blk.0.ffn_up.weight") && !file.find_tensor("blk.0.ffn_gate.weight"))) {
    s.dims.projections = kv::ProjectionLayout::Fused;
  }
  HEARTH_TRY(s.dims.layer_windows, layer_windows(file, a, s.dims.n_layer));
  s.chat_template = file.chat_template().has_value();
  return s;
}

Result<uint64_t> memory_beyond_weights(const gguf::GgufFile& file, int64_t n_ctx, DType kv_type) {
  HEARTH_TRY(const ModelSummary summary, summarize_model(file));
  HEARTH_TRY(const kv::MemoryEstimate estimate, kv::estimate_memory(summary.dims, 0, n_ctx, kv_type));
  return estimate.kv_bytes + estimate.scratch_bytes;
}

}  // namespace hearth::tools
