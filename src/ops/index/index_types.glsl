// The element type of index.comp and of the embedding family's embedding_bwd.comp: DST_* names
// the dtype of data and values; VAL is the type they compute in (float for 16-bit floats, like
// PyTorch's opmath; vec2 for complex64), load_val / bits_val widen an element, store_dst
// narrows it back and round_val gives the value an element holds after store_dst.
#if defined(DST_F32)
#define VAL float
#define KIND_FLOAT
#define ELEM_BYTES 4
VAL load_val(uint64_t a) { return PF32(a).v; }
VAL bits_val(uint64_t b) { return uintBitsToFloat(uint(b)); }
#elif defined(DST_F16)
#define VAL float
#define KIND_FLOAT
#define ELEM_BYTES 2
VAL load_val(uint64_t a) { return float(PF16(a).v); }
VAL bits_val(uint64_t b) { return unpackHalf2x16(uint(b)).x; }
#elif defined(DST_BF16)
#define VAL float
#define KIND_FLOAT
#define ELEM_BYTES 2
VAL load_val(uint64_t a) { return bf16_to_float(PU16(a).v); }
VAL bits_val(uint64_t b) { return bf16_to_float(uint16_t(b)); }
#elif defined(DST_C64)
// complex64: (real, imaginary) float pairs, combined as complex numbers in float.
#define VAL vec2
#define KIND_COMPLEX
#define ELEM_BYTES 8
VAL load_val(uint64_t a) { return vec2(PF32(a).v, PF32(a + 4ul).v); }
VAL bits_val(uint64_t b) { return vec2(uintBitsToFloat(uint(b)), uintBitsToFloat(uint(b >> 32))); }
#elif defined(DST_F64)
#define VAL double
#define KIND_FLOAT
#define ELEM_BYTES 8
VAL load_val(uint64_t a) { return PF64(a).v; }
VAL bits_val(uint64_t b) { return uint64BitsToDouble(b); }
#else
#define VAL int64_t
#define SRC_KIND_INT
#if defined(DST_I8)
#define ELEM_BYTES 1
VAL load_val(uint64_t a) { return int64_t(PI8(a).v); }
VAL bits_val(uint64_t b) { return int64_t(int8_t(uint8_t(b))); }
#elif defined(DST_U8)
#define ELEM_BYTES 1
VAL load_val(uint64_t a) { return int64_t(PU8(a).v); }
VAL bits_val(uint64_t b) { return int64_t(uint8_t(b)); }
#elif defined(DST_BOOL)
#define ELEM_BYTES 1
VAL load_val(uint64_t a) { return PU8(a).v != uint8_t(0) ? 1l : 0l; }
VAL bits_val(uint64_t b) { return (b & 0xFFul) != 0ul ? 1l : 0l; }
#elif defined(DST_I16)
#define ELEM_BYTES 2
VAL load_val(uint64_t a) { return int64_t(PI16(a).v); }
VAL bits_val(uint64_t b) { return int64_t(int16_t(uint16_t(b))); }
#elif defined(DST_I32)
#define ELEM_BYTES 4
VAL load_val(uint64_t a) { return int64_t(PI32(a).v); }
VAL bits_val(uint64_t b) { return int64_t(int32_t(uint(b))); }
#else
#define ELEM_BYTES 8
VAL load_val(uint64_t a) { return PI64(a).v; }
VAL bits_val(uint64_t b) { return int64_t(b); }
#endif
#endif
#include "store_cast.glsl"

// The value an element holds after store_dst(v), for sums kept in registers.
#if defined(DST_F16)
VAL round_val(VAL v) { return round_to_f16(v); }
#elif defined(DST_BF16)
VAL round_val(VAL v) { return bf16_to_float(float_to_bf16(v)); }
#elif defined(DST_I8)
VAL round_val(VAL v) { return int64_t(int8_t(v)); }
#elif defined(DST_U8)
VAL round_val(VAL v) { return int64_t(uint8_t(v)); }
#elif defined(DST_I16)
VAL round_val(VAL v) { return int64_t(int16_t(v)); }
#elif defined(DST_I32)
VAL round_val(VAL v) { return int64_t(int32_t(v)); }
#elif defined(DST_BOOL)
VAL round_val(VAL v) { return v != 0 ? 1l : 0l; }
#else
VAL round_val(VAL v) { return v; }
#endif
