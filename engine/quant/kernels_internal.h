// Internal plumbing of the kernel table: each instruction-set level fills
// the entries it implements; select_kernels applies levels lowest first so a
// type without a kernel at a level keeps the one below.
#pragma once

#include <hearth/engine/quant/kernels.h>

namespace hearth::quant::detail {

void fill_scalar(KernelTable& table);
void fill_avx2(KernelTable& table);     // dot_avx2.cpp
void fill_avxvnni(KernelTable& table);  // dot_avxvnni.cpp
void fill_avx512(KernelTable& table);   // dot_avx512.cpp
void fill_neon(KernelTable& table);          // dot_neon.cpp (aarch64 only)
void fill_neon_dotprod(KernelTable& table);  // dot_neon_dotprod.cpp (aarch64 only)
void fill_neon_i8mm(KernelTable& table);     // dot_neon_i8mm.cpp (aarch64 only)
void fill_quantizers_avx2(KernelTable& table);      // quant_search_avx2.cpp
void fill_act_quantizers_avx2(KernelTable& table);  // act_quant_avx2.cpp
void fill_act_quantizers_avx512(KernelTable& table);  // act_quant_avx512.cpp
void fill_act_quantizers_neon(KernelTable& table);    // act_quant_neon.cpp (aarch64 only)

// The helpers below are `static` (one copy per translation unit): the
// instruction-set files compiled with -mavx2/-mavx512f include them, and a
// single shared copy could be the one compiled for an instruction set the
// CPU lacks.
static inline void set_kernel(KernelTable& t, DType type, DType act, VecDotFn dot, GemmFn gemm,
                       KernelLevel level) {
  auto& k = t.by_type[static_cast<size_t>(type)];  // keeps k.quantize
  k.act_type = act;
  k.vec_dot = dot;
  k.gemm = gemm;
  k.level = level;
  k.prefill = {};  // a level's two-step tiles go with its gemm
}

// Sets the decode kernels of a type; the act_type must already be the one
// `prepare` reads.
static inline void set_decode_multi(KernelTable& t, DType type, RowsMultiFn rows_multi) {
  t.by_type[static_cast<size_t>(type)].decode.rows_multi = rows_multi;
}
static inline void set_decode(KernelTable& t, DType type, RowsDotFn rows, PrepareFn prepare, PreparedBytesFn bytes) {
  auto& k = t.by_type[static_cast<size_t>(type)];
  k.decode.rows = rows;
  k.decode.rows_multi = nullptr;  // a multi-token kernel must match this `rows` bit for bit: set after it
  k.decode.prepare = prepare;
  k.decode.prepared_bytes = bytes;
}

// A running integer sum held in a register and in the order written. GCC
// rewrites a chain of vector integer adds (s += p0; s += p1; ...) into a
// tree, which keeps every product of a tile live at once: the 8-row AVX2
// tiles spilled most of them to the stack and the Q8_0 one ran 15-20%
// slower (engine/quant/README.md). An empty asm on the sum
// after each add keeps the chain; the value is the same (integer sums are
// exact in any order). Only the x86 kernels use it: the ARM kernels'
// loops showed no such spills.
template <typename V>
static inline V in_order(V v) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__("" : "+v"(v));
#endif
  return v;
}

// The plain tile: one vec_dot per output. Used where no blocked kernel exists.
template <VecDotFn Dot>
static void gemm_by_dot(int64_t n, const void* w, size_t w_stride, int64_t rows, const void* a,
                 size_t a_stride, int64_t cols, float* out, size_t out_stride) {
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* ab = static_cast<const uint8_t*>(a);
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t r = 0; r < rows; ++r) {
      out[static_cast<size_t>(c) * out_stride + static_cast<size_t>(r)] =
          Dot(n, wb + static_cast<size_t>(r) * w_stride, ab + static_cast<size_t>(c) * a_stride);
    }
  }
}

}  // namespace hearth::quant::detail
