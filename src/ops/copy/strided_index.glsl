// Offsets (in elements) of linear index i in dst and src, from the StridedParams p. When the host
// says they fit (p.index32), the divisions are 32-bit: GPUs emulate 64-bit division at many times the cost.
void strided_offsets(StridedParams p, int64_t i, out int64_t dst_off, out int64_t src_off) {
  if (p.index32 != 0u) {
    int rem = int(i), doff = 0, soff = 0;
    [[unroll]] for (int d = VKML_COPY_MAX_DIMS - 1; d >= 0; --d) {
      if (d < int(p.ndim)) {
        int s = int(p.sizes[d]);
        int c = rem % s;
        rem /= s;
        doff += c * int(p.dst_strides[d]);
        soff += c * int(p.src_strides[d]);
      }
    }
    dst_off = doff;
    src_off = soff;
    return;
  }
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
