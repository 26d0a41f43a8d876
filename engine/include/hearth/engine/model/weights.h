// Weights of a model, bound to tensors of the GGUF file (used in place).
// Optional tensors are null when the family or the file does not have them.
#pragma once

#include <hearth/engine/backend/tensor.h>

#include <vector>

namespace hearth::model {

using backend::Tensor;

struct LayerWeights {
  Tensor* attn_norm = nullptr;   // {n_embd}
  Tensor* wq = nullptr;          // {n_embd, n_head*head_dim}
  Tensor* wk = nullptr;          // {n_embd, n_head_kv*head_dim}
  Tensor* wv = nullptr;          // {n_embd, n_head_kv*head_dim_v}
  Tensor* wqkv = nullptr;        // fused (phi3): {n_embd, q + k + v widths}
  Tensor* bq = nullptr;          // {n_head*head_dim} (qwen2)
  Tensor* bk = nullptr;          // {n_head_kv*head_dim}
  Tensor* bv = nullptr;          // {n_head_kv*head_dim_v}
  Tensor* q_norm = nullptr;      // {head_dim} per-head RMSNorm (qwen3)
  Tensor* k_norm = nullptr;      // {head_dim}
  Tensor* wo = nullptr;          // {n_head*head_dim_v, n_embd}
  Tensor* bo = nullptr;          // {n_embd} (gpt-oss)
  Tensor* attn_sinks = nullptr;  // {n_head} per-head sink logits (gpt-oss)
  Tensor* post_attn_norm = nullptr;  // {n_embd} (gemma2; BERT's attn_output_norm)
  Tensor* post_attn_norm_b = nullptr;  // {n_embd} LayerNorm bias (BERT)
  Tensor* ffn_norm = nullptr;    // {n_embd}
  Tensor* w_gate = nullptr;      // {n_embd, n_ff}
  Tensor* w_up = nullptr;        // {n_embd, n_ff}
  Tensor* w_gate_up = nullptr;   // fused (phi3): {n_embd, 2*n_ff}, gate first
  Tensor* w_down = nullptr;      // {n_ff, n_embd}
  Tensor* post_ffn_norm = nullptr;   // {n_embd} (gemma2; BERT's layer_output_norm)
  Tensor* post_ffn_norm_b = nullptr;  // {n_embd} LayerNorm bias (BERT)
  Tensor* b_up = nullptr;            // {n_ff} (BERT)
  Tensor* b_down = nullptr;          // {n_embd} (BERT)
  // Mixture of experts: the router and the experts stacked along ne[2].
  Tensor* ffn_gate_inp = nullptr;    // {n_embd, n_expert}
  Tensor* ffn_gate_exps = nullptr;   // {n_embd, n_ff_exp, n_expert}
  Tensor* ffn_up_exps = nullptr;     // {n_embd, n_ff_exp, n_expert}
  Tensor* ffn_down_exps = nullptr;   // {n_ff_exp, n_embd, n_expert}
  // gpt-oss: the router's bias and each expert's biases (rows by expert).
  Tensor* ffn_gate_inp_b = nullptr;   // {n_expert}
  Tensor* ffn_gate_exps_b = nullptr;  // {n_ff_exp, n_expert}
  Tensor* ffn_up_exps_b = nullptr;    // {n_ff_exp, n_expert}
  Tensor* ffn_down_exps_b = nullptr;  // {n_embd, n_expert}
};

struct ModelWeights {
  Tensor* tok_embd = nullptr;     // {n_embd, n_vocab}
  Tensor* output_norm = nullptr;  // {n_embd}
  Tensor* output = nullptr;       // {n_embd, n_vocab}; tok_embd when tied
  Tensor* rope_freqs = nullptr;   // {n_rot/2} Llama 3.1 frequency factors, optional
  // Encoders (BERT): learned positions, token types and the LayerNorm of
  // the summed embeddings. output_norm and output are null there: an
  // encoder has no language-model head.
  Tensor* pos_embd = nullptr;        // {n_embd, n_ctx_train}
  Tensor* tok_types = nullptr;       // {n_embd, n_token_types}
  Tensor* tok_embd_norm = nullptr;   // {n_embd}
  Tensor* tok_embd_norm_b = nullptr; // {n_embd}
  std::vector<LayerWeights> layers;
};

}  // namespace hearth::model
