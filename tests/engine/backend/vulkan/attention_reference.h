// Reference causal attention for the Vulkan attention tests: double sums
// over dense per-position K/V ([pos][kv_head][head_dim]), with the window,
// the score soft cap and optional per-head sink logits (gpt-oss: a logit
// with no value that joins the softmax's normalizer).
#pragma once

#include <hearth/engine/backend/vulkan/kernels.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace hearth::vulkan::testing {

inline std::vector<float> attention_reference(const std::vector<float>& q, const std::vector<float>& k,
                                              const std::vector<float>& v, const std::vector<int32_t>& positions,
                                              const KvLayout& l, uint32_t n_heads, const AttentionOptions& o,
                                              const std::vector<float>* sinks = nullptr) {
  const uint32_t group = n_heads / l.n_kv_heads, hd = l.head_dim;
  std::vector<float> out(q.size());
  for (size_t t = 0; t < positions.size(); ++t) {
    const int32_t last = positions[t];
    const int32_t first = o.window > 0 ? std::max<int32_t>(0, last - static_cast<int32_t>(o.window) + 1) : 0;
    for (uint32_t h = 0; h < n_heads; ++h) {
      const uint32_t kvh = h / group;
      const float* qv = &q[(t * n_heads + h) * hd];
      std::vector<double> w;
      double m = sinks ? double((*sinks)[h]) : -1e300;
      for (int32_t p = first; p <= last; ++p) {
        double dot = 0;
        for (uint32_t d = 0; d < hd; ++d) dot += double(qv[d]) * k[(size_t(p) * l.n_kv_heads + kvh) * hd + d];
        double sc = dot * o.scale;
        if (o.softcap > 0) sc = o.softcap * std::tanh(sc / o.softcap);
        w.push_back(sc);
        m = std::max(m, sc);
      }
      double sum = sinks ? std::exp(double((*sinks)[h]) - m) : 0.0;
      for (auto& e : w) sum += (e = std::exp(e - m));
      for (uint32_t d = 0; d < hd; ++d) {
        double acc = 0;
        for (int32_t p = first; p <= last; ++p) acc += w[p - first] * v[(size_t(p) * l.n_kv_heads + kvh) * hd + d];
        out[(t * n_heads + h) * hd + d] = static_cast<float>(acc / sum);
      }
    }
  }
  return out;
}

}  // namespace hearth::vulkan::testing
