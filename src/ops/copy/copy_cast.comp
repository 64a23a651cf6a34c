#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// dst = static_cast<DST>(src) over strided tensors. Variants: SRC_*/DST_* defines.
#include "vkml_common.glsl"
#include "copy_params.h"
#include "strided_index.glsl"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { StridedParams p; } pc;

// Loads src element into the widest value of its kind: float, double or int64.
#if defined(SRC_F32)
#define SRC_KIND_FLOAT
float load_src(uint64_t a) { return PF32(a).v; }
#define SRC_SIZE 4
#elif defined(SRC_F16)
#define SRC_KIND_FLOAT
float load_src(uint64_t a) { return float(PF16(a).v); }
#define SRC_SIZE 2
#elif defined(SRC_BF16)
#define SRC_KIND_FLOAT
float load_src(uint64_t a) { return bf16_to_float(PU16(a).v); }
#define SRC_SIZE 2
#elif defined(SRC_F64)
#define SRC_KIND_DOUBLE
double load_src(uint64_t a) { return PF64(a).v; }
#define SRC_SIZE 8
#elif defined(SRC_I8)
int64_t load_src(uint64_t a) { return int64_t(PI8(a).v); }
#define SRC_SIZE 1
#elif defined(SRC_U8)
int64_t load_src(uint64_t a) { return int64_t(PU8(a).v); }
#define SRC_SIZE 1
#elif defined(SRC_BOOL)
int64_t load_src(uint64_t a) { return PU8(a).v != uint8_t(0) ? 1l : 0l; }
#define SRC_SIZE 1
#elif defined(SRC_I16)
int64_t load_src(uint64_t a) { return int64_t(PI16(a).v); }
#define SRC_SIZE 2
#elif defined(SRC_I32)
int64_t load_src(uint64_t a) { return int64_t(PI32(a).v); }
#define SRC_SIZE 4
#elif defined(SRC_I64)
int64_t load_src(uint64_t a) { return PI64(a).v; }
#define SRC_SIZE 8
#endif

#if defined(SRC_KIND_FLOAT)
#define VAL float
#elif defined(SRC_KIND_DOUBLE)
#define VAL double
#else
#define VAL int64_t
#define SRC_KIND_INT
#endif

#include "store_cast.glsl"

void main() {
  StridedParams p = pc.p;
  for (int64_t i = int64_t(gl_GlobalInvocationID.x); i < p.numel; i += VKML_GRID_STRIDE) {
    int64_t d, s;
    strided_offsets(p, i, d, s);
    store_dst(p.dst + uint64_t(d * DST_SIZE), load_src(p.src + uint64_t(s * SRC_SIZE)));
  }
}
