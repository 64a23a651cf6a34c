// Element offsets of linear index i in up to three strided tensors (out, a, b) described by
// ElementwiseParams. The INDEX32 mode divides in 32 bits, which GPUs do far faster than in 64.
void ew_offsets(ElementwiseParams p, int64_t i, out int64_t o, out int64_t a, out int64_t b) {
  o = 0;
  a = 0;
  b = 0;
  if ((MODE & VKML_EW_INDEX32) != 0u) {
    uint rem = uint(i);
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
      uint s = uint(p.sizes[d]);
      int64_t c = int64_t(rem % s);
      rem /= s;
      o += c * p.dst_strides[d];
      a += c * p.a_strides[d];
      b += c * p.b_strides[d];
    }
  } else {
    int64_t rem = i;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
      int64_t s = p.sizes[d];
      int64_t c = rem % s;
      rem /= s;
      o += c * p.dst_strides[d];
      a += c * p.a_strides[d];
      b += c * p.b_strides[d];
    }
  }
}
