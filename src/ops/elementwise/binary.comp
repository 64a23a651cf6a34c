#version 460
#extension GL_GOOGLE_include_directive : require
// out = op(a, b[, c]) over strided tensors, a or b possibly a scalar, c a third tensor in the
// HAS_C mode (addcmul, lerp, ...); rows also see the parameters alpha, beta and gamma. Variants: DT_* (compute dtype)
// and, for floats, the group of table rows compiled in (EW_CASE_<group>, see ew_table.glsl).
// Specialization constants: 0 the workgroup size, 1 the op's id in elementwise_ops.def, 2 the
// VKML_EW_* mode bits; the driver folds the op's switch and the mode's branches away.
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

VAL ew_apply(VAL a, VAL b, VAL c, VAL alpha, VAL beta, VAL gamma) {
  switch (OP) {
#define VKML_BINARY_OP(Name, name, id, kind, group, fexpr, iexpr) \
  EW_CASE_##group(id, EW_PICK(fexpr, iexpr))
#include "elementwise_ops.def"
#undef VKML_BINARY_OP
  }
  return VAL(0);
}

bool ew_out_bool() {
  switch (OP) {
#define VKML_BINARY_OP(Name, name, id, kind, group, fexpr, iexpr) case id: return EW_OUT_##kind;
#include "elementwise_ops.def"
#undef VKML_BINARY_OP
  }
  return false;
}

void main() {
  ElementwiseParams p = pc.p;
  const bool out_bool = ew_out_bool();
  VAL alpha = ew_decode(p.alpha), beta = ew_decode(p.beta), gamma = ew_decode(p.gamma);
  VAL scalar = ew_decode(p.scalar);
  const bool has_c = (MODE & VKML_EW_HAS_C) != 0u;
  int64_t so = p.dst_strides[0], sa = p.a_strides[0], sb = p.b_strides[0], sc = p.c_strides[0];
  for (int64_t i = int64_t(gl_GlobalInvocationID.x); i < p.numel; i += VKML_GRID_STRIDE) {
    int64_t o, ia, ib, ic;
    if ((MODE & VKML_EW_FLAT) != 0u) {
      o = i * so;
      ia = i * sa;
      ib = i * sb;
      ic = i * sc;
    } else {
      ew_offsets(p, i, o, ia, ib, ic);
    }
    VAL a = ((MODE & VKML_EW_SCALAR_A) != 0u) ? scalar : ew_load(p.a + uint64_t(ia * EW_BYTES));
    VAL b = ((MODE & VKML_EW_SCALAR_B) != 0u) ? scalar : ew_load(p.b + uint64_t(ib * EW_BYTES));
    VAL c = has_c ? ew_load(p.c + uint64_t(ic * EW_BYTES)) : VAL(0);
    VAL r = ew_apply(a, b, c, alpha, beta, gamma);
    if (out_bool) {
      PU8(p.dst + uint64_t(o)).v = (r != VAL(0)) ? uint8_t(1) : uint8_t(0);
    } else {
      ew_store(p.dst + uint64_t(o * EW_BYTES), r);
    }
  }
}
