// Weight x activation products. Decode (one token) streams each weight row
// once and splits rows across threads in chunks; prefill converts a tile of
// weight rows to floats once and reuses it for every token.
#include <algorithm>
#include <cstring>
#include <vector>

#include "ops.h"
#include "weight_rows.h"

namespace hearth::backend::cpu {

void op_matmul(const Node& n, ThreadPool& pool) {
  const Tensor* w = n.src[0];
  const Tensor* x = n.src[1];
  const Tensor* bias = n.src[2];
  const DType wt = w->type;
  const int64_t rows = w->ne[1];
  const int64_t cols = w->ne[0];
  const int64_t n_tok = x->ne[1];
  const size_t rb = w->row_bytes();
  const auto* wdata = static_cast<const uint8_t*>(w->data);
  const float* xd = static_cast<const float*>(x->data);
  float* y = static_cast<float*>(n.dst->data);
  const float* bd = bias ? static_cast<const float*>(bias->data) : nullptr;
  const int64_t grain = n_tok == 1 ? 16 : 4;
  pool.parallel_for(rows, grain, [&](int64_t b, int64_t e, int) {
    if (n_tok == 1) {
      for (int64_t r = b; r < e; ++r) y[r] = row_dot_f32(wt, wdata + r * rb, xd, cols) + (bd ? bd[r] : 0.0f);
      return;
    }
    std::vector<float> tile(static_cast<size_t>((e - b) * cols));
    for (int64_t r = b; r < e; ++r) row_to_f32(wt, wdata + r * rb, tile.data() + (r - b) * cols, cols);
    for (int64_t t = 0; t < n_tok; ++t) {
      const float* xr = xd + t * cols;
      for (int64_t r = b; r < e; ++r) {
        const float* wr = tile.data() + (r - b) * cols;
        float s = 0;
        for (int64_t i = 0; i < cols; ++i) s += wr[i] * xr[i];
        y[t * rows + r] = s + (bd ? bd[r] : 0.0f);
      }
    }
  });
}

}  // namespace hearth::backend::cpu
