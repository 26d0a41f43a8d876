// Row dot products and matrix tiles over quantized weights, picked once at
// start-up for the CPU at hand.
//
// Usage (decode, one token):
//   const KernelTable kt = select_kernels(detect_cpu_features());
//   const TypeKernels& k = kt.get(weight_type);            // check kt.supports() first
//   act = row of row_bytes(k.act_type, n) bytes;
//   kt.quantize_activation(k.act_type, x, act, n);          // once per token
//   for each row r: y[r] = k.vec_dot(n, w + r * w_row_bytes, act);
// For prompt processing quantize every token's activation row, then call
// k.gemm on tiles of weight rows x activation rows (threads split the tiles).
//
// Performance notes for callers:
// - Decode (one activation row): where k.decode.rows is set, prepare the
//   activation once per token and call decode.rows on contiguous row ranges
//   (several rows per call); otherwise call vec_dot per weight row. Split
//   rows across threads in contiguous ranges; every weight byte is read once
//   per token.
// - Prompt processing: give gemm as many activation rows (tokens) as you
//   have, and split the weight rows across threads in multiples of 16. At
//   the AVX-512 level, tiles of >= 16 rows x >= 4 tokens repack 16 weight
//   rows at a time into an interleaved layout (scratch per call) and are
//   several times faster per multiply-add than vec_dot; the repacking is
//   amortised over the tokens, so larger token counts are better. Where
//   TypeKernels::prefill is set, prepare the activations once per product
//   and call prefill.gemm per tile (it also reuses the caller's scratch).
// - Every function is reentrant and keeps no state; a KernelTable can be
//   shared by all threads.
//
// A KernelTable is a plain value with no global state; tests build one per
// level to check every SIMD kernel against the scalar one.
#pragma once

#include <hearth/engine/quant/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace hearth::quant {

// Instruction-set levels, lowest first. Each level includes the ones below it
// of its own architecture: the ARM levels come before the x86 ones, so a cap
// at an x86 level (the default, Avx512) never removes an ARM level, and a CPU
// only ever supports the levels of one architecture.
enum class KernelLevel : uint8_t {
  Scalar,       // portable C++, the test oracle
  Neon,         // aarch64 Advanced SIMD (every aarch64 CPU)
  NeonDotprod,  // Neon plus the int8 dot product (SDOT, FEAT_DotProd)
  NeonI8mm,     // NeonDotprod plus the int8 matrix multiply (SMMLA, FEAT_I8MM)
  Avx2,         // AVX2 + FMA + F16C
  AvxVnni,  // Avx2 plus 256-bit VNNI (vpdpbusd, VEX encoding)
  Avx512,   // AVX-512 F/BW/VL/DQ + VNNI: 512-bit kernels where they help
};

std::string_view to_string(KernelLevel level);
// Whether a level is one of the aarch64 ones (the NEON kernels of the ops).
constexpr bool is_neon_level(KernelLevel level) {
  return level == KernelLevel::Neon || level == KernelLevel::NeonDotprod || level == KernelLevel::NeonI8mm;
}

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx_vnni = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512_vnni = false;
  bool avx512_bf16 = false;
  // aarch64 (from the kernel's auxiliary vector, getauxval).
  bool neon = false;     // Advanced SIMD (HWCAP_ASIMD)
  bool dotprod = false;  // SDOT/UDOT (HWCAP_ASIMDDP)
  bool i8mm = false;     // int8 matrix multiply (HWCAP2_I8MM)
};

// Asks the CPU (x86: through cpuinfo; aarch64: getauxval). All false when
// detection fails.
CpuFeatures detect_cpu_features();
// The highest level the features allow.
KernelLevel best_level(const CpuFeatures& features);
// Every level the features allow, lowest first (always includes Scalar).
std::vector<KernelLevel> supported_levels(const CpuFeatures& features);

// Dot product of one weight row (n values of the weight type) with one
// activation row (n values of TypeKernels::act_type). n is a multiple of the
// weight type's block size.
using VecDotFn = float (*)(int64_t n, const void* w, const void* a);

// A tile of a matrix product: for r < rows and c < cols,
//   out[c * out_stride + r] = dot(w + r * w_stride, a + c * a_stride)
// (strides in bytes for w and a, in floats for out). Output is token-major
// (c = token, r = output feature) as a layer's activations are laid out.
// Faster than rows * cols vec_dot calls because weight blocks are unpacked
// once per group of activation rows.
using GemmFn = void (*)(int64_t n, const void* w, size_t w_stride, int64_t rows, const void* a,
                        size_t a_stride, int64_t cols, float* out, size_t out_stride);

// Converts n floats to an activation row (Q8_0, Q8_K or F32 copy).
using QuantizeFn = void (*)(const float* x, void* dst, int64_t n);

// Decode (one token) over several weight rows at once:
//   out[r] = dot(w + r * w_stride, act)   for r < rows
// where `act` is the activation row (act_type) rearranged by
// DecodeKernels::prepare. Interleaving rows shares the activation loads and
// keeps several independent accumulations in flight.
using RowsDotFn = void (*)(int64_t n, const void* w, size_t w_stride, int64_t rows, const void* act,
                           float* out);
// Rearranges an activation row of n values in act_type (as quantize_activation
// wrote it) into the layout a RowsDotFn reads: prepared_bytes(n) bytes.
using PrepareFn = void (*)(const void* act, void* dst, int64_t n);
using PreparedBytesFn = size_t (*)(int64_t n);

// As RowsDotFn for n_act activation rows (prepared as for `rows`, each
// act_stride bytes after the previous one): token t's sums go to
// out + t * out_stride. Each sum is bit-identical to what `rows` gives for
// that token alone; the weights are read once for all of them.
using RowsMultiFn = void (*)(int64_t n, const void* w, size_t w_stride, int64_t rows, const void* act,
                             size_t act_stride, int64_t n_act, float* out, size_t out_stride);

struct DecodeKernels {
  RowsDotFn rows = nullptr;  // nullptr: call TypeKernels::vec_dot per row
  RowsMultiFn rows_multi = nullptr;  // nullptr: `rows` once per token
  // nullptr (with prepared_bytes): rows reads the act_type row as it is.
  PrepareFn prepare = nullptr;
  PreparedBytesFn prepared_bytes = nullptr;
};

// Prompt processing in two steps, for callers that split one matrix product
// into many tiles: the activation rows (tokens) are converted once per
// product into the tile kernel's own layout, instead of once per tile.
// Token ranges handed to either step start at a multiple of kPrefillColGroup.
inline constexpr int64_t kPrefillColGroup = 8;
struct PrefillKernels {
  // Bytes of the prepared form of `cols` activation rows of n values.
  size_t (*prepared_bytes)(int64_t n, int64_t cols) = nullptr;
  // Converts activation rows [col0, col0 + cols) (row c at a + c * a_stride,
  // in TypeKernels::act_type) into their place in `prepared`, which holds
  // prepared_bytes(n, total cols). Disjoint ranges may run concurrently.
  void (*prepare)(int64_t n, const void* a, size_t a_stride, int64_t col0, int64_t cols, void* prepared) = nullptr;
  // Bytes of the scratch one gemm call repacks weight rows into (rows of n values).
  size_t (*tile_bytes)(int64_t n) = nullptr;
  // As GemmFn for tokens [col0, col0 + cols) of `prepared`: out points at
  // token col0's first row. `scratch` is the caller's (one per thread, at
  // least tile_bytes(n)), reused between calls.
  void (*gemm)(int64_t n, const void* w, size_t w_stride, int64_t rows, const void* prepared, int64_t col0,
               int64_t cols, float* out, size_t out_stride, void* scratch) = nullptr;
};

// Kernels for weights in the 16-row interleaved layout (interleave.h).
// decode: as DecodeKernels, for the few tokens of a continuous-batching step
// or a speculative verify pass, every token of a call in one pass over the
// weights, each token's sums bit-identical to a call with that token alone
// (so a sequence gets the same logits alone, batched or verified). `w` is
// the first row of a group, `rows` a multiple of kInterleaveRows, `w_stride`
// the plain row bytes. prefill: as PrefillKernels (row ranges start on a
// group), bit-identical to the plain layout's prefill.
struct InterleavedKernels {
  DecodeKernels decode;    // decode.rows nullptr: the level has no kernels for the layout
  PrefillKernels prefill;
};

struct TypeKernels {
  DType act_type = DType::F32;  // format the activation row must be in
  VecDotFn vec_dot = nullptr;   // nullptr: type not supported
  GemmFn gemm = nullptr;
  // Float row -> this weight format: the same bytes as quantize_row() in
  // reference.h, faster where a SIMD search exists (Q2_K, Q4_K, Q5_K).
  QuantizeFn quantize = nullptr;
  KernelLevel level = KernelLevel::Scalar;  // level of the vec_dot actually used
  // Faster decode where the level has it; reads the same act_type row (after
  // prepare), gives the same sums as vec_dot up to float rounding.
  DecodeKernels decode;
  PrefillKernels prefill;  // all null where the level has no two-step tiles
  InterleavedKernels interleaved;
};

// n half-precision values to floats (exact).
using HalfToFloatFn = void (*)(const uint16_t* src, float* dst, int64_t n);
// n floats to half precision, the same bits as fp32_to_fp16 (nearest even;
// a NaN becomes its one quiet NaN).
using FloatToHalfFn = void (*)(const float* src, uint16_t* dst, int64_t n);

struct KernelTable {
  KernelLevel level = KernelLevel::Scalar;
  std::array<TypeKernels, 40> by_type{};  // indexed by the DType id (MXFP4 is 39)
  QuantizeFn quantize_q8_0 = nullptr;
  QuantizeFn quantize_q8_k = nullptr;
  // F16 rows (the KV cache) to floats: F16C where present.
  HalfToFloatFn f16_to_f32 = nullptr;
  // Floats to F16 rows (what the KV cache stores): F16C where present.
  FloatToHalfFn f32_to_f16 = nullptr;

  bool supports(DType weight) const {
    const auto id = static_cast<size_t>(weight);
    return id < by_type.size() && by_type[id].vec_dot != nullptr;
  }
  const TypeKernels& get(DType weight) const { return by_type[static_cast<size_t>(weight)]; }
  // Converts x to `act` (Q8_0, Q8_K or F32), the format a TypeKernels asks for.
  void quantize_activation(DType act, const float* x, void* dst, int64_t n) const;
};

// The fastest kernels the features allow, capped at `max_level` (use a lower
// cap to test or compare levels). Types without a SIMD kernel at the chosen
// level fall back to the next lower level that has one.
KernelTable select_kernels(const CpuFeatures& features, KernelLevel max_level = KernelLevel::Avx512);

}  // namespace hearth::quant
