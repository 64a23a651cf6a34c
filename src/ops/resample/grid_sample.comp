#version 460
#extension GL_GOOGLE_include_directive : require
// grid_sampler_2d/3d with PyTorch's coordinate rules (unnormalize, border/reflection padding,
// align_corners; bilinear, nearest with round-half-even, bicubic A = -0.75 in 2-D).
// Default: forward, one invocation per output element.
// GRID_BACKWARD: one invocation per grid point; grad_grid summed over channels in order, and,
// when grad_input is wanted, contributions added to a float scratch with compare-and-swap (the
// order of float additions varies between runs, as CUDA's atomics do).
// GRID_GATHER: one invocation per grad_input element, summing over every grid point of its batch
// that reads it (deterministic; used for float64, which has no portable atomics).
#include "vkml_common.glsl"
#include "grid_sample_params.h"

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Push { GridSampleParams p; } pc;

#include "nn_common.glsl"

// Grid coordinate -> input position, with d(position)/d(coordinate) in `g`.
ACC unnormalize(ACC c, int64_t size, out ACC g) {
  if (pc.p.align_corners != 0u) {
    g = ACC(size - 1) / ACC(2);
    return ((c + ACC(1)) / ACC(2)) * ACC(size - 1);
  }
  g = ACC(size) / ACC(2);
  return ((c + ACC(1)) * ACC(size) - ACC(1)) / ACC(2);
}

ACC clip(ACC x, int64_t limit, inout ACC g) {
  if (x <= ACC(0)) {
    g = ACC(0);
    return ACC(0);
  }
  ACC hi = ACC(limit - 1);
  if (x >= hi) {
    g = ACC(0);
    return hi;
  }
  return x;
}

ACC reflect(ACC x, int64_t twice_low, int64_t twice_high, inout ACC g) {
  if (twice_low == twice_high) {
    g = ACC(0);
    return ACC(0);
  }
  ACC lo = ACC(twice_low) / ACC(2), span = ACC(twice_high - twice_low) / ACC(2);
  x -= lo;
  if (x < ACC(0)) {
    g = -g;
    x = -x;
  }
  ACC extra = mod(x, span);
  int flips = int(floor(x / span));
  if (flips % 2 == 0) return extra + lo;
  g = -g;
  return span - extra + lo;
}

// Border/reflection padding of an input position (g carries the derivative along).
ACC pad_coordinate(ACC x, int64_t size, inout ACC g) {
  if (pc.p.padding == GRID_PAD_BORDER) return clip(x, size, g);
  if (pc.p.padding == GRID_PAD_REFLECTION) {
    x = pc.p.align_corners != 0u ? reflect(x, 0, 2 * (size - 1), g)
                                 : reflect(x, -1, 2 * size - 1, g);
    return clip(x, size, g);
  }
  return x;
}

ACC cubic1(ACC x) { return ((ACC(-0.75) + ACC(2)) * x - (ACC(-0.75) + ACC(3))) * x * x + ACC(1); }
ACC cubic2(ACC x) {
  const ACC A = ACC(-0.75);
  return ((A * x - ACC(5) * A) * x + ACC(8) * A) * x - ACC(4) * A;
}

// Taps of one dim (k: 0 = D, 1 = H, 2 = W) for grid coordinate c: input indices (possibly out
// of range: they read 0), weights, d(weight)/d(position), and d(position)/d(c) in `mult`.
int dim_taps(int k, ACC c, out int64_t idx[4], out ACC w[4], out ACC dw[4], out ACC mult) {
  int64_t size = pc.p.in_size[k];
  idx[0] = 0;
  w[0] = ACC(1);
  dw[0] = ACC(0);
  mult = ACC(0);
  if (k == 0 && pc.p.dims == 2u) return 1;
  ACC g;
  if (pc.p.interpolation == GRID_BICUBIC) {
    ACC x = unnormalize(c, size, mult);
    ACC x0 = floor(x), t = x - x0;
    w[0] = cubic2(t + ACC(1));
    w[1] = cubic1(t);
    w[2] = cubic1(ACC(1) - t);
    w[3] = cubic2(ACC(2) - t);
    const ACC A = ACC(-0.75);
    ACC u = -ACC(1) - t;
    dw[0] = (-ACC(3) * A * u - ACC(10) * A) * u - ACC(8) * A;
    u = -t;
    dw[1] = (-ACC(3) * (A + ACC(2)) * u - ACC(2) * (A + ACC(3))) * u;
    u = ACC(1) - t;
    dw[2] = (ACC(3) * (A + ACC(2)) * u - ACC(2) * (A + ACC(3))) * u;
    u = ACC(2) - t;
    dw[3] = (ACC(3) * A * u - ACC(10) * A) * u + ACC(8) * A;
    // The polynomials above are derivatives along the tap distance (-1 - t, -t, 1 - t, 2 - t),
    // which falls as t grows: negate for d/dt.
    for (int j = 0; j < 4; ++j) dw[j] = -dw[j];
    for (int j = 0; j < 4; ++j) {
      ACC unused = ACC(1);
      idx[j] = int64_t(pad_coordinate(x0 - ACC(1) + ACC(j), size, unused));
    }
    return 4;
  }
  ACC x = unnormalize(c, size, mult);
  g = ACC(1);
  x = pad_coordinate(x, size, g);
  mult *= g;
  if (pc.p.interpolation == GRID_NEAREST) {
    idx[0] = int64_t(roundEven(x));
    mult = ACC(0);
    return 1;
  }
  ACC x0 = floor(x), f = x - x0;
  idx[0] = int64_t(x0);
  idx[1] = idx[0] + 1;
  w[0] = ACC(1) - f;
  w[1] = f;
  dw[0] = ACC(-1);
  dw[1] = ACC(1);
  return 2;
}

bool inside(int k, int64_t i) { return i >= 0 && i < pc.p.in_size[k]; }

// Taps of all dims for grid point (n, od, oh, ow).
struct Taps {
  int n[3];
  int64_t idx[3][4];
  ACC w[3][4];
  ACC dw[3][4];
  ACC mult[3];
};

Taps grid_taps(int64_t n, int64_t od, int64_t oh, int64_t ow) {
  GridSampleParams p = pc.p;
  Taps t;
  int64_t base = n * p.grid_strides[0] + od * p.grid_strides[1] + oh * p.grid_strides[2] +
                 ow * p.grid_strides[3];
  for (int k = 0; k < 3; ++k) {
    // grid coordinate 0 is x (W), 1 is y (H), 2 is z (D)
    int coord = 2 - k;
    ACC c = coord < int(p.dims) ? nn_load(p.grid, base + coord * p.grid_strides[4], p.grid_dtype)
                                : ACC(0);
    int64_t idx[4];
    ACC w[4], dw[4], mult;
    t.n[k] = dim_taps(k, c, idx, w, dw, mult);
    for (int j = 0; j < 4; ++j) {
      t.idx[k][j] = idx[j];
      t.w[k][j] = w[j];
      t.dw[k][j] = dw[j];
    }
    t.mult[k] = mult;
  }
  return t;
}

int64_t input_offset(int64_t n, int64_t c, int64_t d, int64_t h, int64_t w) {
  GridSampleParams p = pc.p;
  return n * p.input_strides[0] + c * p.input_strides[1] + d * p.input_strides[2] +
         h * p.input_strides[3] + w * p.input_strides[4];
}

#if !defined(GRID_BACKWARD) && !defined(GRID_GATHER)
void main() {
  GridSampleParams p = pc.p;
  for (int64_t e = nn_group_id() * int64_t(gl_WorkGroupSize.x) + int64_t(gl_LocalInvocationID.x);
       e < p.numel; e += nn_group_count() * int64_t(gl_WorkGroupSize.x)) {
    int64_t ow = e % p.out_size[2], r = e / p.out_size[2];
    int64_t oh = r % p.out_size[1];
    r /= p.out_size[1];
    int64_t od = r % p.out_size[0];
    r /= p.out_size[0];
    int64_t c = r % p.channels, n = r / p.channels;
    Taps t = grid_taps(n, od, oh, ow);
    ACC acc = ACC(0);
    for (int a = 0; a < t.n[0]; ++a) {
      if (!inside(0, t.idx[0][a])) continue;
      for (int b = 0; b < t.n[1]; ++b) {
        if (!inside(1, t.idx[1][b])) continue;
        for (int q = 0; q < t.n[2]; ++q) {
          if (!inside(2, t.idx[2][q])) continue;
          ACC v = nn_load(p.source, input_offset(n, c, t.idx[0][a], t.idx[1][b], t.idx[2][q]),
                          p.input_dtype);
          acc += t.w[0][a] * t.w[1][b] * t.w[2][q] * v;
        }
      }
    }
    nn_store(p.result, n * p.out_strides[0] + c * p.out_strides[1] + od * p.out_strides[2] +
                           oh * p.out_strides[3] + ow * p.out_strides[4], p.out_dtype, acc);
  }
}
#elif defined(GRID_BACKWARD)
void atomic_add_f32(uint64_t addr, float v) {
  uint old = PU32(addr).v;
  for (;;) {
    uint seen = atomicCompSwap(PU32(addr).v, old, floatBitsToUint(uintBitsToFloat(old) + v));
    if (seen == old) break;
    old = seen;
  }
}

void main() {
  GridSampleParams p = pc.p;
  for (int64_t e = nn_group_id() * int64_t(gl_WorkGroupSize.x) + int64_t(gl_LocalInvocationID.x);
       e < p.numel; e += nn_group_count() * int64_t(gl_WorkGroupSize.x)) {
    int64_t ow = e % p.out_size[2], r = e / p.out_size[2];
    int64_t oh = r % p.out_size[1];
    r /= p.out_size[1];
    int64_t od = r % p.out_size[0], n = r / p.out_size[0];
    Taps t = grid_taps(n, od, oh, ow);
    ACC gsum[3] = {ACC(0), ACC(0), ACC(0)};
    for (int64_t c = 0; c < p.channels; ++c) {
      ACC go = nn_load(p.result, n * p.out_strides[0] + c * p.out_strides[1] +
                                     od * p.out_strides[2] + oh * p.out_strides[3] +
                                     ow * p.out_strides[4], p.out_dtype);
      for (int a = 0; a < t.n[0]; ++a) {
        if (!inside(0, t.idx[0][a])) continue;
        for (int b = 0; b < t.n[1]; ++b) {
          if (!inside(1, t.idx[1][b])) continue;
          for (int q = 0; q < t.n[2]; ++q) {
            if (!inside(2, t.idx[2][q])) continue;
            int64_t d = t.idx[0][a], h = t.idx[1][b], w = t.idx[2][q];
            if (p.grad_input != 0ul) {
              int64_t cell = (((n * p.channels + c) * p.in_size[0] + d) * p.in_size[1] + h) *
                                 p.in_size[2] + w;
              atomic_add_f32(p.grad_input + uint64_t(cell) * 4ul,
                             float(t.w[0][a] * t.w[1][b] * t.w[2][q] * go));
            }
            if (p.grad_grid != 0ul) {
              ACC v = nn_load(p.source, input_offset(n, c, d, h, w), p.input_dtype) * go;
              gsum[0] += t.dw[0][a] * t.w[1][b] * t.w[2][q] * v;
              gsum[1] += t.w[0][a] * t.dw[1][b] * t.w[2][q] * v;
              gsum[2] += t.w[0][a] * t.w[1][b] * t.dw[2][q] * v;
            }
          }
        }
      }
    }
    if (p.grad_grid != 0ul) {
      int64_t base = n * p.gg_strides[0] + od * p.gg_strides[1] + oh * p.gg_strides[2] +
                     ow * p.gg_strides[3];
      for (int coord = 0; coord < int(p.dims); ++coord) {
        int k = 2 - coord;
        nn_store(p.grad_grid, base + coord * p.gg_strides[4], p.grid_dtype,
                 gsum[k] * t.mult[k]);
      }
    }
  }
}
#else
void main() {
  GridSampleParams p = pc.p;
  int64_t points = p.out_size[0] * p.out_size[1] * p.out_size[2];
  for (int64_t e = nn_group_id() * int64_t(gl_WorkGroupSize.x) + int64_t(gl_LocalInvocationID.x);
       e < p.numel; e += nn_group_count() * int64_t(gl_WorkGroupSize.x)) {
    int64_t x[3], r = e;
    for (int k = 2; k >= 0; --k) {
      x[k] = r % p.in_size[k];
      r /= p.in_size[k];
    }
    int64_t c = r % p.channels, n = r / p.channels;
    ACC acc = ACC(0);
    for (int64_t g = 0; g < points; ++g) {
      int64_t ow = g % p.out_size[2], oh = (g / p.out_size[2]) % p.out_size[1];
      int64_t od = g / (p.out_size[2] * p.out_size[1]);
      Taps t = grid_taps(n, od, oh, ow);
      ACC wsum[3] = {ACC(0), ACC(0), ACC(0)};
      bool hit[3] = {false, false, false};
      for (int k = 0; k < 3; ++k) {
        for (int j = 0; j < t.n[k]; ++j) {
          if (t.idx[k][j] == x[k]) {
            wsum[k] += t.w[k][j];
            hit[k] = true;
          }
        }
      }
      if (!(hit[0] && hit[1] && hit[2])) continue;
      ACC go = nn_load(p.result, n * p.out_strides[0] + c * p.out_strides[1] +
                                     od * p.out_strides[2] + oh * p.out_strides[3] +
                                     ow * p.out_strides[4], p.out_dtype);
      acc += wsum[0] * wsum[1] * wsum[2] * go;
    }
    nn_store(p.grad_input, n * p.gi_strides[0] + c * p.gi_strides[1] + x[0] * p.gi_strides[2] +
                               x[1] * p.gi_strides[3] + x[2] * p.gi_strides[4], p.gi_dtype, acc);
  }
}
#endif
