// Index family: gather/scatter, index_* ops, advanced indexing, embedding backward, where and
// mask scans, against CPU references (exact for copies and integer sums, index order for
// floating-point accumulation).
#include <cmath>
#include <complex>
#include <limits>

#include "test_util.h"
#include "ops/index/index_launch.h"
#include "vkml/config.h"
#include "vkml/embedding.h"
#include "vkml/index.h"

namespace vkml::testing {

namespace {

template <typename T>
struct Tensor {
  DeviceBuffer buf;
  TensorDesc d;
  Tensor(Device& dev, DType t, std::vector<int64_t> sizes, const std::vector<T>& host,
         std::vector<int64_t> strides = {})
      : buf(dev, std::max<size_t>(host.size(), 1) * sizeof(T)),
        d(desc(buf.address, t, sizes, strides)) {
    if (!host.empty()) dev.stream().upload(host.data(), buf.address, host.size() * sizeof(T));
  }
  std::vector<T> get(size_t n) { return download<T>(buf.dev, buf.address, n); }
};

std::vector<float> iota_f(size_t n, float scale = 1.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (static_cast<float>(i) - n / 3.0f) * scale;
  return v;
}

ops::IndexErrorRecord read_record(Device& dev, uint64_t address) {
  ops::IndexErrorRecord r;
  dev.stream().download(address, &r, sizeof(r));
  return r;
}

}  // namespace

using IndexTest = DeviceTest;

TEST_F(IndexTest, GatherAlongDimOfTransposedSelf) {
  // self is the transpose of a 5x4 buffer: logical 4x5 with strides (1, 4).
  std::vector<float> base = iota_f(20);
  Tensor<float> self(dev(), DType::kF32, {4, 5}, base, {1, 4});
  std::vector<int32_t> idx = {4, 0, 2, 1, 3, 3, 0, 0, 4, 2, 1, 1};  // 4x3 (int32)
  Tensor<int32_t> index(dev(), DType::kI32, {4, 3}, idx);
  Tensor<float> out(dev(), DType::kF32, {4, 3}, std::vector<float>(12, -1.0f));
  ops::gather(dev(), out.d, self.d, 1, index.d);
  auto got = out.get(12);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ(got[i * 3 + j], base[i + 4 * idx[i * 3 + j]]) << i << "," << j;
    }
  }
}

TEST_F(IndexTest, ScatterAddAccumulatesDuplicatesInIndexOrder) {
  const int rows = 6, cols = 7, n = 40;
  std::vector<float> src(n * cols);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto& v : src) v = u(rng);
  std::vector<int64_t> idx(n * cols);
  for (auto& v : idx) v = rng() % rows;
  std::vector<float> init(rows * cols, 0.5f), ref = init;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < cols; ++j) ref[idx[i * cols + j] * cols + j] += src[i * cols + j];
  }
  Tensor<float> self(dev(), DType::kF32, {rows, cols}, init);
  Tensor<int64_t> index(dev(), DType::kI64, {n, cols}, idx);
  Tensor<float> source(dev(), DType::kF32, {n, cols}, src);
  ops::scatter(dev(), self.d, 0, index.d, source.d, ops::ScatterReduce::kSum);
  EXPECT_EQ(self.get(rows * cols), ref);  // same order of additions as the serial reference
}

TEST_F(IndexTest, ScatterReduceMaxMinProdWithNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> src = {3, -1, 2, nan, 5, 4};
  std::vector<int64_t> idx = {0, 0, 1, 2, 1, 0};
  Tensor<int64_t> index(dev(), DType::kI64, {6}, idx);
  Tensor<float> source(dev(), DType::kF32, {6}, src);
  Tensor<float> mx(dev(), DType::kF32, {3}, {0, 0, 0});
  Tensor<float> mn(dev(), DType::kF32, {3}, {0, 0, 0});
  Tensor<float> pr(dev(), DType::kF32, {3}, {1, 1, 1});
  ops::scatter(dev(), mx.d, 0, index.d, source.d, ops::ScatterReduce::kMax);
  ops::scatter(dev(), mn.d, 0, index.d, source.d, ops::ScatterReduce::kMin);
  ops::scatter(dev(), pr.d, 0, index.d, source.d, ops::ScatterReduce::kProd);
  auto a = mx.get(3), b = mn.get(3), c = pr.get(3);
  EXPECT_EQ(a[0], 4.0f);
  EXPECT_EQ(a[1], 5.0f);
  EXPECT_TRUE(std::isnan(a[2]));
  EXPECT_EQ(b[0], -1.0f);
  EXPECT_EQ(b[1], 0.0f);
  EXPECT_TRUE(std::isnan(b[2]));
  EXPECT_EQ(c[0], -12.0f);
  EXPECT_EQ(c[1], 10.0f);
}

TEST_F(IndexTest, BadIndexIsRecordedAndNeverDereferenced) {
  std::vector<int16_t> base = {1, 2, 3, 4, 5, 6};  // 3x2
  Tensor<int16_t> self(dev(), DType::kI16, {3, 2}, base);
  Tensor<int64_t> index(dev(), DType::kI64, {3}, {2, 1000000000, -1});
  Tensor<int16_t> out(dev(), DType::kI16, {3, 2}, {9, 9, 9, 9, 9, 9});
  DeviceBuffer flag(dev(), ops::kIndexErrorBytes);
  dev().stream().fill(flag.address, ops::kIndexErrorBytes, 0);
  ops::index_select(dev(), out.d, self.d, 0, index.d, flag.address);
  EXPECT_EQ(out.get(6), (std::vector<int16_t>{5, 6, 0, 0, 0, 0}));
  auto rec = read_record(dev(), flag.address);
  EXPECT_EQ(rec.claimed, 1u);
  EXPECT_EQ(rec.operand, 0u);
  EXPECT_TRUE(rec.value == 1000000000 || rec.value == -1) << rec.value;
}

TEST_F(IndexTest, IndexAddCopyFill) {
  // self 3x4 int32; index_add_ along dim 1 with alpha 3 and a duplicate index.
  std::vector<int32_t> base(12);
  for (int i = 0; i < 12; ++i) base[i] = i;
  Tensor<int32_t> self(dev(), DType::kI32, {3, 4}, base);
  Tensor<int64_t> index(dev(), DType::kI64, {3}, {3, 0, 3});
  Tensor<int32_t> source(dev(), DType::kI32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  ops::index_accumulate(dev(), self.d, 1, index.d, source.d, ops::ScatterReduce::kSum,
                        Scalar::from_int(3));
  std::vector<int32_t> ref = base;
  for (int r = 0; r < 3; ++r) {
    for (int j = 0; j < 3; ++j) ref[r * 4 + (j == 1 ? 0 : 3)] += 3 * (r * 3 + j + 1);
  }
  EXPECT_EQ(self.get(12), ref);
  // index_copy_ of two rows, then index_fill_ with a negative index.
  Tensor<int64_t> rows(dev(), DType::kI64, {2}, {2, 0});
  Tensor<int32_t> two(dev(), DType::kI32, {2, 4}, {-1, -2, -3, -4, -5, -6, -7, -8});
  ops::index_accumulate(dev(), self.d, 0, rows.d, two.d, ops::ScatterReduce::kNone,
                        Scalar::from_int(1));
  Tensor<int64_t> cols(dev(), DType::kI64, {1}, {-3});
  ops::index_fill(dev(), self.d, 1, cols.d, Scalar::from_double(42.9));
  auto got = self.get(12);
  EXPECT_EQ(got[0], -5);
  EXPECT_EQ(got[1], 42);
  EXPECT_EQ(got[5], 42);
  EXPECT_EQ(got[9], 42);
  EXPECT_EQ(got[11], -4);
  EXPECT_EQ(got[7], ref[7]);
}

TEST_F(IndexTest, AdvancedIndexNonAdjacentAndPutAccumulate) {
  // self 3x4x5 float; x[i, :, j] with i, j of shape 2x2: result 2x2x4 (index dims in front).
  std::vector<float> base = iota_f(60);
  Tensor<float> self(dev(), DType::kF32, {3, 4, 5}, base);
  Tensor<int64_t> i(dev(), DType::kI64, {2, 2}, {0, 2, -1, 1});
  Tensor<int32_t> j(dev(), DType::kI32, {2, 2}, {4, 0, 1, -5});
  std::vector<std::optional<TensorDesc>> idx = {i.d, std::nullopt, j.d};
  EXPECT_EQ(ops::advanced_index_shape(self.d, idx), (std::vector<int64_t>{2, 2, 4}));
  Tensor<float> out(dev(), DType::kF32, {2, 2, 4}, std::vector<float>(16));
  ops::advanced_index(dev(), out.d, self.d, idx);
  auto got = out.get(16);
  int64_t iv[] = {0, 2, 2, 1}, jv[] = {4, 0, 1, 0};
  for (int p = 0; p < 4; ++p) {
    for (int m = 0; m < 4; ++m) EXPECT_EQ(got[p * 4 + m], base[iv[p] * 20 + m * 5 + jv[p]]);
  }
  // Adjacent dims 1, 2 with duplicates, accumulate: values broadcast along dim 0.
  Tensor<int64_t> a(dev(), DType::kI64, {3}, {1, 1, 3});
  Tensor<int64_t> b(dev(), DType::kI64, {3}, {2, 2, 0});
  std::vector<std::optional<TensorDesc>> idx2 = {std::nullopt, a.d, b.d};
  Tensor<float> vals(dev(), DType::kF32, {3}, {0.25f, 0.5f, 8.0f});
  TensorDesc v = vals.d;
  v.sizes = {3, 3};
  v.strides = {0, 1};
  ops::advanced_index_put(dev(), self.d, idx2, v, true);
  auto after = self.get(60);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(after[r * 20 + 1 * 5 + 2], base[r * 20 + 7] + 0.75f);
    EXPECT_EQ(after[r * 20 + 3 * 5 + 0], base[r * 20 + 15] + 8.0f);
  }
}

TEST_F(IndexTest, EmbeddingBackwardPaddingAndFrequencyScale) {
  const int64_t v = 5, dim = 3;
  std::vector<int64_t> idx = {1, 4, 1, 0, 1, 4};  // 2x3
  std::vector<float> grad = iota_f(18, 0.5f);
  Tensor<int64_t> indices(dev(), DType::kI64, {2, 3}, idx);
  Tensor<float> g(dev(), DType::kF32, {2, 3, dim}, grad);
  Tensor<float> gw(dev(), DType::kF32, {v, dim}, std::vector<float>(v * dim, 7.0f));
  DeviceBuffer counts(dev(), v * 8);
  ops::embedding_backward(dev(), gw.d, g.d, indices.d, 0, counts.address);
  std::vector<int> occ(v, 0);
  for (auto k : idx) occ[k]++;
  std::vector<float> ref(v * dim, 0.0f);
  for (size_t t = 0; t < idx.size(); ++t) {
    if (idx[t] == 0) continue;
    for (int c = 0; c < dim; ++c) ref[idx[t] * dim + c] += grad[t * dim + c] * (1.0f / occ[idx[t]]);
  }
  auto got = gw.get(v * dim);
  // Absolute: an index's terms cancel to 0 here, and a GPU's fused multiply-add leaves about 3e-8.
  for (size_t e = 0; e < ref.size(); ++e) EXPECT_NEAR(got[e], ref[e], 1e-6f) << e;
}

TEST_F(IndexTest, WhereBroadcastsAndMaskedFillInPlace) {
  Tensor<uint8_t> cond(dev(), DType::kBool, {3}, {1, 0, 1});
  Tensor<double> a(dev(), DType::kF64, {2, 1}, {10.0, 20.0});
  Tensor<double> out(dev(), DType::kF64, {2, 3}, std::vector<double>(6));
  TensorDesc c = cond.d, av = a.d;
  c.sizes = {2, 3};
  c.strides = {0, 1};
  av.sizes = {2, 3};
  av.strides = {1, 0};
  ops::where(dev(), out.d, {&c, 0}, {&av, 0}, {nullptr, ops::scalar_bits(DType::kF64,
                                                                         Scalar::from_int(-1))});
  EXPECT_EQ(out.get(6), (std::vector<double>{10, -1, 10, 20, -1, 20}));
  std::vector<uint16_t> h = {1, 2, 3, 4, 5, 6};
  Tensor<uint16_t> self(dev(), DType::kI16, {2, 3}, h);
  ops::masked_fill(dev(), self.d, c, Scalar::from_int(-7));
  EXPECT_EQ(self.get(6), (std::vector<uint16_t>{65529, 2, 65529, 65529, 5, 65529}));
}

TEST_F(IndexTest, MaskScanNonzeroSelectScatterAcrossBlocks) {
  const int64_t rows = 7, cols = 1000;  // several scan blocks and a ragged tail
  std::vector<float> x(rows * cols);
  std::mt19937 rng(3);
  for (auto& v : x) {
    uint32_t r = rng() % 10;
    v = r < 6 ? 0.0f : (r == 6 ? -0.0f : (r == 7 ? std::nanf("") : float(rng() % 100) - 50));
  }
  // Read x through its transpose (cols x rows, strides (1, cols)).
  Tensor<float> t(dev(), DType::kF32, {cols, rows}, x, {1, cols});
  DeviceBuffer scratch(dev(), ops::MaskScan::scratch_bytes(rows * cols));
  ops::MaskScan scan(dev(), t.d, scratch.address);
  std::vector<int64_t> ref;
  for (int64_t i = 0; i < cols; ++i) {
    for (int64_t j = 0; j < rows; ++j) {
      float v = x[i + j * cols];
      if (v != 0.0f || std::isnan(v)) {
        ref.push_back(i);
        ref.push_back(j);
      }
    }
  }
  int64_t n = scan.total();
  ASSERT_EQ(n, static_cast<int64_t>(ref.size() / 2));
  Tensor<int64_t> out(dev(), DType::kI64, {n, 2}, std::vector<int64_t>(n * 2));
  scan.write_nonzero(out.d);
  EXPECT_EQ(out.get(n * 2), ref);
  // masked_select / masked_scatter with a bool mask over int64 data.
  std::vector<uint8_t> m(rows * cols);
  std::vector<int64_t> data(rows * cols), sel;
  for (int64_t i = 0; i < rows * cols; ++i) {
    m[i] = (rng() % 3) == 0;
    data[i] = i * 3 - 7;
    if (m[i]) sel.push_back(data[i]);
  }
  Tensor<uint8_t> mask(dev(), DType::kBool, {rows, cols}, m);
  Tensor<int64_t> d(dev(), DType::kI64, {rows, cols}, data);
  ops::MaskScan scan2(dev(), mask.d, scratch.address);
  int64_t k = scan2.total();
  ASSERT_EQ(k, static_cast<int64_t>(sel.size()));
  Tensor<int64_t> picked(dev(), DType::kI64, {k}, std::vector<int64_t>(k));
  scan2.write_select(picked.d, d.d);
  EXPECT_EQ(picked.get(k), sel);
  std::vector<int64_t> src(k + 5);
  for (int64_t i = 0; i < k + 5; ++i) src[i] = -i;
  Tensor<int64_t> s(dev(), DType::kI64, {k + 5}, src);
  scan2.write_scatter(d.d, s.d);
  auto scattered = d.get(rows * cols);
  int64_t r = 0;
  for (int64_t i = 0; i < rows * cols; ++i) {
    ASSERT_EQ(scattered[i], m[i] ? -(r++) : data[i]) << i;
  }
}

TEST_F(IndexTest, TakeAndPutUseRowMajorPositionsOfStridedSelf) {
  std::vector<int32_t> base(12);
  for (int i = 0; i < 12; ++i) base[i] = i * 10;
  Tensor<int32_t> self(dev(), DType::kI32, {4, 3}, base, {1, 4});  // transpose of a 3x4
  Tensor<int64_t> index(dev(), DType::kI64, {2, 2}, {0, 1, -1, 5});
  Tensor<int32_t> out(dev(), DType::kI32, {2, 2}, std::vector<int32_t>(4));
  ops::take(dev(), out.d, self.d, index.d);
  // logical t[r][c] = base[r + 4 c]; flat p -> (p / 3, p % 3)
  EXPECT_EQ(out.get(4), (std::vector<int32_t>{0, 40, 110, 90}));
  Tensor<int32_t> src(dev(), DType::kI32, {2, 2}, {1, 2, 3, 4});
  Tensor<int64_t> dup(dev(), DType::kI64, {2, 2}, {1, 1, -12, 11});
  ops::put(dev(), self.d, dup.d, src.d, true);
  auto got = self.get(12);
  EXPECT_EQ(got[4], 40 + 1 + 2);  // flat 1 = t[0][1] = base[4]
  EXPECT_EQ(got[0], 0 + 3);       // flat -12 wraps to 0
  EXPECT_EQ(got[11], 110 + 4);    // flat 11 = t[3][2] = base[11]
}

TEST_F(IndexTest, OwnerThreadsGiveBitIdenticalAccumulation) {
  // f16 sums round after every update: both schemes must fold in the same order.
  const int rows = 5, cols = 3, n = 300;
  std::mt19937 rng(11);
  std::vector<uint16_t> src(n * cols);
  for (auto& v : src) v = static_cast<uint16_t>(0x3000 + rng() % 0x0C00);  // 0.125 .. 0.6
  std::vector<int64_t> idx(n * cols);
  for (auto& v : idx) v = rng() % rows;
  Tensor<int64_t> index(dev(), DType::kI64, {n, cols}, idx);
  Tensor<uint16_t> source(dev(), DType::kF16, {n, cols}, src);
  std::vector<std::vector<uint16_t>> results;
  for (const char* mode : {"0", "1"}) {
    ConfigOverride owner("VKML_INDEX_OWNER", mode);
    Tensor<uint16_t> self(dev(), DType::kF16, {rows, cols}, std::vector<uint16_t>(15, 0x3C00));
    ops::scatter(dev(), self.d, 0, index.d, source.d, ops::ScatterReduce::kSum);
    results.push_back(self.get(rows * cols));
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_NE(results[0], std::vector<uint16_t>(15, 0x3C00));
}

TEST_F(IndexTest, Complex64SumsProductsAndNonzero) {
  // complex64 elements as interleaved (real, imaginary) floats.
  const int rows = 4, cols = 3, n = 9;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> init(2 * rows * cols), src(2 * n * cols);
  for (auto& v : init) v = u(rng);
  for (auto& v : src) v = u(rng);
  std::vector<int64_t> idx(n * cols);
  for (auto& v : idx) v = rng() % rows;
  Tensor<int64_t> index(dev(), DType::kI64, {n, cols}, idx);
  Tensor<float> source(dev(), DType::kC64, {n, cols}, src);
  // Sums add the parts in index order: exact against the same float additions.
  std::vector<float> ref = init;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < cols; ++j) {
      int64_t to = idx[i * cols + j] * cols + j, from = i * cols + j;
      ref[2 * to] += src[2 * from];
      ref[2 * to + 1] += src[2 * from + 1];
    }
  }
  Tensor<float> sums(dev(), DType::kC64, {rows, cols}, init);
  ops::scatter(dev(), sums.d, 0, index.d, source.d, ops::ScatterReduce::kSum);
  EXPECT_EQ(sums.get(2 * rows * cols), ref);
  // Products as complex numbers, against double precision.
  std::vector<std::complex<double>> prod(rows * cols);
  for (int k = 0; k < rows * cols; ++k) prod[k] = {init[2 * k], init[2 * k + 1]};
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < cols; ++j) {
      int64_t from = i * cols + j;
      prod[idx[from] * cols + j] *= std::complex<double>(src[2 * from], src[2 * from + 1]);
    }
  }
  Tensor<float> prods(dev(), DType::kC64, {rows, cols}, init);
  ops::scatter(dev(), prods.d, 0, index.d, source.d, ops::ScatterReduce::kProd);
  auto got = prods.get(2 * rows * cols);
  for (int k = 0; k < rows * cols; ++k) {
    EXPECT_NEAR(got[2 * k], prod[k].real(), 1e-5 * (1 + std::abs(prod[k]))) << k;
    EXPECT_NEAR(got[2 * k + 1], prod[k].imag(), 1e-5 * (1 + std::abs(prod[k]))) << k;
  }
  // index_add_ with a complex alpha along dim 1 of a transposed self (strides (1, rows)).
  Tensor<float> self(dev(), DType::kC64, {cols, rows}, init, {1, cols});
  Tensor<int64_t> two(dev(), DType::kI64, {2}, {3, 3});
  Tensor<float> add(dev(), DType::kC64, {cols, 2},
                    std::vector<float>(src.begin(), src.begin() + 2 * cols * 2));
  const std::complex<double> alpha(2.0, -0.5);
  ops::index_accumulate(dev(), self.d, 1, two.d, add.d, ops::ScatterReduce::kSum,
                        Scalar::from_complex(alpha.real(), alpha.imag()));
  auto added = self.get(2 * rows * cols);
  for (int c = 0; c < cols; ++c) {
    int64_t at = 3 * cols + c;  // self[c][3] lives at element c + 3 * cols
    std::complex<double> want(init[2 * at], init[2 * at + 1]);
    for (int k = 0; k < 2; ++k) {
      want += alpha * std::complex<double>(src[2 * (c * 2 + k)], src[2 * (c * 2 + k) + 1]);
    }
    EXPECT_NEAR(added[2 * at], want.real(), 1e-5 * (1 + std::abs(want))) << c;
    EXPECT_NEAR(added[2 * at + 1], want.imag(), 1e-5 * (1 + std::abs(want))) << c;
    EXPECT_EQ(added[2 * c], init[2 * c]);  // self[c][0]: untouched
  }
  // nonzero: an element is set where either part is nonzero; -0.0 is zero.
  const float nan = std::nanf("");
  std::vector<float> parts = {0.0f, -0.0f, -0.0f, 0.0f, 0.0f, 1e-45f, nan, 0.0f, -0.0f, -0.0f, 2.0f,
                              -3.0f};
  Tensor<float> mask(dev(), DType::kC64, {6}, parts);
  DeviceBuffer scratch(dev(), ops::MaskScan::scratch_bytes(6));
  ops::MaskScan scan(dev(), mask.d, scratch.address);
  ASSERT_EQ(scan.total(), 3);
  Tensor<int64_t> where(dev(), DType::kI64, {3, 1}, std::vector<int64_t>(3));
  scan.write_nonzero(where.d);
  EXPECT_EQ(where.get(3), (std::vector<int64_t>{2, 3, 5}));
}

TEST(IndexVariants, OwnerThreadsOnlyWhereTheyPay) {
  DeviceCaps gpu, cpu;  // the index policy keys on the device class
  gpu.kind = DeviceKind::kDiscrete;
  gpu.device_class = DeviceClass::kGeneric;
  cpu.kind = DeviceKind::kCpu;
  cpu.device_class = DeviceClass::kCpu;
  EXPECT_TRUE(ops::prefer_owner_threads(gpu, 1, 1000));       // 1-D histogram-like sums
  EXPECT_FALSE(ops::prefer_owner_threads(cpu, 1, 1000));      // lavapipe: the plain walk
  EXPECT_FALSE(ops::prefer_owner_threads(gpu, 512, 50000));   // embedding rows: enough threads
  EXPECT_FALSE(ops::prefer_owner_threads(gpu, 100000, 1));
}

}  // namespace vkml::testing
