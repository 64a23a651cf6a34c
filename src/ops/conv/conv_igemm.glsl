// Implicit-GEMM convolution hooks for gemm_simt.comp (built with CONV_IMPLICIT): B's tile is
// gathered from the source tensor instead of an im2col matrix, and C is stored straight into the
// destination's (n, channel, position) layout. conv_igemm_params.h has the mapping.
#include "conv_params.h"
#include "conv_igemm_params.h"

// Geometry in registers, read once.
struct ConvGather {
  ivec3 size, kernel, kmul, mul, add, pos_size, src_sp, dst_sp;
  int kv, khw, src_c, positions;
  int chans;  // the source's channels per group
};

ConvGather load_conv_gather(ConvGemmParams p) {
  ConvGather g;
  g.size = ivec3(p.src_size[0], p.src_size[1], p.src_size[2]);
  g.kernel = ivec3(p.kernel[0], p.kernel[1], p.kernel[2]);
  g.kmul = ivec3(p.kmul[0], p.kmul[1], p.kmul[2]);
  g.mul = ivec3(p.mul[0], p.mul[1], p.mul[2]);
  g.add = ivec3(p.add[0], p.add[1], p.add[2]);
  g.pos_size = ivec3(p.pos_size[0], p.pos_size[1], p.pos_size[2]);
  g.src_sp = ivec3(p.src_sp[0], p.src_sp[1], p.src_sp[2]);
  g.dst_sp = ivec3(p.dst_sp[0], p.dst_sp[1], p.dst_sp[2]);
  g.khw = g.kernel.y * g.kernel.z;
  g.kv = g.kernel.x * g.khw;
  g.src_c = p.src_c;
  g.positions = g.pos_size.x * g.pos_size.y * g.pos_size.z;
  g.chans = p.src_group_channels;
  return g;
}

// Far outside any source: a column past N reads zeros whatever the tap (taps stay below 2^29).
const int CONV_NOWHERE = -(1 << 30);

// (d, h, w) of position q in the destination's spatial box.
ivec3 conv_position(ConvGather g, int q) {
  const int w = q % g.pos_size.z;
  q /= g.pos_size.z;
  return ivec3(q / g.pos_size.y, q % g.pos_size.y, w);
}

// Column j's sample address (its group's first channel) and its source coordinate before taps.
void conv_column(ConvGemmParams p, ConvGather g, int64_t group, int64_t j, out uint64_t base,
                 out ivec3 at) {
  if (j >= p.n) {
    base = p.src;
    at = ivec3(CONV_NOWHERE);
    return;
  }
  const int64_t n = j / g.positions;
  at = conv_position(g, int(j - n * g.positions)) * g.mul + g.add;
  base = p.src + uint64_t((n * p.src_n + group * p.src_group_channels * int64_t(g.src_c)) * IN_SIZE);
}

// An index split into mixed-radix digits: k = (channel, kd, kh, kw) over the kernel, or a
// column/k = (sample, d, h, w) over the destination's positions. The K loop advances each by the
// same constant (BK), split into digits once, so it adds with carries instead of dividing.
struct Digits {
  int top;  // channel or sample: unbounded
  ivec3 low;
};

Digits tap_digits(ConvGather g, int k) {
  Digits d;
  d.top = k / max(g.kv, 1);  // kv = 0: a phase without taps, never fetched
  int r = k - d.top * g.kv;
  const int kd = r / max(g.khw, 1);
  r -= kd * g.khw;
  const int kh = r / max(g.kernel.z, 1);
  d.low = ivec3(kd, kh, r - kh * g.kernel.z);
  return d;
}

// k over (kd, kh, kw, channel) with the channel fastest, as top = kd, low = (kh, kw, channel):
// the order of channels-innermost octets (radix (kernel h, kernel w, channels)).
Digits channel_tap_digits(ConvGather g, int k) {
  Digits d;
  int t = k / max(g.chans, 1);
  const int ch = k - t * g.chans;
  const int kw = t % max(g.kernel.z, 1);
  t /= max(g.kernel.z, 1);
  const int kh = t % max(g.kernel.y, 1);
  d.top = t / max(g.kernel.y, 1);
  d.low = ivec3(kh, kw, ch);
  return d;
}

Digits position_digits(ConvGather g, int q) {
  Digits d;
  d.top = q / g.positions;
  d.low = conv_position(g, q - d.top * g.positions);
  return d;
}

// d + step, where each of step's low digits is below its radix.
Digits digits_add(Digits d, Digits step, ivec3 radix) {
  d.low += step.low;
  d.top += step.top;
  if (d.low.z >= radix.z) {
    d.low.z -= radix.z;
    d.low.y += 1;
  }
  if (d.low.y >= radix.y) {
    d.low.y -= radix.y;
    d.low.x += 1;
  }
  if (d.low.x >= radix.x) {
    d.low.x -= radix.x;
    d.top += 1;
  }
  return d;
}

// Whether coordinate c lies inside the source (a negative one wraps to a large unsigned value).
bool conv_inside(ConvGather g, ivec3 c) { return all(lessThan(uvec3(c), uvec3(g.size))); }

// Element offset of coordinate c within a sample's channel. Column and tap parts are summed
// separately (each computed once, not per element); the 32-bit sums may wrap on the way, and are
// exact wherever the coordinate is inside the source.
int conv_offset(ConvGather g, ivec3 c) {
  return c.x * g.src_sp.x + c.y * g.src_sp.y + c.z * g.src_sp.z;
}

// Byte address of column j in the destination (channel 0 of the sample), or -1 past N.
int64_t conv_out_address(ConvGemmParams p, ConvGather g, int64_t j) {
  if (j >= p.n) return -1;
  const int64_t n = j / g.positions;
  const ivec3 o = conv_position(g, int(j - n * g.positions));
  const int64_t off = n * p.dst_n + int64_t(o.x) * g.dst_sp.x + int64_t(o.y) * g.dst_sp.y +
                      int64_t(o.z) * g.dst_sp.z;
  return int64_t(p.dst) + off * OUT_SIZE;
}
