#version 460
#extension GL_GOOGLE_include_directive : require
// fp32 GEMM on fp16 tensor cores (gemm_f32_split.cc), last pass: undoes the lines' power-of-two
// scales, C[i][j] *= 2^-(ea[i] + eb[j]), in place on a strided fp32 matrix (exact).
#include "vkml_common.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Push {
  uint64_t c;
  uint64_t ea, eb;  // int32 exponents of A's rows and B's columns
  int64_t m, n;
  int64_t row_stride, col_stride;  // of C, in elements
} pc;

void main() {
  const int64_t total = pc.m * pc.n;
  for (int64_t t = int64_t(gl_GlobalInvocationID.x); t < total; t += VKML_GRID_STRIDE) {
    const int64_t i = t / pc.n, j = t % pc.n;
    const uint64_t at = pc.c + uint64_t((i * pc.row_stride + j * pc.col_stride) * 4);
    const int e = PI32(pc.ea + uint64_t(i * 4)).v + PI32(pc.eb + uint64_t(j * 4)).v;
    PF32(at).v = scale_by_pow2(PF32(at).v, -e);
  }
}
