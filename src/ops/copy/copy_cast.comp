#version 460
#extension GL_GOOGLE_include_directive : require
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

// Float to narrow ints goes through int32 (int8/int16) or int64 (uint8), as c10's casts do.
#if defined(DST_F32)
void store_dst(uint64_t a, VAL v) { PF32(a).v = float(v); }
#define DST_SIZE 4
#elif defined(DST_F16)
void store_dst(uint64_t a, VAL v) { PF16(a).v = float16_t(float(v)); }
#define DST_SIZE 2
#elif defined(DST_BF16)
void store_dst(uint64_t a, VAL v) { PU16(a).v = float_to_bf16(float(v)); }
#define DST_SIZE 2
#elif defined(DST_F64)
void store_dst(uint64_t a, VAL v) { PF64(a).v = double(v); }
#define DST_SIZE 8
#elif defined(DST_BOOL)
void store_dst(uint64_t a, VAL v) { PU8(a).v = v != VAL(0) ? uint8_t(1) : uint8_t(0); }
#define DST_SIZE 1
#elif defined(DST_I64)
void store_dst(uint64_t a, VAL v) { PI64(a).v = int64_t(v); }
#define DST_SIZE 8
#elif defined(DST_I32)
void store_dst(uint64_t a, VAL v) { PI32(a).v = int32_t(v); }
#define DST_SIZE 4
#elif defined(SRC_KIND_INT) && defined(DST_I16)
void store_dst(uint64_t a, VAL v) { PI16(a).v = int16_t(v); }
#define DST_SIZE 2
#elif defined(DST_I16)
void store_dst(uint64_t a, VAL v) { PI16(a).v = int16_t(int32_t(v)); }
#define DST_SIZE 2
#elif defined(SRC_KIND_INT) && defined(DST_I8)
void store_dst(uint64_t a, VAL v) { PI8(a).v = int8_t(v); }
#define DST_SIZE 1
#elif defined(DST_I8)
void store_dst(uint64_t a, VAL v) { PI8(a).v = int8_t(int32_t(v)); }
#define DST_SIZE 1
#elif defined(SRC_KIND_INT) && defined(DST_U8)
void store_dst(uint64_t a, VAL v) { PU8(a).v = uint8_t(v); }
#define DST_SIZE 1
#elif defined(DST_U8)
void store_dst(uint64_t a, VAL v) { PU8(a).v = uint8_t(int64_t(v)); }
#define DST_SIZE 1
#endif

void main() {
  StridedParams p = pc.p;
  for (int64_t i = int64_t(gl_GlobalInvocationID.x); i < p.numel; i += VKML_GRID_STRIDE) {
    int64_t d, s;
    strided_offsets(p, i, d, s);
    store_dst(p.dst + uint64_t(d * DST_SIZE), load_src(p.src + uint64_t(s * SRC_SIZE)));
  }
}
