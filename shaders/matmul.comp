#version 450
// Y = X W^T for a batch of tokens (prefill). Each workgroup computes a 32x32
// tile of Y; weight tiles are dequantized once into shared memory and reused
// by all 32 tokens of the tile. Workgroup size must be 256 (16x16, 2x2 each).
#include "hearth/shaders/common.glsl"
#include "hearth/shaders/params.h"
#include "hearth/shaders/weight_buffer.glsl"

layout(push_constant) uniform Push { MatmulParams p; };
layout(std430, binding = 1) readonly buffer X { float xin[]; };
layout(std430, binding = 2) writeonly buffer Y { float yout[]; };

const uint TILE = 32u;
shared float w_tile[TILE][TILE + 1u];  // [row of W][k], padded against bank conflicts
shared float x_tile[TILE][TILE + 1u];  // [token][k]

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint m0 = gl_WorkGroupID.x * TILE, n0 = gl_WorkGroupID.y * TILE;
  const uint tx = lid % 16u, ty = lid / 16u;
  float acc[2][2] = float[2][2](float[2](0.0, 0.0), float[2](0.0, 0.0));
  for (uint k0 = 0u; k0 < p.k; k0 += TILE) {
#ifdef TYPE_PLAIN
    for (uint e = lid; e < TILE * TILE; e += 256u) {
      const uint r = e / TILE, c = e % TILE;
      w_tile[r][c] = (m0 + r < p.m_rows && k0 + c < p.k) ? load_elem((m0 + r) * p.row_stride + k0 + c) : 0.0;
    }
#else
    if (lid < TILE) {
      float v[32];
      if (m0 + lid < p.m_rows) {
        const uint chunk = k0 / 32u;
        dequant_chunk((m0 + lid) * p.row_stride + (chunk / CHUNKS_PER_BLOCK) * BLOCK_U16,
                      chunk % CHUNKS_PER_BLOCK, v);
      } else {
        for (uint c = 0u; c < 32u; ++c) v[c] = 0.0;
      }
      for (uint c = 0u; c < 32u; ++c) w_tile[lid][c] = v[c];
    }
#endif
    for (uint e = lid; e < TILE * TILE; e += 256u) {
      const uint r = e / TILE, c = e % TILE;
      x_tile[r][c] = (n0 + r < p.n_tokens && k0 + c < p.k) ? xin[(n0 + r) * p.k + k0 + c] : 0.0;
    }
    barrier();
    for (uint kk = 0u; kk < TILE; ++kk) {
      const float a0 = w_tile[2u * ty][kk], a1 = w_tile[2u * ty + 1u][kk];
      const float b0 = x_tile[2u * tx][kk], b1 = x_tile[2u * tx + 1u][kk];
      acc[0][0] += a0 * b0;
      acc[0][1] += a0 * b1;
      acc[1][0] += a1 * b0;
      acc[1][1] += a1 * b1;
    }
    barrier();
  }
  for (uint i = 0u; i < 2u; ++i) {
    for (uint j = 0u; j < 2u; ++j) {
      const uint m = m0 + 2u * ty + i, n = n0 + 2u * tx + j;
      if (m < p.m_rows && n < p.n_tokens) yout[n * p.m_rows + m] = acc[i][j];
    }
  }
}
