// The compute dtype of an elementwise variant (one DT_* define): VAL, the type arithmetic runs in,
// and how elements load, store and decode from parameter bits. Narrow types compute in a wider
// one (f16/bf16 in float, i8..i32 and bool in int) and wrap or round on store, like c10's casts.
#if defined(DT_F32)
#define VAL float
#define EW_FLOAT
#define EW_BYTES 4
VAL ew_load(uint64_t p) { return PF32(p).v; }
void ew_store(uint64_t p, VAL v) { PF32(p).v = v; }
#elif defined(DT_F16)
#define VAL float
#define EW_FLOAT
#define EW_BYTES 2
VAL ew_load(uint64_t p) { return float(PF16(p).v); }
void ew_store(uint64_t p, VAL v) { PF16(p).v = float16_t(v); }
#elif defined(DT_BF16)
#define VAL float
#define EW_FLOAT
#define EW_BYTES 2
VAL ew_load(uint64_t p) { return bf16_to_float(PU16(p).v); }
void ew_store(uint64_t p, VAL v) { PU16(p).v = float_to_bf16(v); }
#elif defined(DT_F64)
#define VAL double
#define EW_FLOAT
#define EW_DOUBLE
#define EW_BYTES 8
VAL ew_load(uint64_t p) { return PF64(p).v; }
void ew_store(uint64_t p, VAL v) { PF64(p).v = v; }
#elif defined(DT_I8)
#define VAL int
#define EW_BYTES 1
#define EW_SIGNED 1
VAL ew_load(uint64_t p) { return int(PI8(p).v); }
void ew_store(uint64_t p, VAL v) { PI8(p).v = int8_t(v); }
#elif defined(DT_U8)
#define VAL int
#define EW_BYTES 1
#define EW_SIGNED 0
VAL ew_load(uint64_t p) { return int(PU8(p).v); }
void ew_store(uint64_t p, VAL v) { PU8(p).v = uint8_t(v); }
#elif defined(DT_BOOL)
#define VAL int
#define EW_BYTES 1
#define EW_SIGNED 0
#define EW_BOOL
VAL ew_load(uint64_t p) { return PU8(p).v != uint8_t(0) ? 1 : 0; }
void ew_store(uint64_t p, VAL v) { PU8(p).v = v != 0 ? uint8_t(1) : uint8_t(0); }
#elif defined(DT_I16)
#define VAL int
#define EW_BYTES 2
#define EW_SIGNED 1
VAL ew_load(uint64_t p) { return int(PI16(p).v); }
void ew_store(uint64_t p, VAL v) { PI16(p).v = int16_t(v); }
#elif defined(DT_I32)
#define VAL int
#define EW_BYTES 4
#define EW_SIGNED 1
VAL ew_load(uint64_t p) { return PI32(p).v; }
void ew_store(uint64_t p, VAL v) { PI32(p).v = v; }
#elif defined(DT_I64)
#define VAL int64_t
#define EW_BYTES 8
#define EW_SIGNED 1
VAL ew_load(uint64_t p) { return PI64(p).v; }
void ew_store(uint64_t p, VAL v) { PI64(p).v = v; }
#else
#error "elementwise shaders need one DT_* define"
#endif

// Scalars and alpha arrive as bits: f32 for float-computed dtypes, f64, or int64 (see the host).
#if defined(EW_DOUBLE)
VAL ew_decode(uint64_t bits) { return packDouble2x32(uvec2(uint(bits), uint(bits >> 32))); }
#elif defined(EW_FLOAT)
VAL ew_decode(uint64_t bits) { return uintBitsToFloat(uint(bits)); }
#else
VAL ew_decode(uint64_t bits) { return VAL(int64_t(bits)); }
#endif
