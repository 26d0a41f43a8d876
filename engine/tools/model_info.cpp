#include "hearth/engine/tools/model_info.h"

#include <fmt/format.h>
#include <hearth/core/file_io.h>

#include <string>
#include <vector>

namespace hearth::tools {
namespace {

// The reader's errors already name the file and the key: passed on as they are.
Result<int64_t> required_count(const gguf::GgufFile& file, const std::string& key) {
  HEARTH_TRY(const uint64_t v, file.get_uint(key));
  if (v == 0 || v > (1ull << 32)) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: key '{}' has an unusable value {}",
                                                            file.path().string(), key, v));
  }
  return static_cast<int64_t>(v);
}

Result<int64_t> optional_count(const gguf::GgufFile& file, const std::string& key, int64_t fallback) {
  HEARTH_TRY(const std::optional<uint64_t> v, file.find_uint(key));
  if (!v) return fallback;
  if (*v == 0 || *v > (1ull << 32)) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: key '{}' has an unusable value {}",
                                                            file.path().string(), key, *v));
  }
  return static_cast<int64_t>(*v);
}

// The sliding windows the model loader applies, from the file's metadata.
Result<std::vector<int32_t>> layer_windows(const gguf::GgufFile& file, const std::string& arch, int64_t n_layer) {
  HEARTH_TRY(const std::optional<uint64_t> window, file.find_uint(arch + ".attention.sliding_window"));
  return kv::family_layer_windows(arch, window, n_layer);
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
  if (!file.find(a + ".attention.key_length") && s.dims.n_embd < s.dims.n_head) {
    // The head size defaults to n_embd / n_head, which would be 0.
    return make_error(ErrorCode::InvalidFormat,
                      fmt::format("{}: key '{}.embedding_length' = {} is smaller than key '{}.attention.head_count' = "
                                  "{}, so the head size would be 0",
                                  file.path().string(), a, s.dims.n_embd, a, s.dims.n_head));
  }
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
  HEARTH_TRY(s.dims.n_expert, optional_count(file, a + ".expert_count", 0));
  s.active_bytes = s.tensor_bytes;
  if (s.dims.n_expert > 0) {
    HEARTH_TRY(s.dims.n_expert_used, required_count(file, a + ".expert_used_count"));
    if (s.dims.n_expert_used > s.dims.n_expert) {
      return make_error(ErrorCode::InvalidFormat, fmt::format("{}: key '{}.expert_used_count' = {} exceeds '{}.expert_count' = {}",
                                                              file.path().string(), a, s.dims.n_expert_used, a,
                                                              s.dims.n_expert));
    }
    HEARTH_TRY(s.dims.n_ff_exp, optional_count(file, a + ".expert_feed_forward_length",
                                               std::max<int64_t>(1, s.dims.n_ff / s.dims.n_expert_used)));
    s.dims.expert_biases = file.find_tensor("blk.0.ffn_down_exps.bias") != nullptr;  // gpt-oss
    // Expert tensors are the ones stacked along a third dimension of n_expert.
    for (const auto& t : file.tensors()) {
      if (t.dims[2] != s.dims.n_expert || t.dims[3] != 1) continue;
      s.expert_bytes += t.bytes;
      s.active_bytes -= t.bytes - t.bytes / static_cast<uint64_t>(s.dims.n_expert) *
                                      static_cast<uint64_t>(s.dims.n_expert_used);
    }
  }
  s.chat_template = file.chat_template().has_value();
  return s;
}

Status check_context_memory(int64_t n_ctx, uint64_t kv_bytes, uint64_t other_bytes, uint64_t available) {
  if (available == 0 || other_bytes + kv_bytes <= available) return {};  // 0: the machine did not say
  const uint64_t left = available > other_bytes ? available - other_bytes : 0;
  return make_error(ErrorCode::OutOfMemory,
                    fmt::format("context of {} tokens needs {} of KV cache; {} available", n_ctx, format_size(kv_bytes),
                                format_size(left)));
}

Result<uint64_t> memory_beyond_weights(const gguf::GgufFile& file, int64_t n_ctx, DType kv_type) {
  HEARTH_TRY(const ModelSummary summary, summarize_model(file));
  HEARTH_TRY(const kv::MemoryEstimate estimate, kv::estimate_memory(summary.dims, 0, n_ctx, kv_type));
  return estimate.kv_bytes + estimate.scratch_bytes;
}

}  // namespace hearth::tools
