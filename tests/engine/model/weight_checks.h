// Checks over every weight tensor of a loaded model: where its bytes live
// (in the file's mapping, or in the huge-page copy and nowhere in the
// mapping) and that they are the file's bytes, read back through the GGUF
// reader as the reference.
#pragma once

#include <gtest/gtest.h>
#include <hearth/engine/backend/weight_layout.h>
#include <hearth/engine/model/model.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace hearth::testing {

inline std::vector<const backend::Tensor*> all_weights(const model::Model& m) {
  const model::ModelWeights& w = m.weights();
  std::vector<const backend::Tensor*> out{w.tok_embd, w.output_norm, w.output, w.rope_freqs};
  for (const model::LayerWeights& l : w.layers) {
    for (const backend::Tensor* t : {l.attn_norm, l.wq, l.wk, l.wv, l.wqkv, l.bq, l.bk, l.bv, l.q_norm, l.k_norm,
                                     l.wo, l.post_attn_norm, l.ffn_norm, l.w_gate, l.w_up, l.w_gate_up, l.w_down,
                                     l.post_ffn_norm}) {
      out.push_back(t);
    }
  }
  out.erase(std::remove(out.begin(), out.end(), nullptr), out.end());
  return out;
}

// `where` is Mapped or HugePageCopy. Returns how many tensors were compared
// byte for byte (views into a fused tensor are located, not compared whole).
inline size_t expect_weights_hold_the_files_bytes(const model::Model& m, model::WeightMemory where) {
  EXPECT_EQ(m.weight_memory(), where);
  const gguf::GgufFile& file = m.file();
  const uint8_t* map_lo = nullptr;
  const uint8_t* map_hi = nullptr;
  for (const auto& info : file.tensors()) {
    const auto bytes = file.tensor_data(info);
    if (!map_lo || bytes.data() < map_lo) map_lo = bytes.data();
    if (!map_hi || bytes.data() + bytes.size() > map_hi) map_hi = bytes.data() + bytes.size();
  }
  size_t compared = 0;
  for (const backend::Tensor* t : all_weights(m)) {
    const auto* p = static_cast<const uint8_t*>(t->data);
    const bool in_mapping = p >= map_lo && p < map_hi;
    EXPECT_EQ(in_mapping, where == model::WeightMemory::Mapped) << t->name;
    const gguf::TensorInfo* info = file.find_tensor(t->name);
    if (!info || info->bytes != t->bytes()) continue;  // a view (fused projections)
    const auto ref = file.tensor_data(*info);
    // A weight interleaved for the CPU's kernels holds the file's rows in
    // its own order; read back as plain rows they are the file's bytes.
    std::vector<uint8_t> plain(t->bytes());
    backend::copy_plain_rows(*t, 0, t->rows(), plain.data());
    EXPECT_EQ(std::memcmp(plain.data(), ref.data(), ref.size()), 0) << t->name;
    ++compared;
  }
  if (const float* ff = m.hparams().rope.freq_factors) {
    EXPECT_EQ(static_cast<const void*>(ff), m.weights().rope_freqs->data);
  }
  return compared;
}

}  // namespace hearth::testing
