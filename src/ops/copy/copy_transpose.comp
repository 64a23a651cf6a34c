#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// dst = src where the unit-stride dimension differs between the two (NCHW to channels-last, a
// matrix transpose), batched: for each batch b, row r and column c,
//   dst[b * dst_batch + r + c * dst_col] = src[b * src_batch + r * src_row + c].
// A 32x32 tile goes through shared memory so that both the reads (along c) and the writes
// (along r) are coalesced; the generic strided copy would read or write one element per
// memory transaction. Variants by element size (ELEM_BITS 8, 16, 32, 64).
#include "vkml_common.glsl"
#include "copy_params.h"

layout(local_size_x = 32, local_size_y = 8) in;
layout(push_constant) uniform Push { TransposeParams p; } pc;

// P: the element's pointer type, ELEM its type, WORD the shared tile's (at least 32 bits).
#if ELEM_BITS == 8
#define P PU8
#define ELEM uint8_t
#define WORD uint
#elif ELEM_BITS == 16
#define P PU16
#define ELEM uint16_t
#define WORD uint
#elif ELEM_BITS == 32
#define P PU32
#define ELEM uint
#define WORD uint
#else
#define P PU64
#define ELEM uint64_t
#define WORD uint64_t
#endif
#define ELEM_BYTES (ELEM_BITS / 8)

shared WORD tile[32][33];  // one column of padding: the transposed reads hit distinct banks

void main() {
  const TransposeParams p = pc.p;
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  const int64_t c0 = int64_t(gl_WorkGroupID.x) * 32, r0 = int64_t(gl_WorkGroupID.y) * 32;
  for (int64_t b = gl_WorkGroupID.z; b < p.batch; b += gl_NumWorkGroups.z) {
    [[unroll]] for (uint j = 0; j < 32; j += 8) {
      const int64_t r = r0 + ty + j, c = c0 + tx;
      if (r < p.rows && c < p.cols) {
        const int64_t at = b * p.src_batch + r * p.src_row + c;
        tile[ty + j][tx] = WORD(P(p.src + uint64_t(at * ELEM_BYTES)).v);
      }
    }
    barrier();
    [[unroll]] for (uint j = 0; j < 32; j += 8) {
      const int64_t r = r0 + tx, c = c0 + ty + j;
      if (r < p.rows && c < p.cols) {
        const int64_t at = b * p.dst_batch + r + c * p.dst_col;
        P(p.dst + uint64_t(at * ELEM_BYTES)).v = ELEM(tile[tx][ty + j]);
      }
    }
    barrier();  // the tile is refilled for the next batch
  }
}
