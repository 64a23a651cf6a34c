// store_dst(address, v): writes v (of type VAL) as one element of the DST_* dtype with C++
// static_cast semantics. Needs VAL, and SRC_KIND_INT when VAL is an integer type.
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
#elif defined(DST_C64)
// complex64: VAL is vec2 (real, imaginary).
void store_dst(uint64_t a, VAL v) {
  PF32(a).v = v.x;
  PF32(a + 4ul).v = v.y;
}
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
