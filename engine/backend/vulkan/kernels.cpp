#include "hearth/engine/backend/vulkan/kernels.h"

#include <fmt/format.h>
#include <hearth/shaders/params.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>

namespace hearth::vulkan {
namespace {

namespace sp = hearth::shaders;
using shaders::ShaderId;

struct WeightShaders {
  DType type;
  ShaderId matvec, matvec_sg, matmul, get_rows, matvec_id;
};

#define HEARTH_WEIGHT_ENTRY(T, t) \
  WeightShaders { DType::T, ShaderId::matvec_##t, ShaderId::matvec_sg_##t, ShaderId::matmul_##t, ShaderId::get_rows_##t, \
                  ShaderId::matvec_id_##t }

constexpr WeightShaders kWeightShaders[] = {
    HEARTH_WEIGHT_ENTRY(F32, f32),     HEARTH_WEIGHT_ENTRY(F16, f16),       HEARTH_WEIGHT_ENTRY(BF16, bf16),
    HEARTH_WEIGHT_ENTRY(Q8_0, q8_0),   HEARTH_WEIGHT_ENTRY(Q4_0, q4_0),     HEARTH_WEIGHT_ENTRY(Q4_1, q4_1),
    HEARTH_WEIGHT_ENTRY(Q5_0, q5_0),   HEARTH_WEIGHT_ENTRY(Q5_1, q5_1),     HEARTH_WEIGHT_ENTRY(Q2_K, q2_k),
    HEARTH_WEIGHT_ENTRY(Q3_K, q3_k),   HEARTH_WEIGHT_ENTRY(Q4_K, q4_k),     HEARTH_WEIGHT_ENTRY(Q5_K, q5_k),
    HEARTH_WEIGHT_ENTRY(Q6_K, q6_k),   HEARTH_WEIGHT_ENTRY(IQ4_NL, iq4_nl), HEARTH_WEIGHT_ENTRY(IQ4_XS, iq4_xs),
    HEARTH_WEIGHT_ENTRY(MXFP4, mxfp4),
};
#undef HEARTH_WEIGHT_ENTRY

// The integer-dot path's shaders, matvec and prompt tiles (shaders.cmake: HEARTH_INT_DOT_TYPES).
struct IntDotShaders {
  DType type;
  ShaderId plain, subgroup, by_id, matmul;
};
#define HEARTH_INT_DOT_ENTRY(T, t)                                                                          \
  IntDotShaders {                                                                                           \
    DType::T, ShaderId::matvec_dp_##t, ShaderId::matvec_dp_sg_##t, ShaderId::matvec_id_dp_##t, ShaderId::matmul_dp_##t \
  }
constexpr IntDotShaders kIntDotShaders[] = {
    HEARTH_INT_DOT_ENTRY(Q8_0, q8_0), HEARTH_INT_DOT_ENTRY(Q4_0, q4_0), HEARTH_INT_DOT_ENTRY(Q4_1, q4_1),
    HEARTH_INT_DOT_ENTRY(Q5_0, q5_0), HEARTH_INT_DOT_ENTRY(Q5_1, q5_1), HEARTH_INT_DOT_ENTRY(Q4_K, q4_k),
    HEARTH_INT_DOT_ENTRY(Q5_K, q5_k), HEARTH_INT_DOT_ENTRY(Q6_K, q6_k), HEARTH_INT_DOT_ENTRY(Q2_K, q2_k),
    HEARTH_INT_DOT_ENTRY(Q3_K, q3_k), HEARTH_INT_DOT_ENTRY(IQ4_NL, iq4_nl), HEARTH_INT_DOT_ENTRY(IQ4_XS, iq4_xs),
    HEARTH_INT_DOT_ENTRY(MXFP4, mxfp4),
};
#undef HEARTH_INT_DOT_ENTRY

std::optional<IntDotShaders> int_dot_shaders(DType type) {
  for (const auto& s : kIntDotShaders) {
    if (s.type == type) return s;
  }
  return std::nullopt;
}

std::optional<WeightShaders> weight_shaders(DType type) {
  for (const auto& w : kWeightShaders) {
    if (w.type == type) return w;
  }
  return std::nullopt;
}

Status need_bytes(std::string_view op, std::string_view what, const BufferView& v, uint64_t bytes) {
  if (v.buffer == nullptr || v.size < bytes) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("Vulkan {}: {} has {} bytes, needs {}", op, what, v.buffer ? v.size : 0, bytes));
  }
  return {};
}

// Row stride in the shader's storage unit: floats for F32, 16-bit words else.
Result<uint32_t> row_stride_units(DType type, uint32_t ncols, std::string_view op) {
  auto bytes = row_bytes(type, ncols);
  if (!bytes.ok()) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("Vulkan {}: {}", op, bytes.error().message));
  }
  // The shaders address 16-bit words: MXFP4's 17-byte blocks need an even
  // number of them per row (a multiple of 64 values).
  if (type == DType::MXFP4 && ncols % 64 != 0) {
    return make_error(ErrorCode::Unsupported,
                      fmt::format("Vulkan {}: MXFP4 rows of {} values (the shaders need a multiple of 64)", op, ncols));
  }
  return static_cast<uint32_t>(*bytes / (type == DType::F32 ? 4 : 2));
}

template <typename P>
constexpr uint32_t push_size() {
  return static_cast<uint32_t>(sizeof(P));
}

}  // namespace

KernelTuning default_tuning(const VulkanContext& ctx) {
  KernelTuning t;
  const uint32_t max_wg = std::min(ctx.limits().max_workgroup_size, ctx.limits().max_workgroup_invocations);
  auto clamp = [&](uint32_t v) { return std::min(v, std::bit_floor(max_wg)); };
  t.elementwise = clamp(t.elementwise);
  t.row_reduce = clamp(t.row_reduce);
  t.get_rows = clamp(t.get_rows);
  // One subgroup per matvec row keeps the reduction short; at least 32 so
  // small-subgroup devices still have enough invocations per row.
  const uint32_t sg = ctx.description().subgroup_size;
  t.matvec = clamp(std::max<uint32_t>(32, sg > 0 ? std::bit_floor(sg) : 32));
  if (ctx.description().subgroup_arithmetic && sg > 0) {
    // Four subgroups per workgroup, one row each: no barriers at all.
    t.matvec_reduction = Reduction::Subgroup;
    t.matvec_rows = 4;
    t.matvec = clamp(4 * std::bit_floor(sg));
  }
  t.attention = clamp(32);
  if (ctx.description().kind == DeviceKind::Software) {
    t.attention_split_positions = 0;
  } else {
    // A GPU runs one token's RMSNorm as a single workgroup, so its time is
    // the latency of each invocation's dependent loads: 64 invocations over
    // a 2048-wide row took 19 us on an H200, 512 leave each a few loads.
    t.row_reduce = clamp(512);
  }
  return t;
}

bool Kernels::supports_weights(DType type) { return weight_shaders(type).has_value(); }

DispatchSize Kernels::grid(uint64_t groups) const {
  // Spread over y when x would exceed the device's limit; shaders flatten.
  const uint64_t max_x = ctx_.limits().max_workgroup_count[0];
  if (groups <= max_x) return {static_cast<uint32_t>(std::max<uint64_t>(groups, 1)), 1, 1};
  const uint64_t y = (groups + max_x - 1) / max_x;
  const uint64_t x = (groups + y - 1) / y;
  return {static_cast<uint32_t>(x), static_cast<uint32_t>(y), 1};
}

Status Kernels::run(CommandSequence& seq, ShaderId shader, uint32_t workgroup, std::span<const Binding> bindings,
                    const void* push, uint32_t push_bytes, DispatchSize groups, std::string_view label) {
  HEARTH_TRY(const Pipeline* p,
             pipelines_.get(shader, {static_cast<uint32_t>(bindings.size()), push_bytes}, workgroup));
  return seq.dispatch(*p, bindings, push, push_bytes, groups, label);
}

Status Kernels::add(CommandSequence& seq, const BufferView& a, const BufferView& b, const BufferView& d, uint32_t n,
                    uint32_t b_len) {
  if (b_len == 0 || b_len > n) return make_error(ErrorCode::InvalidArgument, "Vulkan add: b_len must be in 1..n");
  HEARTH_CHECK(need_bytes("add", "a", a, 4ull * n));
  HEARTH_CHECK(need_bytes("add", "b", b, 4ull * b_len));
  HEARTH_CHECK(need_bytes("add", "d", d, 4ull * n));
  const sp::BinaryParams p{n, b_len};
  const Binding bind[] = {{a, Access::Read}, {b, Access::Read}, {d, Access::Write}};
  return run(seq, ShaderId::binary_add, tuning_.elementwise, bind, &p, push_size<sp::BinaryParams>(),
             grid((n + tuning_.elementwise - 1) / tuning_.elementwise), "add");
}

Status Kernels::scale(CommandSequence& seq, const BufferView& x, const BufferView& y, uint32_t n, float factor) {
  HEARTH_CHECK(need_bytes("scale", "x", x, 4ull * n));
  HEARTH_CHECK(need_bytes("scale", "y", y, 4ull * n));
  const sp::UnaryParams p{n, factor};
  const Binding bind[] = {{x, Access::Read}, {y, Access::Write}};
  return run(seq, ShaderId::unary_scale, tuning_.elementwise, bind, &p, push_size<sp::UnaryParams>(),
             grid((n + tuning_.elementwise - 1) / tuning_.elementwise), "scale");
}

Status Kernels::softcap(CommandSequence& seq, const BufferView& x, const BufferView& y, uint32_t n, float cap) {
  if (!(cap > 0.0f)) return make_error(ErrorCode::InvalidArgument, fmt::format("Vulkan softcap: cap {} must be > 0", cap));
  HEARTH_CHECK(need_bytes("softcap", "x", x, 4ull * n));
  HEARTH_CHECK(need_bytes("softcap", "y", y, 4ull * n));
  const sp::UnaryParams p{n, cap};
  const Binding bind[] = {{x, Access::Read}, {y, Access::Write}};
  return run(seq, ShaderId::unary_softcap, tuning_.elementwise, bind, &p, push_size<sp::UnaryParams>(),
             grid((n + tuning_.elementwise - 1) / tuning_.elementwise), "softcap");
}

Status Kernels::glu(CommandSequence& seq, GluKind kind, const BufferView& gate, const BufferView& up,
                    const BufferView& out, uint32_t n) {
  HEARTH_CHECK(need_bytes("glu", "gate", gate, 4ull * n));
  HEARTH_CHECK(need_bytes("glu", "up", up, 4ull * n));
  HEARTH_CHECK(need_bytes("glu", "out", out, 4ull * n));
  const sp::GluParams p{n, 0.0f, 0.0f};
  const Binding bind[] = {{gate, Access::Read}, {up, Access::Read}, {out, Access::Write}};
  const bool gelu = kind == GluKind::GeGlu;
  return run(seq, gelu ? ShaderId::geglu : ShaderId::swiglu, tuning_.elementwise, bind, &p,
             push_size<sp::GluParams>(), grid((n + tuning_.elementwise - 1) / tuning_.elementwise),
             gelu ? "geglu" : "swiglu");
}

Status Kernels::swiglu_oai(CommandSequence& seq, const BufferView& gate, const BufferView& up, const BufferView& out,
                           uint32_t n, float alpha, float limit) {
  HEARTH_CHECK(need_bytes("swiglu_oai", "gate", gate, 4ull * n));
  HEARTH_CHECK(need_bytes("swiglu_oai", "up", up, 4ull * n));
  HEARTH_CHECK(need_bytes("swiglu_oai", "out", out, 4ull * n));
  const sp::GluParams p{n, alpha, limit};
  const Binding bind[] = {{gate, Access::Read}, {up, Access::Read}, {out, Access::Write}};
  return run(seq, ShaderId::swiglu_oai, tuning_.elementwise, bind, &p, push_size<sp::GluParams>(),
             grid((n + tuning_.elementwise - 1) / tuning_.elementwise), "swiglu_oai");
}

Status Kernels::gelu(CommandSequence& seq, const BufferView& x, const BufferView& y, uint32_t n) {
  HEARTH_CHECK(need_bytes("gelu", "x", x, 4ull * n));
  HEARTH_CHECK(need_bytes("gelu", "y", y, 4ull * n));
  const sp::UnaryParams p{n, 1.0f};
  const Binding bind[] = {{x, Access::Read}, {y, Access::Write}};
  return run(seq, ShaderId::unary_gelu, tuning_.elementwise, bind, &p, push_size<sp::UnaryParams>(),
             grid((n + tuning_.elementwise - 1) / tuning_.elementwise), "gelu");
}

Status Kernels::layer_norm(CommandSequence& seq, const BufferView& x, const BufferView& w, const BufferView& b,
                           const BufferView& y, uint32_t ncols, uint32_t nrows, float eps) {
  HEARTH_CHECK(need_bytes("layer_norm", "x", x, 4ull * ncols * nrows));
  HEARTH_CHECK(need_bytes("layer_norm", "weight", w, 4ull * ncols));
  HEARTH_CHECK(need_bytes("layer_norm", "bias", b, 4ull * ncols));
  HEARTH_CHECK(need_bytes("layer_norm", "y", y, 4ull * ncols * nrows));
  const sp::RmsNormParams p{ncols, nrows, eps};
  const Binding bind[] = {{x, Access::Read}, {w, Access::Read}, {b, Access::Read}, {y, Access::Write}};
  return run(seq, ShaderId::layer_norm, tuning_.row_reduce, bind, &p, push_size<sp::RmsNormParams>(), grid(nrows),
             "layer_norm");
}

Status Kernels::rms_norm(CommandSequence& seq, const BufferView& x, const BufferView& w, const BufferView& y,
                         uint32_t ncols, uint32_t nrows, float eps) {
  HEARTH_CHECK(need_bytes("rms_norm", "x", x, 4ull * ncols * nrows));
  HEARTH_CHECK(need_bytes("rms_norm", "weight", w, 4ull * ncols));
  HEARTH_CHECK(need_bytes("rms_norm", "y", y, 4ull * ncols * nrows));
  const sp::RmsNormParams p{ncols, nrows, eps};
  const Binding bind[] = {{x, Access::Read}, {w, Access::Read}, {y, Access::Write}};
  return run(seq, ShaderId::rms_norm, tuning_.row_reduce, bind, &p, push_size<sp::RmsNormParams>(), grid(nrows),
             "rms_norm");
}

namespace {

// YaRN's correction dimension: the rotary pair index whose wavelength spans
// n_rot rotations over the training context.
float yarn_corr_dim(uint32_t n_dims, uint32_t n_ctx_orig, float n_rot, float base) {
  return static_cast<float>(n_dims) *
         std::log(static_cast<float>(n_ctx_orig) / (n_rot * 2.0f * 3.14159265358979f)) / (2.0f * std::log(base));
}

}  // namespace

Status Kernels::rope(CommandSequence& seq, RopeStyle style, const BufferView& x, const BufferView& positions,
                     const RopeShape& s, const RopeFrequencies& f) {
  if (s.n_dims == 0 || s.n_dims % 2 != 0 || s.n_dims > s.head_dim) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("Vulkan rope: n_dims {} must be even and <= head_dim {}", s.n_dims, s.head_dim));
  }
  if (f.ext_factor != 0.0f && (f.n_ctx_orig == 0 || !(f.freq_scale > 0.0f))) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("Vulkan rope: YaRN needs n_ctx_orig > 0 and freq_scale > 0 (got {} and {})",
                                  f.n_ctx_orig, f.freq_scale));
  }
  HEARTH_CHECK(need_bytes("rope", "x", x, 4ull * s.head_dim * s.n_heads * s.n_tokens));
  HEARTH_CHECK(need_bytes("rope", "positions", positions, 4ull * s.n_tokens));
  const bool has_ff = f.freq_factors.buffer != nullptr;
  if (has_ff) HEARTH_CHECK(need_bytes("rope", "freq_factors", f.freq_factors, 4ull * (s.n_dims / 2)));
  float corr_low = 0, corr_high = 0, mscale = f.attn_factor;
  if (f.ext_factor != 0.0f) {
    corr_low = std::max(0.0f, std::floor(yarn_corr_dim(s.n_dims, f.n_ctx_orig, f.beta_fast, f.freq_base)));
    corr_high = std::min(static_cast<float>(s.n_dims - 1),
                         std::ceil(yarn_corr_dim(s.n_dims, f.n_ctx_orig, f.beta_slow, f.freq_base)));
    mscale *= 1.0f + 0.1f * std::log(1.0f / f.freq_scale);
  }
  const sp::RopeParams p{s.head_dim, s.n_dims,   s.n_heads, s.n_tokens, f.freq_base,     f.freq_scale,
                         f.ext_factor, corr_low, corr_high, mscale,     has_ff ? 1u : 0u};
  // Without factors the positions are bound again as a placeholder (never read).
  const Binding bind[] = {{x, Access::ReadWrite}, {positions, Access::Read}, {has_ff ? f.freq_factors : positions, Access::Read}};
  const uint64_t pairs = uint64_t{s.n_tokens} * s.n_heads * (s.n_dims / 2);
  const bool neox = style == RopeStyle::NeoX;
  return run(seq, neox ? ShaderId::rope_neox : ShaderId::rope_normal, tuning_.elementwise, bind, &p,
             push_size<sp::RopeParams>(), grid((pairs + tuning_.elementwise - 1) / tuning_.elementwise),
             neox ? "rope_neox" : "rope");
}

Status Kernels::get_rows(CommandSequence& seq, DType type, const BufferView& table, const BufferView& ids,
                         const BufferView& out, uint32_t ncols, uint32_t n_ids, uint32_t row_begin,
                         uint32_t row_count) {
  const auto shaders = weight_shaders(type);
  if (!shaders) {
    return make_error(ErrorCode::Unsupported, fmt::format("Vulkan get_rows: no shader for {}", traits(type).name));
  }
  HEARTH_TRY(const uint32_t stride, row_stride_units(type, ncols, "get_rows"));
  HEARTH_CHECK(need_bytes("get_rows", "ids", ids, 4ull * n_ids));
  HEARTH_CHECK(need_bytes("get_rows", "out", out, 4ull * ncols * n_ids));
  // The shader trusts ids; the table must at least hold one row.
  HEARTH_CHECK(need_bytes("get_rows", "table", table, uint64_t{stride} * (type == DType::F32 ? 4 : 2)));
  const sp::GetRowsParams p{ncols, n_ids, stride, row_begin, row_count};
  const Binding bind[] = {{table, Access::Read}, {ids, Access::Read}, {out, Access::Write}};
  return run(seq, shaders->get_rows, tuning_.get_rows, bind, &p, push_size<sp::GetRowsParams>(), grid(n_ids),
             "get_rows");
}

Status Kernels::matvec(CommandSequence& seq, DType type, const BufferView& w, const BufferView& x,
                       const BufferView& y, uint32_t ncols, uint32_t nrows, uint32_t n_tokens,
                       const MatvecAddends& add) {
  const auto shaders = weight_shaders(type);
  if (!shaders) {
    return make_error(ErrorCode::Unsupported, fmt::format("Vulkan matvec: no shader for {}", traits(type).name));
  }
  if (n_tokens == 0 || n_tokens > kMatvecMaxTokens) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("Vulkan matvec: {} tokens (1..{})", n_tokens, kMatvecMaxTokens));
  }
  HEARTH_TRY(const uint32_t stride, row_stride_units(type, ncols, "matvec"));
  HEARTH_CHECK(need_bytes("matvec", "weights", w, uint64_t{stride} * nrows * (type == DType::F32 ? 4 : 2)));
  HEARTH_CHECK(need_bytes("matvec", "x", x, 4ull * ncols * n_tokens));
  HEARTH_CHECK(need_bytes("matvec", "y", y, 4ull * nrows * n_tokens));
  return dispatch_matvec(seq, shaders->matvec, shaders->matvec_sg, w, x, y, add, ncols, nrows, stride, n_tokens,
                         "matvec");
}

Status Kernels::dispatch_matvec(CommandSequence& seq, ShaderId plain, ShaderId subgroup, const BufferView& w,
                                const BufferView& x, const BufferView& y, const MatvecAddends& add, uint32_t ncols,
                                uint32_t nrows, uint32_t row_stride, uint32_t n_tokens, std::string_view label) {
  const bool bias = add.bias.buffer != nullptr, residual = add.residual.buffer != nullptr;
  if (bias) HEARTH_CHECK(need_bytes(label, "bias", add.bias, 4ull * nrows));
  if (residual) HEARTH_CHECK(need_bytes(label, "residual", add.residual, 4ull * nrows * n_tokens));
  // The shader never reads an addend it was not given; the weights stand in for its binding.
  const Binding bind[] = {{w, Access::Read},
                          {x, Access::Read},
                          {y, Access::Write},
                          {bias ? add.bias : w, Access::Read},
                          {residual ? add.residual : w, Access::Read}};
  const sp::MatvecParams p{ncols, nrows, row_stride, bias ? 1u : 0u, residual ? 1u : 0u};
  // The token count is specialization constant 2 (MV_COLS): the shader's
  // per-token loops unroll, and each count is its own pipeline.
  if (tuning_.matvec_reduction == Reduction::Subgroup) {
    const uint32_t rows = std::max<uint32_t>(tuning_.matvec_rows, 1);
    HEARTH_TRY(const Pipeline* pl, pipelines_.get(subgroup, {5, push_size<sp::MatvecParams>()},
                                                  Specialization{tuning_.matvec, rows, n_tokens}));
    return seq.dispatch(*pl, bind, &p, push_size<sp::MatvecParams>(), grid((p.nrows + rows - 1) / rows), label);
  }
  HEARTH_TRY(const Pipeline* pl, pipelines_.get(plain, {5, push_size<sp::MatvecParams>()},
                                                Specialization{tuning_.matvec, 1, n_tokens}));
  return seq.dispatch(*pl, bind, &p, push_size<sp::MatvecParams>(), grid(p.nrows), label);
}

bool Kernels::supports_int_dot(DType type) { return int_dot_shaders(type).has_value(); }

uint64_t Kernels::quantized_bytes(uint32_t ncols, uint32_t n_tokens) {
  return 4ull * sp::token_words(ncols / 32) * n_tokens;
}

Status Kernels::quantize_activations(CommandSequence& seq, const BufferView& x, const BufferView& xq, uint32_t ncols,
                                     uint32_t n_tokens) {
  if (ncols == 0 || ncols % 32 != 0 || n_tokens == 0) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("Vulkan quantize_activations: {} columns x {} tokens (columns: a multiple of 32)",
                                  ncols, n_tokens));
  }
  HEARTH_CHECK(need_bytes("quantize_activations", "x", x, 4ull * ncols * n_tokens));
  HEARTH_CHECK(need_bytes("quantize_activations", "xq", xq, quantized_bytes(ncols, n_tokens)));
  const sp::QuantizeParams p{ncols, n_tokens};
  const Binding bind[] = {{x, Access::Read}, {xq, Access::Write}};
  const uint64_t blocks = uint64_t{ncols / 32} * n_tokens;
  return run(seq, ShaderId::quantize_q8, tuning_.elementwise, bind, &p, push_size<sp::QuantizeParams>(),
             grid((blocks + tuning_.elementwise - 1) / tuning_.elementwise), "quantize_q8");
}

Status Kernels::matvec_int_dot(CommandSequence& seq, DType type, const BufferView& w, const BufferView& xq,
                               const BufferView& y, uint32_t ncols, uint32_t nrows, uint32_t n_tokens,
                               const MatvecAddends& add) {
  if (!ctx_.description().integer_dot) {
    return make_error(ErrorCode::Unsupported, fmt::format("Vulkan matvec_int_dot: {} has no integer dot products",
                                                          ctx_.description().name));
  }
  const auto shaders = int_dot_shaders(type);
  if (!shaders) {
    return make_error(ErrorCode::Unsupported,
                      fmt::format("Vulkan matvec_int_dot: no integer-dot shader for {}", traits(type).name));
  }
  if (n_tokens == 0 || n_tokens > kMatvecMaxTokens) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("Vulkan matvec_int_dot: {} tokens (1..{})", n_tokens, kMatvecMaxTokens));
  }
  HEARTH_TRY(const uint32_t stride, row_stride_units(type, ncols, "matvec_int_dot"));
  HEARTH_CHECK(need_bytes("matvec_int_dot", "weights", w, uint64_t{stride} * nrows * 2));
  HEARTH_CHECK(need_bytes("matvec_int_dot", "xq", xq, quantized_bytes(ncols, n_tokens)));
  HEARTH_CHECK(need_bytes("matvec_int_dot", "y", y, 4ull * nrows * n_tokens));
  return dispatch_matvec(seq, shaders->plain, shaders->subgroup, w, xq, y, add, ncols, nrows, stride, n_tokens,
                         "matvec_int_dot");
}

Status Kernels::matmul(CommandSequence& seq, DType type, const BufferView& w, const BufferView& x,
                       const BufferView& y, uint32_t m_rows, uint32_t n_tokens, uint32_t k) {
  const auto shaders = weight_shaders(type);
  if (!shaders) {
    return make_error(ErrorCode::Unsupported, fmt::format("Vulkan matmul: no shader for {}", traits(type).name));
  }
  HEARTH_TRY(const uint32_t stride, row_stride_units(type, k, "matmul"));
  HEARTH_CHECK(need_bytes("matmul", "weights", w, uint64_t{stride} * m_rows * (type == DType::F32 ? 4 : 2)));
  HEARTH_CHECK(need_bytes("matmul", "x", x, 4ull * k * n_tokens));
  HEARTH_CHECK(need_bytes("matmul", "y", y, 4ull * m_rows * n_tokens));
  const Binding bind[] = {{w, Access::Read}, {x, Access::Read}, {y, Access::Write}};
  return dispatch_matmul(seq, shaders->matmul, bind, m_rows, n_tokens, k, stride, "matmul");
}

Status Kernels::matmul_int_dot(CommandSequence& seq, DType type, const BufferView& w, const BufferView& xq,
                               const BufferView& y, uint32_t m_rows, uint32_t n_tokens, uint32_t k) {
  const auto shaders = int_dot_shaders(type);
  if (!shaders) {
    return make_error(ErrorCode::Unsupported,
                      fmt::format("Vulkan matmul_int_dot: no integer-dot shader for {}", traits(type).name));
  }
  if (k == 0 || k % 32 != 0) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("Vulkan matmul_int_dot: k = {} (a multiple of 32)", k));
  }
  HEARTH_TRY(const uint32_t stride, row_stride_units(type, k, "matmul_int_dot"));
  HEARTH_CHECK(need_bytes("matmul_int_dot", "weights", w, uint64_t{stride} * m_rows * 2));
  HEARTH_CHECK(need_bytes("matmul_int_dot", "xq", xq, quantized_bytes(k, n_tokens)));
  HEARTH_CHECK(need_bytes("matmul_int_dot", "y", y, 4ull * m_rows * n_tokens));
  const Binding bind[] = {{w, Access::Read}, {xq, Access::Read}, {y, Access::Write}};
  return dispatch_matmul(seq, shaders->matmul, bind, m_rows, n_tokens, k, stride, "matmul_int_dot");
}

Status Kernels::dispatch_matmul(CommandSequence& seq, ShaderId shader, std::span<const Binding> bind,
                                uint32_t m_rows, uint32_t n_tokens, uint32_t k, uint32_t row_stride,
                                std::string_view label) {
  const sp::MatmulParams p{m_rows, n_tokens, k, row_stride};
  // 64-row tiles of 16, 32 or 64 tokens, one invocation per token of the
  // tile (see matmul.comp): the smallest tile that holds a short batch, so
  // a 20-token prompt does not compute 64 tokens' worth of products.
  constexpr uint32_t kTileM = 64;
  const uint32_t tile_n = p.n_tokens <= 16 ? 16 : p.n_tokens <= 32 ? 32 : 64;
  const DispatchSize groups{(p.m_rows + kTileM - 1) / kTileM, (p.n_tokens + tile_n - 1) / tile_n, 1};
  if (groups.y > ctx_.limits().max_workgroup_count[1] || groups.x > ctx_.limits().max_workgroup_count[0]) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("Vulkan {}: {} rows x {} tokens in one dispatch", label, p.m_rows, p.n_tokens));
  }
  return run(seq, shader, tile_n, bind, &p, push_size<sp::MatmulParams>(), groups, label);
}

Status Kernels::matvec_id(CommandSequence& seq, DType type, const BufferView& w, const BufferView& x,
                          const BufferView& ids, const BufferView& y, const MatvecIdShape& s) {
  const auto shaders = weight_shaders(type);
  if (!shaders) {
    return make_error(ErrorCode::Unsupported, fmt::format("Vulkan matvec_id: no shader for {}", traits(type).name));
  }
  const uint64_t x_rows = s.k == 0 ? 0 : (s.x_per_slot ? s.n_slots : s.n_slots / s.k);
  HEARTH_CHECK(need_bytes("matvec_id", "x", x, 4ull * s.ncols * x_rows));
  return dispatch_matvec_id(seq, shaders->matvec_id, type, w, x, ids, y, s, "matvec_id");
}

Status Kernels::matvec_id_int_dot(CommandSequence& seq, DType type, const BufferView& w, const BufferView& xq,
                                  const BufferView& ids, const BufferView& y, const MatvecIdShape& s) {
  if (!ctx_.description().integer_dot) {
    return make_error(ErrorCode::Unsupported, fmt::format("Vulkan matvec_id_int_dot: {} has no integer dot products",
                                                          ctx_.description().name));
  }
  const auto shaders = int_dot_shaders(type);
  if (!shaders) {
    return make_error(ErrorCode::Unsupported,
                      fmt::format("Vulkan matvec_id_int_dot: no integer-dot shader for {}", traits(type).name));
  }
  const uint32_t x_rows = s.k == 0 ? 0 : (s.x_per_slot ? s.n_slots : s.n_slots / s.k);
  HEARTH_CHECK(need_bytes("matvec_id_int_dot", "xq", xq, quantized_bytes(s.ncols, x_rows)));
  return dispatch_matvec_id(seq, shaders->by_id, type, w, xq, ids, y, s, "matvec_id_int_dot");
}

Status Kernels::dispatch_matvec_id(CommandSequence& seq, ShaderId shader, DType type, const BufferView& w,
                                   const BufferView& x, const BufferView& ids, const BufferView& y,
                                   const MatvecIdShape& s, std::string_view label) {
  if (s.k == 0 || s.n_slots % s.k != 0 || s.n_expert == 0) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("Vulkan matvec_id: {} slots of {} experts out of {}",
                                                              s.n_slots, s.k, s.n_expert));
  }
  HEARTH_TRY(const uint32_t stride, row_stride_units(type, s.ncols, "matvec_id"));
  const uint64_t expert_units = uint64_t{stride} * s.nrows;
  const uint64_t unit = type == DType::F32 ? 4 : 2;
  // The shader trusts ids (made by moe_top_k, below n_expert): every expert
  // must be in the binding, and its offset must fit the shader's 32 bits.
  if (expert_units * s.n_expert > UINT32_MAX) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("Vulkan matvec_id: {} experts of {} bytes exceed one binding's addressing",
                                  s.n_expert, expert_units * unit));
  }
  HEARTH_CHECK(need_bytes("matvec_id", "weights", w, expert_units * s.n_expert * unit));
  HEARTH_CHECK(need_bytes("matvec_id", "ids", ids, 4ull * s.n_slots));
  HEARTH_CHECK(need_bytes("matvec_id", "y", y, 4ull * s.nrows * s.n_slots));
  if (s.nrows > ctx_.limits().max_workgroup_count[0] || s.n_slots > ctx_.limits().max_workgroup_count[1]) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("Vulkan matvec_id: {} rows x {} slots in one dispatch", s.nrows, s.n_slots));
  }
  const sp::MatvecIdParams p{s.ncols, s.nrows, stride, static_cast<uint32_t>(expert_units), s.k,
                             s.x_per_slot ? 1u : 0u, s.expert_begin, s.n_expert};
  const Binding bind[] = {{w, Access::Read}, {x, Access::Read}, {y, Access::Write}, {ids, Access::Read}};
  return run(seq, shader, tuning_.matvec, bind, &p, push_size<sp::MatvecIdParams>(), {s.nrows, s.n_slots, 1}, label);
}

Status Kernels::moe_top_k(CommandSequence& seq, const BufferView& logits, const BufferView& ids, const MoeShape& s) {
  if (s.k == 0 || s.k > s.n_expert) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("Vulkan moe_top_k: k {} of {} experts", s.k, s.n_expert));
  }
  HEARTH_CHECK(need_bytes("moe_top_k", "logits", logits, 4ull * s.n_expert * s.n_tokens));
  HEARTH_CHECK(need_bytes("moe_top_k", "ids", ids, 4ull * s.k * s.n_tokens));
  const sp::MoeRouteParams p{s.n_expert, s.k, s.n_tokens, 0, 0, 0, 1.0f};
  const Binding bind[] = {{logits, Access::Read}, {ids, Access::Write}};
  return run(seq, ShaderId::moe_top_k, tuning_.elementwise, bind, &p, push_size<sp::MoeRouteParams>(),
             grid((s.n_tokens + tuning_.elementwise - 1) / tuning_.elementwise), "moe_top_k");
}

Status Kernels::moe_gate(CommandSequence& seq, const BufferView& logits, const BufferView& ids,
                         const BufferView& weights, const MoeShape& s, uint32_t gating, bool normalize, float scale) {
  if (s.k == 0 || s.k > s.n_expert || gating > 1) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("Vulkan moe_gate: k {} of {} experts, gating {}", s.k, s.n_expert, gating));
  }
  HEARTH_CHECK(need_bytes("moe_gate", "logits", logits, 4ull * s.n_expert * s.n_tokens));
  HEARTH_CHECK(need_bytes("moe_gate", "ids", ids, 4ull * s.k * s.n_tokens));
  HEARTH_CHECK(need_bytes("moe_gate", "weights", weights, 4ull * s.k * s.n_tokens));
  const sp::MoeRouteParams p{s.n_expert, s.k, s.n_tokens, 0, gating, normalize ? 1u : 0u, scale};
  const Binding bind[] = {{logits, Access::Read}, {ids, Access::Read}, {weights, Access::Write}};
  return run(seq, ShaderId::moe_gate, tuning_.elementwise, bind, &p, push_size<sp::MoeRouteParams>(),
             grid((s.n_tokens + tuning_.elementwise - 1) / tuning_.elementwise), "moe_gate");
}

Status Kernels::moe_sum(CommandSequence& seq, const BufferView& y, const BufferView& weights, const BufferView& out,
                        const MoeShape& s) {
  const uint64_t n = uint64_t{s.n_tokens} * s.width;
  HEARTH_CHECK(need_bytes("moe_sum", "y", y, 4 * n * s.k));
  HEARTH_CHECK(need_bytes("moe_sum", "weights", weights, 4ull * s.k * s.n_tokens));
  HEARTH_CHECK(need_bytes("moe_sum", "out", out, 4 * n));
  const sp::MoeRouteParams p{0, s.k, s.n_tokens, s.width, 0, 0, 1.0f};
  const Binding bind[] = {{y, Access::Read}, {weights, Access::Read}, {out, Access::Write}};
  return run(seq, ShaderId::moe_sum, tuning_.elementwise, bind, &p, push_size<sp::MoeRouteParams>(),
             grid((n + tuning_.elementwise - 1) / tuning_.elementwise), "moe_sum");
}

Status Kernels::moe_add_id(CommandSequence& seq, const BufferView& y, const BufferView& bias, const BufferView& ids,
                           const BufferView& out, const MoeShape& s) {
  if (s.k == 0 || s.n_expert == 0) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("Vulkan moe_add_id: k {} of {} experts", s.k, s.n_expert));
  }
  const uint64_t n = uint64_t{s.n_tokens} * s.k * s.width;
  HEARTH_CHECK(need_bytes("moe_add_id", "y", y, 4 * n));
  HEARTH_CHECK(need_bytes("moe_add_id", "out", out, 4 * n));
  HEARTH_CHECK(need_bytes("moe_add_id", "ids", ids, 4ull * s.k * s.n_tokens));
  // The shader trusts ids (made by moe_top_k, below n_expert).
  HEARTH_CHECK(need_bytes("moe_add_id", "bias", bias, 4ull * s.n_expert * s.width));
  const sp::MoeRouteParams p{s.n_expert, s.k, s.n_tokens, s.width, 0, 0, 1.0f};
  const Binding bind[] = {{y, Access::Read}, {ids, Access::Read}, {bias, Access::Read}, {out, Access::Write}};
  return run(seq, ShaderId::moe_add_id, tuning_.elementwise, bind, &p, push_size<sp::MoeRouteParams>(),
             grid((n + tuning_.elementwise - 1) / tuning_.elementwise), "moe_add_id");
}

namespace {

Status check_kv_layout(std::string_view op, const KvLayout& l) {
  if (l.head_dim == 0 || l.n_kv_heads == 0 || l.block_tokens == 0) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("Vulkan {}: KV layout head_dim {} kv heads {} block tokens {} must be > 0", op,
                                  l.head_dim, l.n_kv_heads, l.block_tokens));
  }
  if (l.type != DType::F16 && l.type != DType::Q8_0) {
    return make_error(ErrorCode::Unsupported, fmt::format("Vulkan {}: {} KV cache", op, traits(l.type).name));
  }
  if (l.type == DType::Q8_0 && l.head_dim % 32 != 0) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("Vulkan {}: a Q8_0 KV cache needs head_dim {} to be a multiple of 32", op, l.head_dim));
  }
  return {};
}

// Per-token tables: the token_seq buffer covers every token and the block
// table holds every sequence's table (shaders trust both).
Status check_token_tables(std::string_view op, const TokenTables& t, const BufferView& block_table, uint32_t n_tokens) {
  if (t.table_blocks == 0) return {};
  if (t.n_tables == 0) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("Vulkan {}: per-token tables but no table", op));
  }
  HEARTH_CHECK(need_bytes(op, "token sequences", t.token_seq, 4ull * n_tokens));
  return need_bytes(op, "block tables", block_table, 4ull * t.table_blocks * t.n_tables);
}

// Bytes of one cache block (all KV heads' rows of block_tokens positions).
uint64_t kv_block_bytes(const KvLayout& l) {
  const uint64_t row = l.type == DType::Q8_0 ? uint64_t{l.head_dim} / 32 * 34 : 2ull * l.head_dim;
  return row * l.block_tokens * l.n_kv_heads;
}

}  // namespace

Status Kernels::kv_store(CommandSequence& seq, const BufferView& k_new, const BufferView& v_new,
                         const KvBuffers& kv, const KvLayout& layout, const BufferView& positions,
                         uint32_t n_tokens, const TokenTables& tables) {
  HEARTH_CHECK(check_kv_layout("kv_store", layout));
  const uint64_t n = uint64_t{n_tokens} * layout.n_kv_heads * layout.head_dim;
  HEARTH_CHECK(need_bytes("kv_store", "k", k_new, 4 * n));
  HEARTH_CHECK(need_bytes("kv_store", "v", v_new, 4 * n));
  HEARTH_CHECK(need_bytes("kv_store", "positions", positions, 4ull * n_tokens));
  // Shaders trust positions and the table; the regions must hold one block.
  const uint64_t block_bytes = kv_block_bytes(layout);
  HEARTH_CHECK(need_bytes("kv_store", "k cache", kv.k, block_bytes));
  HEARTH_CHECK(need_bytes("kv_store", "v cache", kv.v, block_bytes));
  HEARTH_CHECK(need_bytes("kv_store", "block table", kv.block_table, 4));
  HEARTH_CHECK(check_token_tables("kv_store", tables, kv.block_table, n_tokens));
  const sp::KvStoreParams p{layout.head_dim, layout.n_kv_heads, n_tokens, layout.block_tokens, tables.table_blocks};
  // With one table the positions stand in for token_seq (never read).
  const BufferView token_seq = tables.table_blocks > 0 ? tables.token_seq : positions;
  const Binding bind[] = {{k_new, Access::Read},          {v_new, Access::Read},     {kv.k, Access::ReadWrite},
                          {kv.v, Access::ReadWrite},      {kv.block_table, Access::Read}, {positions, Access::Read},
                          {token_seq, Access::Read}};
  const bool q8 = layout.type == DType::Q8_0;
  const uint64_t items = q8 ? n / 32 : n;  // Q8_0: one invocation per block
  return run(seq, q8 ? ShaderId::kv_store_q8_0 : ShaderId::kv_store_f16, tuning_.elementwise, bind, &p,
             push_size<sp::KvStoreParams>(), grid((items + tuning_.elementwise - 1) / tuning_.elementwise), "kv_store");
}

AttentionSplit Kernels::attention_split(uint32_t n_tokens, uint32_t max_visible) const {
  AttentionSplit split;
  const uint32_t per = tuning_.attention_split_positions;
  if (per == 0 || n_tokens > kMatvecMaxTokens || max_visible <= per) return split;
  split.n_splits = std::min<uint32_t>(std::max<uint32_t>(tuning_.attention_max_splits, 1), (max_visible + per - 1) / per);
  split.split_len = (max_visible + split.n_splits - 1) / split.n_splits;
  if (split.n_splits == 1) split.split_len = 0;
  return split;
}

uint64_t Kernels::attention_partial_bytes(uint32_t head_dim, uint32_t n_heads, uint32_t n_tokens, uint32_t n_splits) {
  return 4ull * (head_dim + 2) * n_heads * n_tokens * n_splits;
}

Status Kernels::attention(CommandSequence& seq, const BufferView& q, const KvBuffers& kv, const KvLayout& layout,
                          const BufferView& positions, const BufferView& out, const AttentionShape& s,
                          const AttentionOptions& o, const BufferView& sinks, const TokenTables& tables,
                          const AttentionSplit& split) {
  HEARTH_CHECK(check_kv_layout("attention", layout));
  if (s.n_heads == 0 || s.n_heads % layout.n_kv_heads != 0 || s.n_tokens == 0 || layout.head_dim > 256 ||
      layout.head_dim > 8 * tuning_.attention) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("Vulkan attention: unsupported shape head_dim {} heads {}/{} tokens {}",
                                  layout.head_dim, s.n_heads, layout.n_kv_heads, s.n_tokens));
  }
  const uint64_t qn = uint64_t{s.n_tokens} * s.n_heads * layout.head_dim;
  const uint64_t block_bytes = kv_block_bytes(layout);
  HEARTH_CHECK(need_bytes("attention", "q", q, 4 * qn));
  HEARTH_CHECK(need_bytes("attention", "out", out, 4 * qn));
  HEARTH_CHECK(need_bytes("attention", "positions", positions, 4ull * s.n_tokens));
  HEARTH_CHECK(need_bytes("attention", "k cache", kv.k, block_bytes));
  HEARTH_CHECK(need_bytes("attention", "v cache", kv.v, block_bytes));
  HEARTH_CHECK(need_bytes("attention", "block table", kv.block_table, 4));
  HEARTH_CHECK(check_token_tables("attention", tables, kv.block_table, s.n_tokens));
  const bool has_sinks = sinks.buffer != nullptr;
  if (has_sinks) HEARTH_CHECK(need_bytes("attention", "sinks", sinks, 4ull * s.n_heads));
  const bool splits = split.n_splits > 1;
  if (splits) {
    if (split.split_len == 0 || split.n_splits > ctx_.limits().max_workgroup_count[2]) {
      return make_error(ErrorCode::InvalidArgument, fmt::format("Vulkan attention: {} splits of {} positions",
                                                                split.n_splits, split.split_len));
    }
    HEARTH_CHECK(need_bytes("attention", "partials", split.partials,
                            attention_partial_bytes(layout.head_dim, s.n_heads, s.n_tokens, split.n_splits)));
  }
  const sp::AttentionParams p{layout.head_dim,    s.n_heads, layout.n_kv_heads, s.n_tokens,
                              layout.block_tokens, o.window,  o.scale,           o.softcap,
                              has_sinks ? 1u : 0u, tables.table_blocks, splits ? split.n_splits : 1u};
  // Without sinks, or with one table, the positions are bound again as a
  // placeholder (never read).
  const Binding bind[] = {{q, Access::Read},
                          {kv.k, Access::Read},
                          {kv.v, Access::Read},
                          {kv.block_table, Access::Read},
                          {positions, Access::Read},
                          {splits ? split.partials : out, Access::Write},
                          {has_sinks ? sinks : positions, Access::Read},
                          {tables.table_blocks > 0 ? tables.token_seq : positions, Access::Read}};
  if (s.n_tokens > ctx_.limits().max_workgroup_count[1]) {
    return make_error(ErrorCode::LimitExceeded, fmt::format("Vulkan attention: {} tokens in one dispatch", s.n_tokens));
  }
  const ShaderId shader = layout.type == DType::Q8_0 ? ShaderId::attention_q8_0 : ShaderId::attention_f16;
  HEARTH_CHECK(run(seq, shader, tuning_.attention, bind, &p, push_size<sp::AttentionParams>(),
                   {s.n_heads, s.n_tokens, splits ? split.n_splits : 1u}, "attention"));
  if (!splits) return {};
  const sp::AttentionCombineParams c{layout.head_dim, s.n_heads, s.n_tokens, split.n_splits, has_sinks ? 1u : 0u};
  const Binding merge[] = {{split.partials, Access::Read}, {has_sinks ? sinks : split.partials, Access::Read},
                           {out, Access::Write}};
  return run(seq, ShaderId::attention_combine, tuning_.attention, merge, &c, push_size<sp::AttentionCombineParams>(),
             {s.n_heads, s.n_tokens, 1}, "attention_combine");
}

}  // namespace hearth::vulkan
