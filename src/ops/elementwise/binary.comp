#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
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
#include "ew_vec.glsl"

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

// Element i of the general (strided) path; the VEC mode's tail reuses it.
// strides0: the dim-0 strides of out, a, b, c (used in the FLAT mode).
void ew_element(ElementwiseParams p, int64_t i, i64vec4 strides0, VAL scalar, VAL alpha, VAL beta,
                VAL gamma) {
  int64_t o, ia, ib, ic;
  if ((MODE & VKML_EW_FLAT) != 0u) {
    o = i * strides0.x;
    ia = i * strides0.y;
    ib = i * strides0.z;
    ic = i * strides0.w;
  } else {
    ew_offsets(p, i, o, ia, ib, ic);
  }
  VAL a = ((MODE & VKML_EW_SCALAR_A) != 0u) ? scalar : ew_load(p.a + uint64_t(ia * EW_BYTES));
  VAL b = ((MODE & VKML_EW_SCALAR_B) != 0u) ? scalar : ew_load(p.b + uint64_t(ib * EW_BYTES));
  VAL c = ((MODE & VKML_EW_HAS_C) != 0u) ? ew_load(p.c + uint64_t(ic * EW_BYTES)) : VAL(0);
  VAL r = ew_apply(a, b, c, alpha, beta, gamma);
  if (ew_out_bool()) {
    PU8(p.dst + uint64_t(o)).v = (r != VAL(0)) ? uint8_t(1) : uint8_t(0);
  } else {
    ew_store(p.dst + uint64_t(o * EW_BYTES), r);
  }
}

// VEC mode: dense operands, 16 bytes per load; EW_UNROLL vectors per operand are loaded (the
// pointers may alias, so the compiler could not hoist them over the stores itself), then computed
// and stored. Lanes past the end load nothing: reloading the last vector there costs bandwidth
// (docs/design/elementwise.md#vector-path). Elements after the last whole vector go through
// ew_element.
void ew_main_vec(ElementwiseParams p, VAL scalar, VAL alpha, VAL beta, VAL gamma) {
  const bool sa = (MODE & VKML_EW_SCALAR_A) != 0u, sb = (MODE & VKML_EW_SCALAR_B) != 0u;
  const bool has_c = (MODE & VKML_EW_HAS_C) != 0u;
  const int64_t nvec = p.numel / EW_VW, grid = VKML_GRID_STRIDE;
  const int64_t gid = int64_t(gl_GlobalInvocationID.x);
  for (int64_t v0 = gid; v0 < nvec; v0 += grid * EW_UNROLL) {
    EW_RAW ra[EW_UNROLL], rb[EW_UNROLL], rc[EW_UNROLL];
    [[unroll]] for (int u = 0; u < EW_UNROLL; ++u) {
      if (v0 + u * grid >= nvec) break;
      uint64_t off = uint64_t(v0 + u * grid) * 16ul;
      if (!sa) ra[u] = ew_vload(p.a + off);
      if (!sb) rb[u] = ew_vload(p.b + off);
      if (has_c) rc[u] = ew_vload(p.c + off);
    }
    [[unroll]] for (int u = 0; u < EW_UNROLL; ++u) {
      int64_t v = v0 + u * grid;
      if (v >= nvec) break;
      VAL r[EW_VW];
      [[unroll]] for (int k = 0; k < EW_VW; ++k) {
        VAL a = sa ? scalar : ew_vget(ra[u], k);
        VAL b = sb ? scalar : ew_vget(rb[u], k);
        VAL c = has_c ? ew_vget(rc[u], k) : VAL(0);
        r[k] = ew_apply(a, b, c, alpha, beta, gamma);
      }
      if (ew_out_bool()) {
        ew_vstore_bool(p.dst + uint64_t(v * EW_VW), r);
      } else {
        ew_vstore(p.dst + uint64_t(v) * 16ul, r);
      }
    }
  }
  int64_t tail = nvec * EW_VW + gid;
  if (tail < p.numel) ew_element(p, tail, i64vec4(1), scalar, alpha, beta, gamma);
}

void main() {
  ElementwiseParams p = pc.p;
  VAL alpha = ew_decode(p.alpha), beta = ew_decode(p.beta), gamma = ew_decode(p.gamma);
  VAL scalar = ew_decode(p.scalar);
  if ((MODE & VKML_EW_VEC) != 0u) {
    ew_main_vec(p, scalar, alpha, beta, gamma);
    return;
  }
  i64vec4 strides0 = i64vec4(p.dst_strides[0], p.a_strides[0], p.b_strides[0], p.c_strides[0]);
  for (int64_t i = int64_t(gl_GlobalInvocationID.x); i < p.numel; i += VKML_GRID_STRIDE) {
    ew_element(p, i, strides0, scalar, alpha, beta, gamma);
  }
}
