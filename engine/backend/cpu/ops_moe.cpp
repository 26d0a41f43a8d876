// Mixture-of-experts ops: routing (top-k, gate weights), products by expert
// id and the weighted sum of the chosen experts' outputs. Decode reads only
// the chosen experts' rows, so its cost follows the active parameters;
// prefill groups the batch's (token, expert) slots by expert and runs one
// matrix product per expert over its tokens, the same kernels a dense
// product of that many tokens uses.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "ops.h"

namespace hearth::backend::cpu {
namespace {

// The reference engine clamps the sum of the chosen weights to the smallest
// normal half-precision value before dividing by it.
constexpr float kMinWeightSum = 6.103515625e-5f;

size_t align_up(size_t bytes) { return (bytes + 63) / 64 * 64; }

// One token: each slot's expert rows through the decode kernels, every
// slot's rows in one split across the threads.
void matmul_id_decode(const Node& n, ThreadPool& pool, const quant::KernelTable& kt, MatmulScratch& scratch) {
  const Tensor* w = n.src[0];
  const Tensor* x = n.src[1];
  const Tensor* ids = n.src[2];
  const int64_t cols = w->ne[0], rows = w->ne[1], k = ids->ne[0];
  const int64_t n_act = x->ne[1];  // 1: shared by every slot; k: one input per slot
  const quant::TypeKernels& kw = kt.get(w->type);
  const auto& at = traits(kw.act_type);
  const size_t act_bytes = align_up(static_cast<size_t>(cols / at.block_elements) * at.block_bytes);
  const size_t prepared_bytes = kw.decode.prepare ? align_up(kw.decode.prepared_bytes(cols)) : 0;
  const size_t per_act = act_bytes + prepared_bytes;
  const size_t need = per_act * static_cast<size_t>(n_act);
  if (scratch.buffer.size() < need) scratch.buffer.resize(need);
  std::vector<const uint8_t*> acts(static_cast<size_t>(n_act));
  for (int64_t a = 0; a < n_act; ++a) {
    uint8_t* act = scratch.buffer.data() + per_act * static_cast<size_t>(a);
    kt.quantize_activation(kw.act_type, x->as<const float>() + a * cols, act, cols);
    acts[static_cast<size_t>(a)] = act;
    if (kw.decode.prepare) {
      kw.decode.prepare(act, act + act_bytes, cols);
      acts[static_cast<size_t>(a)] = act + act_bytes;
    }
  }
  const size_t rb = w->row_bytes();
  const size_t expert_stride = rb * static_cast<size_t>(rows);
  const auto* base = static_cast<const uint8_t*>(w->data);
  std::vector<DecodePart> parts(static_cast<size_t>(k));
  for (int64_t s = 0; s < k; ++s) {
    const int32_t e = ids->as<const int32_t>()[s];
    DecodePart& p = parts[static_cast<size_t>(s)];
    p.k = &kw;
    p.w = base + expert_stride * static_cast<size_t>(e);
    p.rb = rb;
    p.rows = rows;
    p.act = acts[static_cast<size_t>(n_act == 1 ? 0 : s)];
    p.y = n.dst->as<float>() + s * rows;
  }
  run_decode_parts(parts, cols, pool);
}

}  // namespace

void op_top_k(const Node& n, ThreadPool& pool) {
  const Tensor* x = n.src[0];
  const int64_t width = x->ne[0], k = n.dst->ne[0];
  pool.parallel_for(x->ne[1], 4, [&](int64_t b, int64_t e, int) {
    std::vector<int32_t> order(static_cast<size_t>(width));
    for (int64_t t = b; t < e; ++t) {
      const float* v = x->as<const float>() + t * width;
      std::iota(order.begin(), order.end(), 0);
      // Largest first; equal values keep the lower index first.
      std::partial_sort(order.begin(), order.begin() + k, order.end(),
                        [&](int32_t i, int32_t j) { return v[i] > v[j] || (v[i] == v[j] && i < j); });
      std::copy_n(order.begin(), k, n.dst->as<int32_t>() + t * k);
    }
  });
}

void op_moe_gate(const Node& n, ThreadPool& pool) {
  const Tensor* logits = n.src[0];
  const Tensor* ids = n.src[1];
  const int64_t n_expert = logits->ne[0], k = ids->ne[0];
  const MoeParams& p = n.params.moe;
  pool.parallel_for(ids->ne[1], 16, [&](int64_t b, int64_t e, int) {
    for (int64_t t = b; t < e; ++t) {
      const float* l = logits->as<const float>() + t * n_expert;
      const int32_t* id = ids->as<const int32_t>() + t * k;
      float* w = n.dst->as<float>() + t * k;
      if (p.gating == MoeGating::Softmax) {
        // Probabilities over every expert, then the chosen ones'.
        const float mx = *std::max_element(l, l + n_expert);
        float sum = 0.0f;
        for (int64_t i = 0; i < n_expert; ++i) sum += std::exp(l[i] - mx);
        for (int64_t s = 0; s < k; ++s) w[s] = std::exp(l[id[s]] - mx) / sum;
      } else {
        float mx = l[id[0]];
        for (int64_t s = 1; s < k; ++s) mx = std::max(mx, l[id[s]]);
        float sum = 0.0f;
        for (int64_t s = 0; s < k; ++s) {
          w[s] = std::exp(l[id[s]] - mx);
          sum += w[s];
        }
        for (int64_t s = 0; s < k; ++s) w[s] /= sum;
      }
      if (p.normalize) {
        float sum = 0.0f;
        for (int64_t s = 0; s < k; ++s) sum += w[s];
        sum = std::max(sum, kMinWeightSum);
        for (int64_t s = 0; s < k; ++s) w[s] /= sum;
      }
      if (p.scale != 1.0f) {
        for (int64_t s = 0; s < k; ++s) w[s] *= p.scale;
      }
    }
  });
}

void op_moe_sum(const Node& n, ThreadPool& pool) {
  const Tensor* y = n.src[0];
  const Tensor* weights = n.src[1];
  const int64_t width = y->ne[0], k = weights->ne[0];
  pool.parallel_for(n.dst->ne[1], 1, [&](int64_t b, int64_t e, int) {
    for (int64_t t = b; t < e; ++t) {
      float* out = n.dst->as<float>() + t * width;
      const float* w = weights->as<const float>() + t * k;
      for (int64_t c = 0; c < width; ++c) out[c] = 0.0f;
      for (int64_t s = 0; s < k; ++s) {
        const float* row = y->as<const float>() + (t * k + s) * width;
        for (int64_t c = 0; c < width; ++c) out[c] += row[c] * w[s];
      }
    }
  });
}

void op_add_id(const Node& n, ThreadPool& pool) {
  const Tensor* y = n.src[0];
  const Tensor* bias = n.src[1];
  const int32_t* id = n.src[2]->as<const int32_t>();
  const int64_t width = y->ne[0];
  pool.parallel_for(y->ne[1], 1, [&](int64_t b, int64_t e, int) {
    for (int64_t slot = b; slot < e; ++slot) {
      const float* row = y->as<const float>() + slot * width;
      const float* add = bias->as<const float>() + static_cast<int64_t>(id[slot]) * width;
      float* out = n.dst->as<float>() + slot * width;
      for (int64_t c = 0; c < width; ++c) out[c] = row[c] + add[c];
    }
  });
}

void op_matmul_id(const Node& n, ThreadPool& pool, const quant::KernelTable& kt, MatmulScratch& scratch) {
  const Tensor* w = n.src[0];
  const Tensor* x = n.src[1];
  const Tensor* ids = n.src[2];
  const int64_t cols = w->ne[0], rows = w->ne[1], n_expert = w->ne[2];
  const int64_t k = ids->ne[0], n_tok = ids->ne[1];
  // One input row per token (gate and up) or per slot (down); with one
  // expert per token the two are the same.
  const bool shared = x->ne[1] == n_tok;
  if (n_tok == 1 && kt.supports(w->type)) {
    matmul_id_decode(n, pool, kt, scratch);
    return;
  }
  // Slots (t * k + s) by expert.
  const int32_t* id = ids->as<const int32_t>();
  std::vector<int64_t> count(static_cast<size_t>(n_expert) + 1, 0);
  for (int64_t i = 0; i < k * n_tok; ++i) ++count[static_cast<size_t>(id[i]) + 1];
  std::vector<int64_t> start(count);
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<int64_t> slots(static_cast<size_t>(k * n_tok));
  {
    std::vector<int64_t> fill(start.begin(), start.end() - 1);
    for (int64_t i = 0; i < k * n_tok; ++i) slots[static_cast<size_t>(fill[static_cast<size_t>(id[i])]++)] = i;
  }
  const int64_t most = *std::max_element(count.begin() + 1, count.end());
  const size_t x_bytes = static_cast<size_t>(cols * most) * sizeof(float);
  const size_t need = align_up(x_bytes) + static_cast<size_t>(rows * most) * sizeof(float);
  if (scratch.expert.size() < need) scratch.expert.resize(need);
  auto* xg = reinterpret_cast<float*>(scratch.expert.data());
  auto* yg = reinterpret_cast<float*>(scratch.expert.data() + align_up(x_bytes));

  const size_t expert_stride = w->row_bytes() * static_cast<size_t>(rows);
  for (int64_t e = 0; e < n_expert; ++e) {
    const int64_t cnt = count[static_cast<size_t>(e) + 1];
    if (cnt == 0) continue;
    const int64_t* mine = slots.data() + start[static_cast<size_t>(e)];
    for (int64_t j = 0; j < cnt; ++j) {
      const int64_t src_row = shared ? mine[j] / k : mine[j];
      std::memcpy(xg + j * cols, x->as<const float>() + src_row * cols, static_cast<size_t>(cols) * sizeof(float));
    }
    Tensor we = *w;
    we.ne = {cols, rows, 1, 1};
    we.data = static_cast<uint8_t*>(w->data) + expert_stride * static_cast<size_t>(e);
    Tensor xe;
    xe.ne = {cols, cnt, 1, 1};
    xe.data = xg;
    Tensor ye;
    ye.ne = {rows, cnt, 1, 1};
    ye.data = yg;
    Node product;
    product.op = Op::MatMul;
    product.src = {&we, &xe, nullptr};
    product.dst = &ye;
    // A few-token pass (a verify pass, a scheduler step) keeps each token's
    // result bit-identical to a one-token pass, as dense products do.
    // Every expert's input is a fresh gather into the same temporary, so
    // nothing converted for the last one may be reused.
    scratch.held = {};
    if (n_tok <= kMaxRowsBatch && cnt > 1 && is_rows_batch_matmul(product, kt)) {
      op_matmul_rows_batch(product, pool, kt, scratch);
    } else {
      op_matmul(product, pool, kt, scratch);
    }
    for (int64_t j = 0; j < cnt; ++j) {
      std::memcpy(n.dst->as<float>() + mine[j] * rows, yg + j * rows, static_cast<size_t>(rows) * sizeof(float));
    }
  }
  scratch.held = {};  // the temporaries named there are gone
}

}  // namespace hearth::backend::cpu
