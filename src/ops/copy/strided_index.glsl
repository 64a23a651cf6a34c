// Offsets (in elements) of linear index i in dst and src, from the StridedParams p.
void strided_offsets(StridedParams p, int64_t i, out int64_t dst_off, out int64_t src_off) {
  dst_off = 0;
  src_off = 0;
  int64_t rem = i;
  for (int d = int(p.ndim) - 1; d >= 0; --d) {
    int64_t s = p.sizes[d];
    int64_t c = rem % s;
    rem /= s;
    dst_off += c * p.dst_strides[d];
    src_off += c * p.src_strides[d];
  }
}
