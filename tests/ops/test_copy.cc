// Copy family against a CPU reference: every dtype pair, strided, broadcast, zero-size, odd sizes.
#include <cmath>
#include <cstring>
#include <functional>

#include "test_util.h"

namespace vkml::testing {

namespace {

constexpr DType kAll[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI8,
                          DType::kU8,  DType::kI16, DType::kI32,  DType::kI64, DType::kBool};

float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(man), -24);
  } else if (exp == 31) {
    f = man ? NAN : INFINITY;
  } else {
    f = std::ldexp(static_cast<float>(man | 0x400), static_cast<int>(exp) - 25);
  }
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits |= sign;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Reads element i of a host buffer of dtype t as a Scalar (float types as double).
Scalar read_element(DType t, const std::vector<uint8_t>& buf, size_t i) {
  const uint8_t* p = buf.data() + i * dtype_size(t);
  auto get = [&](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  switch (t) {
    case DType::kF32: return Scalar::from_double(get(float{}));
    case DType::kF64: return Scalar::from_double(get(double{}));
    case DType::kF16: return Scalar::from_double(half_to_float(get(uint16_t{})));
    case DType::kBF16: {
      uint32_t bits = static_cast<uint32_t>(get(uint16_t{})) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return Scalar::from_double(f);
    }
    case DType::kI8: return Scalar::from_int(get(int8_t{}));
    case DType::kU8: return Scalar::from_int(get(uint8_t{}));
    case DType::kBool: return Scalar::from_int(get(uint8_t{}) != 0);
    case DType::kI16: return Scalar::from_int(get(int16_t{}));
    case DType::kI32: return Scalar::from_int(get(int32_t{}));
    case DType::kI64: return Scalar::from_int(get(int64_t{}));
    default: return {};
  }
}

// Random values that every dtype can hold exactly or round deterministically.
std::vector<uint8_t> random_values(DType t, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> real(-100.0, 100.0);
  std::uniform_int_distribution<int> small(-100, 100);
  std::vector<uint8_t> out(n * dtype_size(t));
  for (size_t i = 0; i < n; ++i) {
    Scalar s = dtype_is_float(t) ? Scalar::from_double(real(rng))
                                 : Scalar::from_int(t == DType::kU8 ? small(rng) + 100 : small(rng));
    uint64_t bits = ops::scalar_bits(t, s);
    std::memcpy(out.data() + i * dtype_size(t), &bits, dtype_size(t));
  }
  return out;
}

}  // namespace

using CopyTest = DeviceTest;

TEST_F(CopyTest, CastsEveryDtypePairThroughStridedViews) {
  // src is a transposed 5x7 view; dst is contiguous. The reference casts element by element.
  const int64_t rows = 5, cols = 7, n = rows * cols;
  uint32_t seed = 10;
  for (DType s : kAll) {
    for (DType d : kAll) {
      if (!dev().caps().supports_dtype(s) || !dev().caps().supports_dtype(d)) continue;
      auto host = random_values(s, n, seed++);
      DeviceBuffer src(dev(), n * dtype_size(s)), dst(dev(), n * dtype_size(d));
      dev().stream().upload(host.data(), src.address, host.size());
      // dst[i][j] = src[j][i] viewed as a cols x rows transpose of the rows x cols buffer.
      ops::copy(dev(), desc(dst.address, d, {cols, rows}),
                desc(src.address, s, {cols, rows}, {1, cols}));
      auto out = download<uint8_t>(dev(), dst.address, n * dtype_size(d));
      for (int64_t i = 0; i < cols; ++i) {
        for (int64_t j = 0; j < rows; ++j) {
          uint64_t expect = ops::scalar_bits(d, read_element(s, host, j * cols + i));
          uint64_t got = 0;
          std::memcpy(&got, out.data() + (i * rows + j) * dtype_size(d), dtype_size(d));
          ASSERT_EQ(got, expect) << dtype_name(s) << "->" << dtype_name(d) << " at " << i << ","
                                 << j;
        }
      }
    }
  }
}

TEST_F(CopyTest, BroadcastZeroSizeAndOddShapes) {
  // Broadcast a length-3 row over 4x3, writing into every other column of a 4x6 buffer.
  DeviceBuffer src(dev(), 3 * 4), dst(dev(), 24 * 4);
  std::vector<int32_t> row = {7, -8, 9};
  dev().stream().upload(row.data(), src.address, 12);
  ops::fill(dev(), desc(dst.address, DType::kI32, {24}), Scalar::from_int(0));
  ops::copy(dev(), desc(dst.address, DType::kI32, {4, 3}, {6, 2}),
            desc(src.address, DType::kI32, {4, 3}, {0, 1}));
  auto out = download<int32_t>(dev(), dst.address, 24);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 6; ++c) EXPECT_EQ(out[r * 6 + c], c % 2 == 0 ? row[c / 2] : 0);
  }
  // Zero-size tensors record nothing.
  uint64_t dispatches = dev().stream().dispatches_recorded();
  ops::copy(dev(), desc(dst.address, DType::kF32, {0, 5}), desc(src.address, DType::kF32, {0, 5}));
  ops::fill(dev(), desc(dst.address, DType::kF32, {3, 0}), Scalar::from_double(1));
  EXPECT_EQ(dev().stream().dispatches_recorded(), dispatches);
  // Odd sizes in 4 dims with a permuted source, f16 -> f32.
  std::vector<int64_t> sizes = {3, 5, 2, 7};
  int64_t n = 3 * 5 * 2 * 7;
  auto host = random_values(DType::kF16, n, 99);
  DeviceBuffer s16(dev(), n * 2), d32(dev(), n * 4);
  dev().stream().upload(host.data(), s16.address, n * 2);
  // Source is laid out as [7][2][5][3] and viewed as [3][5][2][7].
  std::vector<int64_t> sstr = {1, 3, 15, 30};
  ops::copy(dev(), desc(d32.address, DType::kF32, sizes), desc(s16.address, DType::kF16, sizes, sstr));
  auto out32 = download<float>(dev(), d32.address, n);
  int64_t k = 0;
  for (int64_t a = 0; a < 3; ++a)
    for (int64_t b = 0; b < 5; ++b)
      for (int64_t c = 0; c < 2; ++c)
        for (int64_t e = 0; e < 7; ++e, ++k) {
          double expect = read_element(DType::kF16, host, a * 1 + b * 3 + c * 15 + e * 30).f;
          ASSERT_EQ(out32[k], static_cast<float>(expect));
        }
}

// Copies whose unit-stride dimension differs between the sides take the tiled transpose: NCHW to
// channels-last with odd planes, a plain matrix transpose, a broadcast source, every element size.
TEST_F(CopyTest, TransposesThroughTilesEveryElementSize) {
  struct Case {
    std::vector<int64_t> sizes, dst_strides, src_strides;
    int64_t src_numel;
  };
  const int64_t n = 3, c = 37, hw = 50;
  const Case cases[] = {
      // [n][c][hw] source into a [n][hw][c] destination (NCHW to channels-last).
      {{n, c, hw}, {c * hw, 1, c}, {c * hw, hw, 1}, n * c * hw},
      // A 70x33 matrix transposed, the source read through its transpose view.
      {{33, 70}, {70, 1}, {1, 33}, 33 * 70},
      // A [c][hw] plane broadcast over the batch (source batch stride 0).
      {{n, c, hw}, {c * hw, 1, c}, {0, hw, 1}, c * hw},
  };
  for (DType t : {DType::kI8, DType::kF16, DType::kF32, DType::kI64}) {
    const size_t es = dtype_size(t);
    for (const Case& k : cases) {
      int64_t numel = 1;
      for (int64_t s : k.sizes) numel *= s;
      auto host = random_values(t, k.src_numel, 7);
      DeviceBuffer src(dev(), k.src_numel * es), dst(dev(), numel * es);
      dev().stream().upload(host.data(), src.address, host.size());
      ops::copy(dev(), desc(dst.address, t, k.sizes, k.dst_strides),
                desc(src.address, t, k.sizes, k.src_strides));
      auto out = download<uint8_t>(dev(), dst.address, numel * es);
      std::vector<int64_t> idx(k.sizes.size(), 0);
      for (int64_t i = 0; i < numel; ++i) {
        int64_t so = 0, dof = 0;
        for (size_t d = 0; d < idx.size(); ++d) {
          so += idx[d] * k.src_strides[d];
          dof += idx[d] * k.dst_strides[d];
        }
        ASSERT_EQ(std::memcmp(out.data() + dof * es, host.data() + so * es, es), 0)
            << dtype_name(t) << " element " << i;
        for (int d = static_cast<int>(idx.size()) - 1; d >= 0 && ++idx[d] == k.sizes[d]; --d) {
          idx[d] = 0;
        }
      }
    }
  }
}

TEST_F(CopyTest, FillEveryDtypeStrided) {
  for (DType t : kAll) {
    if (!dev().caps().supports_dtype(t)) continue;
    const int64_t n = 37;
    size_t es = dtype_size(t);
    DeviceBuffer buf(dev(), n * 2 * es);
    auto host = random_values(t, n * 2, 5);
    dev().stream().upload(host.data(), buf.address, host.size());
    Scalar v = dtype_is_float(t) ? Scalar::from_double(-2.75) : Scalar::from_int(-3);
    ops::fill(dev(), desc(buf.address, t, {n}, {2}), v);
    auto out = download<uint8_t>(dev(), buf.address, n * 2 * es);
    uint64_t expect = ops::scalar_bits(t, v);
    for (int64_t i = 0; i < n * 2; ++i) {
      uint64_t got = 0, orig = 0;
      std::memcpy(&got, out.data() + i * es, es);
      std::memcpy(&orig, host.data() + i * es, es);
      ASSERT_EQ(got, i % 2 == 0 ? expect : orig) << dtype_name(t) << " " << i;
    }
  }
}

TEST(ScalarBits, MatchesCastRules) {
  EXPECT_EQ(ops::scalar_bits(DType::kF16, Scalar::from_double(1.0)), 0x3C00u);
  EXPECT_EQ(ops::scalar_bits(DType::kF16, Scalar::from_double(65520.0)), 0x7C00u);  // overflow
  EXPECT_EQ(ops::scalar_bits(DType::kF16, Scalar::from_double(5.960464477539063e-08)), 0x0001u);
  EXPECT_EQ(ops::scalar_bits(DType::kBF16, Scalar::from_double(1.0)), 0x3F80u);
  EXPECT_EQ(ops::scalar_bits(DType::kU8, Scalar::from_double(-1.0)), 255u);  // wraps via int64
  EXPECT_EQ(ops::scalar_bits(DType::kI8, Scalar::from_int(300)), 44u);
  EXPECT_EQ(ops::scalar_bits(DType::kBool, Scalar::from_double(0.5)), 1u);
}

}  // namespace vkml::testing

namespace vkml::testing {

TEST_F(CopyTest, CopyBytesVectorBulkAndTail) {
  for (uint64_t n : {100ull, (1ull << 20) + 13, 300000ull}) {
    for (uint64_t off : {0ull, 16ull, 3ull}) {
      DeviceBuffer a(dev(), n + off), b(dev(), n + off);
      auto host = random_bytes(n, static_cast<uint32_t>(n + off));
      dev().stream().upload(host.data(), a.address + off, n);
      ops::copy_bytes(dev(), b.address + off, a.address + off, n);
      EXPECT_EQ(download<uint8_t>(dev(), b.address + off, n), host) << n << " " << off;
    }
  }
}

}  // namespace vkml::testing
