// Element offsets of linear index i in up to four strided tensors (out, a, b, c) described by
// ElementwiseParams. The INDEX32 mode divides in 32 bits, which GPUs do far faster than in 64.
// c is only followed in the HAS_C mode (the specialization folds the rest away).
void ew_offsets(ElementwiseParams p, int64_t i, out int64_t o, out int64_t a, out int64_t b,
                out int64_t c) {
  o = 0;
  a = 0;
  b = 0;
  c = 0;
  const bool has_c = (MODE & VKML_EW_HAS_C) != 0u;
  if ((MODE & VKML_EW_INDEX32) != 0u) {
    uint rem = uint(i);
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
      uint s = uint(p.sizes[d]);
      int64_t k = int64_t(rem % s);
      rem /= s;
      o += k * p.dst_strides[d];
      a += k * p.a_strides[d];
      b += k * p.b_strides[d];
      if (has_c) c += k * p.c_strides[d];
    }
  } else {
    int64_t rem = i;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
      int64_t s = p.sizes[d];
      int64_t k = rem % s;
      rem /= s;
      o += k * p.dst_strides[d];
      a += k * p.a_strides[d];
      b += k * p.b_strides[d];
      if (has_c) c += k * p.c_strides[d];
    }
  }
}
