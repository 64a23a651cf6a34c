#version 460
#extension GL_GOOGLE_include_directive : require
// out = op(in) over strided tensors; rows also see the parameters alpha, beta and gamma. Variants: DT_* (compute dtype) and, for floats, the group of
// table rows compiled in (EW_CASE_<group>, see ew_table.glsl). Specialization constants: 0 the
// workgroup size, 1 the op's id in elementwise_ops.def, 2 the VKML_EW_* mode bits.
#include "vkml_common.glsl"
#include "elementwise_params.h"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int OP = 0;
layout(constant_id = 2) const uint MODE = 0u;
layout(push_constant) uniform Push { ElementwiseParams p; } pc;

#include "ew_dtype.glsl"
#include "ew_index.glsl"
#ifdef EW_FLOAT
#include "ew_math.glsl"
#else
#include "ew_int.glsl"
#endif
#include "ew_table.glsl"

VAL ew_apply(VAL x, VAL alpha, VAL beta, VAL gamma) {
  switch (OP) {
#define VKML_UNARY_OP(Name, name, id, kind, group, fexpr, iexpr) \
  EW_CASE_##group(id, EW_PICK(fexpr, iexpr))
#include "elementwise_ops.def"
#undef VKML_UNARY_OP
  }
  return VAL(0);
}

bool ew_out_bool() {
  switch (OP) {
#define VKML_UNARY_OP(Name, name, id, kind, group, fexpr, iexpr) case id: return EW_OUT_##kind;
#include "elementwise_ops.def"
#undef VKML_UNARY_OP
  }
  return false;
}

void main() {
  ElementwiseParams p = pc.p;
  const bool out_bool = ew_out_bool();
  VAL alpha = ew_decode(p.alpha), beta = ew_decode(p.beta), gamma = ew_decode(p.gamma);
  int64_t so = p.dst_strides[0], sa = p.a_strides[0];
  for (int64_t i = int64_t(gl_GlobalInvocationID.x); i < p.numel; i += VKML_GRID_STRIDE) {
    int64_t o, ia, unused_b, unused_c;
    if ((MODE & VKML_EW_FLAT) != 0u) {
      o = i * so;
      ia = i * sa;
    } else {
      ew_offsets(p, i, o, ia, unused_b, unused_c);
    }
    VAL r = ew_apply(ew_load(p.a + uint64_t(ia * EW_BYTES)), alpha, beta, gamma);
    if (out_bool) {
      PU8(p.dst + uint64_t(o)).v = (r != VAL(0)) ? uint8_t(1) : uint8_t(0);
    } else {
      ew_store(p.dst + uint64_t(o * EW_BYTES), r);
    }
  }
}
