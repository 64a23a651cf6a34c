// 16-byte vectors of the compute dtype for the VKML_EW_VEC mode (dense, contiguous, 16-byte
// aligned operands). EW_RAW holds one loaded vector, EW_VW elements; ew_vget unpacks element k
// with the same conversion ew_load uses, ew_vstore packs EW_VW results the way ew_store rounds,
// so both paths give the same bits. EW_UNROLL vectors per operand are loaded before any store.
#define EW_UNROLL 4
layout(buffer_reference, scalar, buffer_reference_align = 16) buffer EwVecU4 { uvec4 v; };
layout(buffer_reference, scalar, buffer_reference_align = 4) buffer EwVecU1 { uint v; };
layout(buffer_reference, scalar, buffer_reference_align = 2) buffer EwVecU16 { uint16_t v; };

#if defined(DT_F16)
// f16 converts through 16-bit storage (as ew_load does): no float16 arithmetic needed.
layout(buffer_reference, scalar, buffer_reference_align = 16) buffer EwVecF16 {
  f16vec4 lo;
  f16vec4 hi;
};
#define EW_VW 8
#define EW_RAW mat2x4
EW_RAW ew_vload(uint64_t p) {
  EwVecF16 r = EwVecF16(p);
  return mat2x4(vec4(r.lo), vec4(r.hi));
}
VAL ew_vget(EW_RAW r, int k) { return r[k / 4][k % 4]; }
void ew_vstore(uint64_t p, VAL v[EW_VW]) {
  EwVecF16 r = EwVecF16(p);
  r.lo = f16vec4(vec4(v[0], v[1], v[2], v[3]));
  r.hi = f16vec4(vec4(v[4], v[5], v[6], v[7]));
}
#else
#define EW_RAW uvec4
EW_RAW ew_vload(uint64_t p) { return EwVecU4(p).v; }
#if defined(DT_F32)
#define EW_VW 4
VAL ew_vget(EW_RAW r, int k) { return uintBitsToFloat(r[k]); }
uint ew_vbits(VAL v[EW_VW], int k) { return floatBitsToUint(v[k]); }
#elif defined(DT_BF16)
#define EW_VW 8
VAL ew_vget(EW_RAW r, int k) { return bf16_to_float(uint16_t(r[k / 2] >> (16 * (k % 2)))); }
uint ew_vbits(VAL v[EW_VW], int k) {
  return uint(float_to_bf16(v[2 * k])) | (uint(float_to_bf16(v[2 * k + 1])) << 16);
}
#elif defined(DT_F64)
#define EW_VW 2
VAL ew_vget(EW_RAW r, int k) { return packDouble2x32(uvec2(r[2 * k], r[2 * k + 1])); }
uint ew_vbits(VAL v[EW_VW], int k) { return unpackDouble2x32(v[k / 2])[k % 2]; }
#elif defined(DT_I64)
#define EW_VW 2
VAL ew_vget(EW_RAW r, int k) { return int64_t(pack64(uvec2(r[2 * k], r[2 * k + 1]))); }
uint ew_vbits(VAL v[EW_VW], int k) { return unpack32(uint64_t(v[k / 2]))[k % 2]; }
#elif defined(DT_I32)
#define EW_VW 4
VAL ew_vget(EW_RAW r, int k) { return int(r[k]); }
uint ew_vbits(VAL v[EW_VW], int k) { return uint(v[k]); }
#elif defined(DT_I16)
#define EW_VW 8
VAL ew_vget(EW_RAW r, int k) { return bitfieldExtract(int(r[k / 2]), 16 * (k % 2), 16); }
uint ew_vbits(VAL v[EW_VW], int k) {
  return (uint(v[2 * k]) & 0xFFFFu) | (uint(v[2 * k + 1]) << 16);
}
#else  // one byte: i8, u8, bool
#define EW_VW 16
VAL ew_vget(EW_RAW r, int k) {
#if defined(DT_I8)
  return bitfieldExtract(int(r[k / 4]), 8 * (k % 4), 8);
#elif defined(DT_BOOL)
  return bitfieldExtract(r[k / 4], 8 * (k % 4), 8) != 0u ? 1 : 0;
#else
  return int(bitfieldExtract(r[k / 4], 8 * (k % 4), 8));
#endif
}
uint ew_vbyte(VAL v) {
#if defined(DT_BOOL)
  return v != 0 ? 1u : 0u;
#else
  return uint(v) & 0xFFu;
#endif
}
uint ew_vbits(VAL v[EW_VW], int k) {
  return ew_vbyte(v[4 * k]) | (ew_vbyte(v[4 * k + 1]) << 8) | (ew_vbyte(v[4 * k + 2]) << 16) |
         (ew_vbyte(v[4 * k + 3]) << 24);
}
#endif
void ew_vstore(uint64_t p, VAL v[EW_VW]) {
  EwVecU4(p).v = uvec4(ew_vbits(v, 0), ew_vbits(v, 1), ew_vbits(v, 2), ew_vbits(v, 3));
}
#endif

// Bool results (comparisons): EW_VW bytes of 0/1 at p, which is aligned to EW_VW bytes.
void ew_vstore_bool(uint64_t p, VAL r[EW_VW]) {
  uint w[4];
  [[unroll]] for (int j = 0; j < 4; ++j) w[j] = 0u;
  [[unroll]] for (int k = 0; k < EW_VW; ++k) {
    if (r[k] != VAL(0)) w[k / 4] |= 1u << (8 * (k % 4));
  }
#if EW_VW == 2
  EwVecU16(p).v = uint16_t(w[0]);
#elif EW_VW == 16
  EwVecU4(p).v = uvec4(w[0], w[1], w[2], w[3]);
#else
  [[unroll]] for (int j = 0; j < EW_VW / 4; ++j) EwVecU1(p + uint64_t(4 * j)).v = w[j];
#endif
}
