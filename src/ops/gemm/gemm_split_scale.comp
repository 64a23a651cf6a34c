#version 460
#extension GL_GOOGLE_include_directive : require
// fp32 GEMM on fp16 tensor cores (gemm_f32_split.cc), last pass: undoes the lines' power-of-two
// scales, C[i][j] *= 2^-(ea[i] + eb[j]) (exact), then applies the caller's epilogue as the GEMM
// kernels do: alpha * product + beta * C_in + bias, in place on a strided fp32 matrix (C_in and
// bias never alias C here).
#include "vkml_common.glsl"

layout(local_size_x_id = 0) in;

layout(push_constant) uniform Push {
  uint64_t c;
  uint64_t ea, eb;      // int32 exponents of A's rows and B's columns
  uint64_t c_in, bias;  // fp32, read where flags has bit 0 (C_in) or bit 1 (bias)
  int64_t m, n;
  int64_t row_stride, col_stride;  // of C, in elements
  int64_t c_in_row, c_in_col, bias_row, bias_col;
  float alpha, beta;
  uint flags;
} pc;

// x: columns, y: rows (both grid-stride loops), so no element pays a 64-bit division.
void main() {
  const int64_t col_step = int64_t(gl_NumWorkGroups.x) * int64_t(gl_WorkGroupSize.x);
  for (int64_t j = int64_t(gl_GlobalInvocationID.x); j < pc.n; j += col_step) {
    const int ej = PI32(pc.eb + uint64_t(j * 4)).v;
    for (int64_t i = int64_t(gl_WorkGroupID.y); i < pc.m; i += int64_t(gl_NumWorkGroups.y)) {
      const uint64_t at = pc.c + uint64_t((i * pc.row_stride + j * pc.col_stride) * 4);
      float v = pc.alpha * scale_by_pow2(PF32(at).v, -(PI32(pc.ea + uint64_t(i * 4)).v + ej));
      if ((pc.flags & 1u) != 0u) {
        v += pc.beta * PF32(pc.c_in + uint64_t((i * pc.c_in_row + j * pc.c_in_col) * 4)).v;
      }
      if ((pc.flags & 2u) != 0u) {
        v += PF32(pc.bias + uint64_t((i * pc.bias_row + j * pc.bias_col) * 4)).v;
      }
      PF32(at).v = v;
    }
  }
}
