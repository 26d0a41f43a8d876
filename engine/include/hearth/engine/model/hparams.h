// Hyperparameters of a loaded model, read from GGUF metadata by the
// architecture's hook. Everything the forward pass needs to know about shapes.
#pragma once

#include <hearth/engine/backend/graph.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hearth::model {

// Which layers use a sliding attention window. PerLayer: those marked in
// HParams::window_pattern (Gemma 3's 5 local : 1 global, or a file's own list).
enum class SlidingWindowLayers { None, All, EvenLayers, PerLayer };

// How an embedding model turns its per-token hidden states into one vector
// per text (`{arch}.pooling_type`, numbered as the GGUF convention does:
// 0 none, 1 mean, 2 CLS (the first token), 3 last token). Unspecified: the
// file does not say, which a generative model never does.
enum class Pooling { Unspecified, None, Mean, Cls, Last };
const char* to_string(Pooling pooling);

struct HParams {
  std::string architecture;  // "llama", "qwen2", ...
  int64_t n_vocab = 0;
  int64_t n_ctx_train = 0;
  int64_t n_embd = 0;
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;    // per-head size of Q and K (attention.key_length)
  int64_t head_dim_v = 0;  // per-head size of V (attention.value_length)
  int64_t n_ff = 0;
  float rms_eps = 1e-5f;
  float norm_eps = 1e-12f;  // LayerNorm epsilon (BERT: attention.layer_norm_epsilon)

  // Embedding models: `{arch}.pooling_type`, and whether attention is causal
  // (`{arch}.attention.causal`; false for encoders such as BERT).
  Pooling pooling = Pooling::Unspecified;
  bool causal = true;
  int64_t n_token_types = 0;  // BERT: rows of token_types (type 0 is used)

  backend::RopeParams rope;  // mode, n_dims, base, scaling (freq_factors bound with the weights)
  // Gemma 3: the sliding-window layers' own RoPE (own base, unscaled).
  std::optional<backend::RopeParams> rope_swa;
  // SmolLM3: layer l has no RoPE where (l + 1) % no_rope_step == 0; 0: every layer has it.
  int32_t no_rope_step = 0;

  float attn_scale = 0.0f;       // multiplies q.k; 1/sqrt(head_dim) unless the family says otherwise
  float attn_softcap = 0.0f;     // Gemma 2: score soft-capping
  float final_softcap = 0.0f;    // Gemma 2: logit soft-capping
  float embd_scale = 0.0f;       // Gemma: embeddings times sqrt(n_embd); 0 = none
  int32_t sliding_window = 0;
  SlidingWindowLayers window_layers = SlidingWindowLayers::None;
  std::vector<bool> window_pattern;  // PerLayer: true where layer l is a sliding-window layer

  // Mixture of experts (0 experts: a dense feed-forward).
  int64_t n_expert = 0;
  int64_t n_expert_used = 0;  // experts each token runs (top-k of the router)
  int64_t n_ff_exp = 0;       // feed-forward width of one expert
  backend::MoeParams moe;     // how router logits become the chosen experts' weights

  int32_t window_of_layer(int64_t layer) const {
    switch (window_layers) {
      case SlidingWindowLayers::None: return 0;
      case SlidingWindowLayers::All: return sliding_window;
      case SlidingWindowLayers::EvenLayers: return layer % 2 == 0 ? sliding_window : 0;
      case SlidingWindowLayers::PerLayer:
        return layer >= 0 && static_cast<size_t>(layer) < window_pattern.size() &&
                       window_pattern[static_cast<size_t>(layer)]
                   ? sliding_window
                   : 0;
    }
    return 0;
  }

  // The RoPE layer `layer` rotates its queries and keys with (the K shift
  // rotates cached keys with it too); nullptr for a layer without RoPE.
  const backend::RopeParams* rope_of_layer(int64_t layer) const {
    if (no_rope_step > 0 && (layer + 1) % no_rope_step == 0) return nullptr;
    if (rope_swa && window_of_layer(layer) > 0) return &*rope_swa;
    return &rope;
  }
};

}  // namespace hearth::model
