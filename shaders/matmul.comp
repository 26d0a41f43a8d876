#version 450
// Y = X W^T for a batch of tokens (prefill). Each workgroup computes a
// 64-row x TILE_N-token tile of Y with TILE_N invocations (the workgroup
// size, 16, 32 or 64: short prompts do not pay for a 64-token tile),
// stepping through k in slices of 32 (one quant chunk):
//   1. the invocations dequantize the 64 weight rows' chunks (64 / TILE_N
//      each) and load one token's 32 activations each into shared memory,
//      stored k-major so the inner loop reads 4 rows or 4 tokens per vec4;
//   2. every invocation accumulates an 8-row x 8-token block in registers:
//      per k, 4 vec4 loads feed 64 multiply-adds.
// Loads dominate on CPU implementations (lavapipe gathers every lane's
// address) and on GPUs alike, so the block is as large as registers allow,
// and two barriers per 32-wide k slice are all the synchronisation there is.
//
// INT_DOT: the activations arrive as 8-bit blocks (quantize_q8.comp) and the
// weights are decoded to signed bytes (chunk_codes_int.glsl), so a chunk's
// 32 products for one (row, token) are eight packed dot products and one
// float expression, and shared memory holds a quarter of the float tile's
// bytes; the same tile, the same synchronisation.
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"
#include "hearth/shaders/weight_buffer.glsl"

#ifdef INT_DOT
layout(push_constant) uniform Push { MatmulParams p; };
layout(std430, binding = 1) readonly buffer Codes { uvec4 codes4[]; };
layout(std430, binding = 1) readonly buffer Scales { vec2 scales[]; };
layout(std430, binding = 2) writeonly buffer Y { float yout[]; };
#if defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
layout(std430, binding = 0) readonly buffer Weights128 { uvec4 w128[]; };
#endif
#include "hearth/shaders/chunk_codes_int.glsl"

const uint TILE_M = 64u;      // weight rows per workgroup
const uint TILE_N = WG_SIZE;  // tokens per workgroup: 16, 32 or 64
const uint TOKEN_STEP = TILE_N / 8u;
// Per chunk: every row's and token's eight code words and scales (6 KiB at
// most). An invocation's rows are tr + 8i and its tokens tc + TOKEN_STEP j,
// so the invocations of a subgroup read rows and tokens 8 words apart
// rather than 64 (fewer shared-memory bank conflicts).
shared uvec4 wq_sh[TILE_M][2];
shared vec4 ws_sh[TILE_M];  // tile_scales(): (d_lo, d_hi, m_lo, m_hi)
shared uvec4 xq_sh[TILE_N][2];
shared vec4 xs_sh[TILE_N];  // (d, code sum of values 0-15, of values 16-31, 0)

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint m0 = gl_WorkGroupID.x * TILE_M, n0 = gl_WorkGroupID.y * TILE_N;
  const uint tr = lid % 8u, tc = lid / 8u;
  float acc[8][8];
  for (uint i = 0u; i < 8u; ++i) {
    for (uint j = 0u; j < 8u; ++j) acc[i][j] = 0.0;
  }
  const uint nb = p.k / 32u;  // the host asks for whole chunks
  const uint token_vec4s = token_words(nb) / 4u;
  const uint ones = 0x01010101u;
  for (uint c = 0u; c < nb; ++c) {
    for (uint slot = lid; slot < TILE_M; slot += TILE_N) {
      const uint wrow = m0 + slot;
      uint w[8];
      vec4 sc = vec4(0.0);
      if (wrow < p.m_rows) {
        chunk_codes(wrow * p.row_stride + (c / CHUNKS_PER_BLOCK) * BLOCK_U16, c % CHUNKS_PER_BLOCK, w, sc);
        sc = tile_scales(sc);
      } else {
        for (uint i = 0u; i < 8u; ++i) w[i] = 0u;
      }
      wq_sh[slot][0] = uvec4(w[0], w[1], w[2], w[3]);
      wq_sh[slot][1] = uvec4(w[4], w[5], w[6], w[7]);
      ws_sh[slot] = sc;
    }
    const uint tok = n0 + lid;
    if (tok < p.n_tokens) {
      const uint ci = tok * token_vec4s + 2u * c;
      const uvec4 x0 = codes4[ci], x1 = codes4[ci + 1u];
      const float d = scales[(tok * token_words(nb) + 8u * padded_blocks(nb)) / 2u + c].x;
      const int lo = SDOT(ones, x0.x) + SDOT(ones, x0.y) + SDOT(ones, x0.z) + SDOT(ones, x0.w);
      const int hi = SDOT(ones, x1.x) + SDOT(ones, x1.y) + SDOT(ones, x1.z) + SDOT(ones, x1.w);
      xq_sh[lid][0] = x0;
      xq_sh[lid][1] = x1;
      xs_sh[lid] = vec4(d, float(lo), float(hi), 0.0);
    } else {
      xq_sh[lid][0] = uvec4(0u);
      xq_sh[lid][1] = uvec4(0u);
      xs_sh[lid] = vec4(0.0);
    }
    barrier();

    for (uint i = 0u; i < 8u; ++i) {
      const uint r = tr + 8u * i;
      const uvec4 w0 = wq_sh[r][0], w1 = wq_sh[r][1];
      const vec4 ws = ws_sh[r];
      for (uint j = 0u; j < 8u; ++j) {
        const uint t = tc + TOKEN_STEP * j;
        const uvec4 x0 = xq_sh[t][0], x1 = xq_sh[t][1];
        const vec4 xs = xs_sh[t];
        const int lo = SDOT(w0.x, x0.x) + SDOT(w0.y, x0.y) + SDOT(w0.z, x0.z) + SDOT(w0.w, x0.w);
        const int hi = SDOT(w1.x, x1.x) + SDOT(w1.y, x1.y) + SDOT(w1.z, x1.z) + SDOT(w1.w, x1.w);
        acc[i][j] += xs.x * (ws.x * float(lo) + ws.y * float(hi) + ws.z * xs.y + ws.w * xs.z);
      }
    }
    barrier();
  }
  for (uint i = 0u; i < 8u; ++i) {
    const uint m = m0 + tr + 8u * i;
    if (m >= p.m_rows) break;
    for (uint j = 0u; j < 8u; ++j) {
      const uint n = n0 + tc + TOKEN_STEP * j;
      if (n < p.n_tokens) yout[n * p.m_rows + m] = acc[i][j];
    }
  }
}
#else
layout(push_constant) uniform Push { MatmulParams p; };
layout(std430, binding = 1) readonly buffer X { float xin[]; };
layout(std430, binding = 1) readonly buffer X4 { vec4 xin4[]; };
layout(std430, binding = 2) writeonly buffer Y { float yout[]; };

const uint TILE_M = 64u;       // weight rows per workgroup
const uint TILE_N = WG_SIZE;   // tokens per workgroup: 16, 32 or 64
const uint TILE_K = 32u;       // k per step: one quant chunk
// [k][row / 4] and [k][token / 4]: at most 2 x 8 KiB, within the 16 KiB minimum.
shared vec4 w_sh[TILE_K][TILE_M / 4u];
shared vec4 x_sh[TILE_K][TILE_N / 4u];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint m0 = gl_WorkGroupID.x * TILE_M, n0 = gl_WorkGroupID.y * TILE_N;
  const uint tr = lid % 8u, tc = lid / 8u;  // this invocation's 8x8 block
  vec4 acc[8][2];
  for (uint i = 0u; i < 8u; ++i) {
    acc[i][0] = vec4(0.0);
    acc[i][1] = vec4(0.0);
  }
  const uint xrow = n0 + lid;
  const bool x_vec4 = (p.k % 4u) == 0u;
  for (uint k0 = 0u; k0 < p.k; k0 += TILE_K) {
    float v[32];
    for (uint slot = lid; slot < TILE_M; slot += TILE_N) {
      const uint wrow = m0 + slot;
      if (wrow < p.m_rows) {
#ifdef TYPE_PLAIN
        const uint base = wrow * p.row_stride + k0;
        for (uint c = 0u; c < 32u; ++c) v[c] = k0 + c < p.k ? load_elem(base + c) : 0.0;
#else
        const uint chunk = k0 / 32u;
        dequant_chunk(wrow * p.row_stride + (chunk / CHUNKS_PER_BLOCK) * BLOCK_U16, chunk % CHUNKS_PER_BLOCK, v);
#endif
      } else {
        for (uint c = 0u; c < 32u; ++c) v[c] = 0.0;
      }
      for (uint c = 0u; c < 32u; ++c) w_sh[c][slot / 4u][slot % 4u] = v[c];
    }

    if (xrow < p.n_tokens && x_vec4 && k0 + TILE_K <= p.k) {
      const uint xb = (xrow * p.k + k0) / 4u;
      for (uint c = 0u; c < 8u; ++c) {
        const vec4 xv = xin4[xb + c];
        v[4u * c] = xv.x;
        v[4u * c + 1u] = xv.y;
        v[4u * c + 2u] = xv.z;
        v[4u * c + 3u] = xv.w;
      }
    } else {
      for (uint c = 0u; c < 32u; ++c) v[c] = (xrow < p.n_tokens && k0 + c < p.k) ? xin[xrow * p.k + k0 + c] : 0.0;
    }
    for (uint c = 0u; c < 32u; ++c) x_sh[c][lid / 4u][lid % 4u] = v[c];
    barrier();

    for (uint kk = 0u; kk < TILE_K; ++kk) {
      const vec4 wa = w_sh[kk][2u * tr], wb = w_sh[kk][2u * tr + 1u];
      const vec4 xa = x_sh[kk][2u * tc], xb = x_sh[kk][2u * tc + 1u];
      const float w[8] = float[8](wa.x, wa.y, wa.z, wa.w, wb.x, wb.y, wb.z, wb.w);
      for (uint i = 0u; i < 8u; ++i) {
        acc[i][0] += w[i] * xa;
        acc[i][1] += w[i] * xb;
      }
    }
    barrier();
  }
  for (uint i = 0u; i < 8u; ++i) {
    const uint m = m0 + 8u * tr + i;
    if (m >= p.m_rows) break;
    for (uint j = 0u; j < 8u; ++j) {
      const uint n = n0 + 8u * tc + j;
      if (n < p.n_tokens) yout[n * p.m_rows + m] = acc[i][j / 4u][j % 4u];
    }
  }
}
#endif  // INT_DOT
