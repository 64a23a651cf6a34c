// Shared by the conv shaders: element types, geometry and index helpers.
// DT_* picks the tensors' dtype (f32, f16, bf16, f64); ACC is float, or double for f64.
#if defined(DT_F64)
#define ACC double
#define DT_SIZE 8
ACC load_t(uint64_t a) { return PF64(a).v; }
void store_t(uint64_t a, ACC v) { PF64(a).v = v; }
#elif defined(DT_F32)
#define ACC float
#define DT_SIZE 4
ACC load_t(uint64_t a) { return PF32(a).v; }
void store_t(uint64_t a, ACC v) { PF32(a).v = v; }
#elif defined(DT_F16)
#define ACC float
#define DT_SIZE 2
ACC load_t(uint64_t a) { return unpackHalf2x16(uint(PU16(a).v)).x; }
void store_t(uint64_t a, ACC v) { PF16(a).v = float16_t(v); }
#elif defined(DT_BF16)
#define ACC float
#define DT_SIZE 2
ACC load_t(uint64_t a) { return bf16_to_float(PU16(a).v); }
void store_t(uint64_t a, ACC v) { PU16(a).v = float_to_bf16(v); }
#endif

struct Geometry {
  ivec3 in_size, out_size, kernel, stride, pad, dilation;
};

Geometry load_geometry(ConvParams p) {
  Geometry g;
  g.in_size = ivec3(p.in_size[0], p.in_size[1], p.in_size[2]);
  g.out_size = ivec3(p.out_size[0], p.out_size[1], p.out_size[2]);
  g.kernel = ivec3(p.kernel[0], p.kernel[1], p.kernel[2]);
  g.stride = ivec3(p.stride[0], p.stride[1], p.stride[2]);
  g.pad = ivec3(p.pad[0], p.pad[1], p.pad[2]);
  g.dilation = ivec3(p.dilation[0], p.dilation[1], p.dilation[2]);
  return g;
}

int volume(ivec3 s) { return s.x * s.y * s.z; }

// (d, h, w) of flat index i in a row-major box of size s.
ivec3 unflatten(int i, ivec3 s) {
  int w = i % s.z;
  i /= s.z;
  return ivec3(i / s.y, i % s.y, w);
}

int flatten(ivec3 v, ivec3 s) { return (v.x * s.y + v.y) * s.z + v.z; }

bool inside(ivec3 v, ivec3 s) { return all(greaterThanEqual(v, ivec3(0))) && all(lessThan(v, s)); }

// Element offset of (n, c, d, h, w) in a 5-D strided tensor.
int64_t offset5(int64_t s[5], int n, int c, ivec3 v) {
  return n * s[0] + c * s[1] + v.x * s[2] + v.y * s[3] + v.z * s[4];
}

#define CONV_GRID_STRIDE (gl_NumWorkGroups.x * gl_WorkGroupSize.x)
