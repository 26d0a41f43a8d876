// The architecture registry. Each family is one small file with three hooks:
// read hyperparameters, bind tensors, build one layer's ops. Shared blocks
// (attention, feed-forward, norms) live in blocks.h.
#pragma once

#include <hearth/engine/backend/graph.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/model/hparams.h>
#include <hearth/engine/model/weights.h>

#include <deque>
#include <string>
#include <string_view>

namespace hearth::model {

// Binds GGUF tensors as weights, checking their shapes.
class WeightBinder {
 public:
  WeightBinder(const gguf::GgufFile& file, std::deque<Tensor>& store) : file_(file), store_(store) {}
  // shape: innermost first, e.g. {n_embd, n_vocab}.
  Result<Tensor*> require(const std::string& name, std::vector<int64_t> shape);
  // nullptr when the file has no such tensor; an error when its shape is wrong.
  Result<Tensor*> optional(const std::string& name, std::vector<int64_t> shape);
  // require() of a matrix the engine reads as F32 (stacked biases): another
  // type is Unsupported naming the tensor and file.
  Result<Tensor*> require_f32(const std::string& name, std::vector<int64_t> shape);
  uint64_t bound_bytes() const { return bound_bytes_; }

 private:
  const gguf::GgufFile& file_;
  std::deque<Tensor>& store_;
  uint64_t bound_bytes_ = 0;
};

// The rows a pass's last layer computes past its K/V store. Nothing after
// that layer reads more than the rows whose logits are asked for, so its
// attention, output projection and feed-forward run for those rows only,
// while every token's keys and values are still stored (a 256-token prompt
// asking for one row's logits skips 255 rows of the layer's products).
struct KeptRows {
  backend::Tensor* rows = nullptr;       // I32 {n}: indices into the pass's tokens; null: the last `last` rows
  int64_t last = 0;
  backend::Tensor* positions = nullptr;  // I32 {n}: those rows' positions, the queries' key limits
  backend::KvView kv;                    // the attention's view (token_seq of those rows when batched)
};

// What a layer builder sees.
struct LayerContext {
  backend::Graph& graph;
  const HParams& hp;
  const LayerWeights& w;
  backend::Tensor* positions;  // I32 {n_tokens}
  backend::KvView kv;
  int64_t layer;
  // I32 {n_tokens}: the last key position each query sees (graph.h,
  // Graph::attention): `positions` for causal attention.
  backend::Tensor* key_limits;
  // Set on the last layer of a causal pass that reads fewer rows than it
  // has tokens; null otherwise (embedding passes read every row).
  const KeptRows* kept = nullptr;
};

struct ArchDef {
  std::string_view name;
  Status (*read_hparams)(const gguf::GgufFile& file, HParams& hp);
  Status (*bind)(WeightBinder& binder, const HParams& hp, ModelWeights& weights);
  backend::Tensor* (*build_layer)(LayerContext& ctx, backend::Tensor* x);
};

const ArchDef* find_arch(std::string_view name);
// {arch}.pooling_type and {arch}.attention.causal (model_embed.cpp).
Status read_embedding_hparams(const gguf::GgufFile& file, HParams& hp);
std::string supported_list();

const ArchDef& arch_llama();
const ArchDef& arch_qwen2();
const ArchDef& arch_qwen3();
const ArchDef& arch_phi3();
const ArchDef& arch_gemma2();
const ArchDef& arch_gemma3();
const ArchDef& arch_smollm3();
const ArchDef& arch_qwen3moe();
const ArchDef& arch_gpt_oss();
const ArchDef& arch_bert();
const ArchDef& arch_nomic_bert();

}  // namespace hearth::model
