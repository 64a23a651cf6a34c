// Four-element loads and stores of f32/f16/bf16 tensors (dtype codes of nn_common.glsl) for
// the norm fast paths; addresses must be aligned to four elements.
layout(buffer_reference, scalar, buffer_reference_align = 16) buffer NormVec4F32 { vec4 v; };
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer NormVec4F16 { f16vec4 v; };
layout(buffer_reference, scalar, buffer_reference_align = 8) buffer NormVec4U16 { u16vec4 v; };

vec4 ld4(uint64_t base, uint off, uint dt) {
  if (dt == NN_F16) return vec4(NormVec4F16(base + uint64_t(off) * 2ul).v);
  if (dt == NN_BF16) {
    u16vec4 h = NormVec4U16(base + uint64_t(off) * 2ul).v;
    return uintBitsToFloat(uvec4(h) << 16);
  }
  return NormVec4F32(base + uint64_t(off) * 4ul).v;
}

void st4(uint64_t base, uint off, uint dt, vec4 v) {
  if (dt == NN_F16) {
    NormVec4F16(base + uint64_t(off) * 2ul).v = f16vec4(v);
  } else if (dt == NN_BF16) {
    NormVec4U16(base + uint64_t(off) * 2ul).v = u16vec4(float_to_bf16(v.x), float_to_bf16(v.y),
                                                     float_to_bf16(v.z), float_to_bf16(v.w));
  } else {
    NormVec4F32(base + uint64_t(off) * 4ul).v = v;
  }
}
