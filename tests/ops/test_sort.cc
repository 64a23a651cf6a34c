// Sort family: stable sorts against std::stable_sort for several dtypes, line lengths below and
// above one shared-memory block, strided input, NaN ordering and selections (topk, median); the
// radix sort (forced on short lines too) with skipped constant digits and many tiles.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "test_util.h"
#include "vkml/config.h"
#include "vkml/sort.h"

namespace vkml::testing {
namespace {

using SortTest = DeviceTest;

// CPU reference: a stable sort of positions, NaN largest (descending puts NaN first).
template <typename T>
std::vector<int64_t> reference_order(const std::vector<T>& line, bool descending) {
  std::vector<int64_t> order(line.size());
  std::iota(order.begin(), order.end(), 0);
  auto less = [&](int64_t a, int64_t b) {
    T x = line[a], y = line[b];
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x) || std::isnan(y)) {
        return descending ? (std::isnan(x) && !std::isnan(y)) : (!std::isnan(x) && std::isnan(y));
      }
    }
    return descending ? x > y : x < y;
  };
  std::stable_sort(order.begin(), order.end(), less);
  return order;
}

// Sorts rows x n (row-major) along dim 1 and checks values and indices exactly.
// Values are integers in [lo, lo + span), times step.
template <typename T>
void check_sort(Device& dev, DType dt, int64_t rows, int64_t n, bool descending, uint32_t seed,
                int lo = -10, int span = 21, int64_t step = 1) {
  std::mt19937 rng(seed);
  std::vector<T> host(rows * n);
  for (auto& v : host) v = static_cast<T>((static_cast<int>(rng() % span) + lo) * step);
  if constexpr (std::is_floating_point_v<T>) {
    for (int64_t i = 0; i < rows * n; i += 7) host[i] = std::numeric_limits<T>::quiet_NaN();
    for (int64_t i = 3; i < rows * n; i += 11) host[i] = -std::numeric_limits<T>::infinity();
  }
  DeviceBuffer in(dev, host.size() * sizeof(T)), vals(dev, host.size() * sizeof(T)),
      idx(dev, host.size() * 8);
  dev.stream().upload(host.data(), in.address, host.size() * sizeof(T));
  TensorDesc vd = desc(vals.address, dt, {rows, n}), id = desc(idx.address, DType::kI64, {rows, n});
  ops::SortSelection sel;
  sel.descending = descending;
  ops::sort_lines(dev, desc(in.address, dt, {rows, n}), 1, sel, &vd, &id);
  auto got_v = download<T>(dev, vals.address, host.size());
  auto got_i = download<int64_t>(dev, idx.address, host.size());
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<T> line(host.begin() + r * n, host.begin() + (r + 1) * n);
    auto order = reference_order(line, descending);
    for (int64_t q = 0; q < n; ++q) {
      ASSERT_EQ(got_i[r * n + q], order[q]) << "row " << r << " pos " << q;
      T want = line[order[q]], got = got_v[r * n + q];
      ASSERT_TRUE(want == got || (want != want && got != got));
    }
  }
}

// Sets an environment variable for one scope.
TEST_F(SortTest, FloatShortAndLongLines) {
  ConfigOverride bitonic("VKML_SORT_RADIX_MIN", "1000000000");  // the global merge steps
  check_sort<float>(dev(), DType::kF32, 5, 37, false, 1);
  check_sort<float>(dev(), DType::kF32, 3, 2048, true, 2);
  check_sort<float>(dev(), DType::kF32, 2, 4500, false, 3);
  check_sort<float>(dev(), DType::kF32, 1, 9000, true, 4);
}

TEST_F(SortTest, IntegerAndDoubleLines) {
  ConfigOverride bitonic("VKML_SORT_RADIX_MIN", "1000000000");
  check_sort<int32_t>(dev(), DType::kI32, 4, 100, false, 5);
  check_sort<int64_t>(dev(), DType::kI64, 4, 100, true, 6);
  check_sort<int8_t>(dev(), DType::kI8, 3, 333, false, 7);
  if (dev().caps().fp64_math) check_sort<double>(dev(), DType::kF64, 3, 77, true, 8);
}

// Both radix variants: shared-memory ranking (GPUs) and serial counting (CPU devices).
constexpr const char* kRadixVariants[] = {"0", "1"};

TEST_F(SortTest, RadixSortEveryKeyWidth) {
  ConfigOverride force("VKML_SORT_RADIX_MIN", "1");
  for (const char* serial : kRadixVariants) {
    ConfigOverride variant("VKML_SORT_RADIX_SERIAL", serial);
    check_sort<float>(dev(), DType::kF32, 5, 37, false, 11);
    check_sort<float>(dev(), DType::kF32, 3, 5000, true, 12);
    check_sort<int8_t>(dev(), DType::kI8, 3, 4097, true, 13);
    check_sort<uint8_t>(dev(), DType::kU8, 2, 3000, false, 14, 0, 250);
    check_sort<int16_t>(dev(), DType::kI16, 2, 2500, true, 15, -300, 600);
    check_sort<int32_t>(dev(), DType::kI32, 2, 9000, false, 16, -70000, 140000);
    check_sort<int64_t>(dev(), DType::kI64, 2, 3000, true, 17);
    if (dev().caps().fp64_math) check_sort<double>(dev(), DType::kF64, 2, 2500, false, 18);
  }
}

TEST_F(SortTest, RadixSortSkipsConstantDigits) {
  ConfigOverride force("VKML_SORT_RADIX_MIN", "1");
  for (const char* serial : kRadixVariants) {
    ConfigOverride variant("VKML_SORT_RADIX_SERIAL", serial);
    // Non-negative int64 below 1000: the six upper key bytes are constant on every line
    // (skipped), so the result stays in the first buffer; int32 below 256: three skipped, the
    // result is in the second.
    check_sort<int64_t>(dev(), DType::kI64, 3, 4000, false, 21, 0, 1000);
    check_sort<int32_t>(dev(), DType::kI32, 3, 4000, true, 22, 0, 256);
    check_sort<int16_t>(dev(), DType::kI16, 2, 100, false, 23, 5, 1);  // every digit constant
    // Multiples of 2^16: the two low digits are constant (found by the scan), the top one by
    // the key range.
    check_sort<int32_t>(dev(), DType::kI32, 2, 3000, false, 24, -3, 7, 65536);
  }
}

TEST_F(SortTest, RadixSortManyTilesPerLine) {
  // More than VKML_RADIX_SERIAL_TILES tiles per line: the digit scan runs one workgroup per digit.
  {
    ConfigOverride variant("VKML_SORT_RADIX_SERIAL", "0");
    check_sort<float>(dev(), DType::kF32, 2, 140000, false, 31);
  }
  ConfigOverride variant("VKML_SORT_RADIX_SERIAL", "1");
  check_sort<float>(dev(), DType::kF32, 1, 70 * 8192 + 5, true, 32);
}

TEST_F(SortTest, StridedInputAndTopSelection) {
  // A transposed 6x40 tensor: lines of 6 along dim 0; top 2 of each column, descending.
  const int64_t r = 6, c = 40;
  std::vector<float> host(r * c);
  for (int64_t i = 0; i < r * c; ++i) host[i] = static_cast<float>((i * 37) % 11);
  DeviceBuffer in(dev(), host.size() * 4), vals(dev(), 2 * c * 4), idx(dev(), 2 * c * 8);
  dev().stream().upload(host.data(), in.address, host.size() * 4);
  TensorDesc src = desc(in.address, DType::kF32, {r, c});
  TensorDesc vd = desc(vals.address, DType::kF32, {2, c}),
             id = desc(idx.address, DType::kI64, {2, c});
  ops::SortSelection sel;
  sel.descending = true;
  sel.count = 2;
  ops::sort_lines(dev(), src, 0, sel, &vd, &id);
  auto got_v = download<float>(dev(), vals.address, 2 * c);
  auto got_i = download<int64_t>(dev(), idx.address, 2 * c);
  for (int64_t j = 0; j < c; ++j) {
    std::vector<float> line(r);
    for (int64_t i = 0; i < r; ++i) line[i] = host[i * c + j];
    auto order = reference_order(line, true);
    for (int q = 0; q < 2; ++q) {
      EXPECT_EQ(got_i[q * c + j], order[q]);
      EXPECT_EQ(got_v[q * c + j], line[order[q]]);
    }
  }
}

TEST_F(SortTest, BadArguments) {
  DeviceBuffer in(dev(), 64);
  TensorDesc src = desc(in.address, DType::kF32, {4, 4});
  TensorDesc wrong = desc(in.address, DType::kF32, {4, 3});
  ops::SortSelection sel;
  EXPECT_THROW(ops::sort_lines(dev(), src, 2, sel, &src, nullptr), InvalidArgument);
  EXPECT_THROW(ops::sort_lines(dev(), src, 1, sel, &wrong, nullptr), InvalidArgument);
  sel.start = 3;
  sel.count = 2;
  EXPECT_THROW(ops::sort_lines(dev(), src, 1, sel, nullptr, nullptr), InvalidArgument);
}

}  // namespace
}  // namespace vkml::testing
