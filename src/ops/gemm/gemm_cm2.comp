#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#if defined(IN_BF16)
#extension GL_EXT_bfloat16 : require
#endif
// fp16 / bf16 GEMM on VK_NV_cooperative_matrix2 (experimental, VKML_COOPMAT2=1): workgroup-scope
// matrices of a whole BM x BN block, loaded with tensor addressing straight from global memory,
// fp32 accumulation. Blocks wholly inside the operands take unclamped layouts (with 16-byte
// alignment promised by the host: ALIGNED) and a K loop unrolled by UNROLL; edge blocks clamp
// (reads past the edges give 0, stores past them are dropped). B may be stored K-contiguous
// (B_T: [N][K], read through a transposed view), the layout the driver's fast loads favour.
// Operands may have any strides below 2^32 elements; the plan sends only plain epilogues (alpha
// 1, no C_in, no bias) without split-K.
#include "vkml_common.glsl"
#include "gemm_params.h"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 256;
layout(constant_id = 3) const uint BK = 64;
layout(constant_id = 4) const bool B_T = false;      // B stored [N][K] (K contiguous)
layout(constant_id = 5) const bool ALIGNED = false;  // strides % 8 == 0, 16-byte aligned bases
layout(constant_id = 6) const uint UNROLL = 4;       // K steps per unrolled iteration
// Output blocks are visited in groups of GROUP_M block rows so that concurrent workgroups share A
// and B panels in L2; 0 walks row by row.
layout(constant_id = 7) const uint GROUP_M = 0;

#if defined(IN_BF16)
#define ELEM bfloat16_t
#else
#define ELEM float16_t
#endif
#if defined(OUT_F32)
#define OUT_ELEM float
#define OUT_BYTES 4
#elif defined(OUT_BF16)
#define OUT_ELEM bfloat16_t
#define OUT_BYTES 2
#else
#define OUT_ELEM float16_t
#define OUT_BYTES 2
#endif

layout(buffer_reference, std430, buffer_reference_align = 2) readonly buffer InArray { ELEM x[]; };
layout(buffer_reference, std430, buffer_reference_align = OUT_BYTES) writeonly buffer OutArray {
  OUT_ELEM x[];
};
layout(push_constant) uniform Push { GemmParams p; } pc;

#define Layout2 tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV>
#define Layout2Fast tensorLayoutNV<2>

// A row stride, its low bits cleared where the host promised 8-element multiples, so the driver
// may use 16-byte loads.
uint hinted(int64_t stride) { return ALIGNED ? uint(stride) & ~7u : uint(stride); }

// A 2-D tensor layout over an operand of rows x cols with the given element strides.
Layout2 layout_of(int64_t rows, int64_t cols, int64_t row, int64_t col) {
  Layout2 t = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  t = setTensorLayoutDimensionNV(t, uint(rows), uint(cols));
  return setTensorLayoutStrideNV(t, uint(row), uint(col));
}

// The same over a unit-stride inner dim, unclamped (blocks wholly inside).
Layout2Fast fast_layout_of(int64_t rows, int64_t cols, int64_t row) {
  Layout2Fast t = createTensorLayoutNV(2);
  t = setTensorLayoutDimensionNV(t, uint(rows), uint(cols));
  return setTensorLayoutStrideNV(t, hinted(row), 1);
}

void main() {
  GemmParams p = pc.p;
  const GemmOperand A = p.a, B = p.b, C = p.c;
  const int64_t M = p.m, N = p.n, K = p.k, nb1 = p.batch1;
  const int64_t nbatch = p.batch0 * nb1;
  const uint tiles_m = uint((M + BM - 1) / BM), tiles_n = uint((N + BN - 1) / BN);
  const Layout2 ta = layout_of(M, K, A.row, A.col);
  // B as stored: [K][N], or [N][K] when B_T.
  const Layout2 tb = B_T ? layout_of(N, K, B.col, B.row) : layout_of(K, N, B.row, B.col);
  const Layout2 tc = layout_of(M, N, C.row, C.col);
  const Layout2Fast fa = fast_layout_of(M, K, A.row);
  const Layout2Fast fb = B_T ? fast_layout_of(N, K, B.col) : fast_layout_of(K, N, B.row);
  tensorViewNV<2, false, 1, 0> transposed_view = createTensorViewNV(2, false, 1, 0);
  const bool k_whole = K % (BK * UNROLL) == 0;
  const uint tiles = tiles_m * tiles_n;
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint wg_count = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
  for (int64_t z = gl_WorkGroupID.z; z < nbatch; z += gl_NumWorkGroups.z) {
    const int64_t b0 = z / nb1, b1 = z % nb1;
    InArray a_buf = InArray(A.address + uint64_t((b0 * A.batch0 + b1 * A.batch1) * 2));
    InArray b_buf = InArray(B.address + uint64_t((b0 * B.batch0 + b1 * B.batch1) * 2));
    OutArray c_buf =
        OutArray(C.address + uint64_t((b0 * C.batch0 + b1 * C.batch1) * OUT_BYTES));
    for (uint t = wg; t < tiles; t += wg_count) {
      uint tm = t / tiles_n, tn = t % tiles_n;
      if (GROUP_M > 0) {
        const uint first_m = (t / (GROUP_M * tiles_n)) * GROUP_M;
        const uint group_rows = min(tiles_m - first_m, GROUP_M);
        const uint in_group = t % (GROUP_M * tiles_n);
        tm = first_m + in_group % group_rows;
        tn = in_group / group_rows;
      }
      const uint row0 = tm * BM, col0 = tn * BN;
      {
        coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> acc =
            coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(0.0);
        // One K step at k: A's BM x BK and B's BK x BN blocks through layouts la and lb (B as
        // stored: [K][N], or [N][K] read through the transposed view), multiplied into acc.
        #define K_STEP(la, lb, k)                                                             \
          {                                                                                   \
            coopmat<ELEM, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> ma;                       \
            coopmat<ELEM, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> mb;                       \
            coopMatLoadTensorNV(ma, a_buf.x, 0, sliceTensorLayoutNV(la, row0, BM, k, BK));    \
            if (B_T) {                                                                        \
              coopMatLoadTensorNV(mb, b_buf.x, 0, sliceTensorLayoutNV(lb, col0, BN, k, BK),   \
                                  transposed_view);                                           \
            } else {                                                                          \
              coopMatLoadTensorNV(mb, b_buf.x, 0, sliceTensorLayoutNV(lb, k, BK, col0, BN));  \
            }                                                                                 \
            acc = coopMatMulAdd(ma, mb, acc);                                                 \
          }
        if (k_whole && row0 + BM <= uint(M) && col0 + BN <= uint(N)) {  // uniform: wholly inside
          for (uint k0 = 0; k0 < uint(K); k0 += BK * UNROLL) {
            [[unroll]] for (uint u = 0; u < UNROLL; ++u) K_STEP(fa, fb, k0 + u * BK)
          }
        } else {
          for (uint k0 = 0; k0 < uint(K); k0 += BK) K_STEP(ta, tb, k0)
        }
        coopmat<OUT_ELEM, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> result =
            coopmat<OUT_ELEM, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(acc);
        coopMatStoreTensorNV(result, c_buf.x, 0, sliceTensorLayoutNV(tc, row0, BM, col0, BN));
      }
    }
  }
}
