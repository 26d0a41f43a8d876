// A model file's summary for `hearth-cli info`: architecture, shapes,
// parameter count, bytes per tensor type, chat template presence. Read from
// metadata and tensor infos only; no tensor data is touched.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/kv/memory_estimate.h>

#include <cstdint>
#include <map>
#include <string>

namespace hearth::tools {

struct ModelSummary {
  std::string architecture;
  uint64_t parameters = 0;       // sum of every tensor's element count
  uint64_t file_bytes = 0;
  uint64_t tensor_bytes = 0;     // sum of tensor data sizes
  int64_t context_length = 0;    // {arch}.context_length (training context)
  kv::ModelDims dims;            // n_layer, n_embd, n_head, n_head_kv, head_dim
  bool chat_template = false;
  std::map<std::string, uint64_t> bytes_by_type;  // "Q4_K" -> bytes of tensors of that type
  // Mixture of experts (dims.n_expert > 0): the stacked expert tensors'
  // bytes (all experts, what memory holds), and the tensor bytes a token
  // reads: every tensor once, but of the experts only the n_expert_used it
  // is routed to (what decode speed follows). active_bytes is tensor_bytes
  // for a dense model.
  uint64_t expert_bytes = 0;
  uint64_t active_bytes = 0;
};

// Errors name the file and the key: a missing architecture, block count or
// head count, or a value of the wrong type. head_dim is
// {arch}.attention.key_length when present, else n_embd / n_head; n_head_kv
// defaults to n_head as the format specifies.
Result<ModelSummary> summarize_model(const gguf::GgufFile& file);

// What running the model at `n_ctx` needs besides its weights (KV cache plus
// scratch, as estimate_memory counts them): the amount a load adds to the file
// size when it checks the machine's free memory before touching the weights.
Result<uint64_t> memory_beyond_weights(const gguf::GgufFile& file, int64_t n_ctx, DType kv_type);

// Refuses a context whose KV cache does not fit in `available` bytes next to
// `other_bytes` (weights and scratch), before anything is allocated:
// "context of 4194304 tokens needs 2.5 GiB of KV cache; 1.2 GiB available".
// `available` 0 means unknown: no check.
Status check_context_memory(int64_t n_ctx, uint64_t kv_bytes, uint64_t other_bytes, uint64_t available);

}  // namespace hearth::tools
