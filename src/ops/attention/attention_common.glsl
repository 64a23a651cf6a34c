// Shared by the attention shaders: dtype-generic element access (computing in float), the
// mask, the causal rule and the dropout draws. Include after vkml_common.glsl and the params.
#define AT_F32 0u
#define AT_F16 1u
#define AT_BF16 2u
#define AT_NEG_INF uintBitsToFloat(0xFF800000u)

float at_load(uint64_t base, int64_t i, uint dt) {
  if (dt == AT_F16) return float(PF16(base + uint64_t(i) * 2ul).v);
  if (dt == AT_BF16) return bf16_to_float(PU16(base + uint64_t(i) * 2ul).v);
  return PF32(base + uint64_t(i) * 4ul).v;
}

void at_store(uint64_t base, int64_t i, uint dt, float v) {
  if (dt == AT_F16) {
    PF16(base + uint64_t(i) * 2ul).v = float16_t(v);
  } else if (dt == AT_BF16) {
    PU16(base + uint64_t(i) * 2ul).v = float_to_bf16(v);
  } else {
    PF32(base + uint64_t(i) * 4ul).v = v;
  }
}

// Philox4x32-10, the generator of the random family: the draw of element i uses counter
// (i / 4, offset) and lane i % 4, so dropout here equals a Bernoulli draw of the random family
// over a contiguous (batch, heads, q_len, kv_len) tensor with the same seed and offset.
uvec4 at_philox(uvec4 ctr, uvec2 key) {
  for (int r = 0; r < 10; ++r) {
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, ctr.x, hi0, lo0);
    umulExtended(0xCD9E8D57u, ctr.z, hi1, lo1);
    ctr = uvec4(hi1 ^ ctr.y ^ key.x, lo1, hi0 ^ ctr.w ^ key.y, lo0);
    key += uvec2(0x9E3779B9u, 0xBB67AE85u);
  }
  return ctr;
}

bool at_keep(AttentionParams p, int64_t b, int64_t h, int64_t m, int64_t n) {
  uint64_t i = uint64_t(((b * p.heads + h) * p.q_len + m) * p.kv_len + n);
  uint64_t group = i >> 2;
  uvec4 r = at_philox(uvec4(uint(group), uint(group >> 32), uint(p.offset), uint(p.offset >> 32)),
                      uvec2(uint(p.seed), uint(p.seed >> 32)));
  uint bits = r[uint(i) & 3u];
  return float(bits >> 8) * (1.0 / 16777216.0) < p.keep_prob;
}

// The scaled, masked score of query m and key n; -inf where n is hidden from m or out of range.
float at_logit(AttentionParams p, int64_t b, int64_t h, int64_t m, int64_t n, float dot) {
  if (m >= p.q_len || n >= p.kv_len) return AT_NEG_INF;
  if (p.causal != 0u && n > m) return AT_NEG_INF;
  float x = dot * p.scale;
  if (p.mask_dtype == VKML_ATTN_MASK_NONE) return x;
  int64_t off = b * p.mask_strides[0] + h * p.mask_strides[1] + m * p.mask_strides[2] +
                n * p.mask_strides[3];
  if (p.mask_dtype == VKML_ATTN_MASK_BOOL) {
    return PU8(p.mask + uint64_t(off)).v != uint8_t(0) ? x : AT_NEG_INF;
  }
  return x + at_load(p.mask, off, p.mask_dtype);
}
