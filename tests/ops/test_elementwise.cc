// Elementwise family against CPU references (double, or exact integers): every op and dtype on
// strided and broadcast operands, the 1-D fast path, scalars, zero-size, odd shapes, IEEE edge
// cases and variant planning. Each float op's worst error is a test property
// (`--gtest_output=xml:FILE` writes them).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cfloat>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "ops/elementwise/elementwise_plan.h"
#include "ops/elementwise/elementwise_reference.h"
#include "test_util.h"
#include "vkml/elementwise.h"

namespace vkml::testing {
namespace {

using ops::BinaryOp;
using ops::UnaryOp;
namespace ref = ops::reference;

constexpr DType kTypes[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI8,
                            DType::kU8,  DType::kI16, DType::kI32,  DType::kI64, DType::kBool};

float half_to_float(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0 ? std::ldexp(float(m), -24)
                   : (e == 31 ? (m ? NAN : INFINITY) : std::ldexp(float(m | 1024), e - 25));
  return (h & 0x8000) ? -v : v;
}

// One element of dtype t at p: float kinds as double, integer kinds as int64.
double get_float(DType t, const uint8_t* p) {
  uint64_t b = 0;
  std::memcpy(&b, p, dtype_size(t));
  if (t == DType::kF64) return std::bit_cast<double>(b);
  if (t == DType::kF32) return std::bit_cast<float>(static_cast<uint32_t>(b));
  if (t == DType::kBF16) return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
  return half_to_float(static_cast<uint16_t>(b));
}

int64_t get_int(DType t, const uint8_t* p) {
  uint64_t b = 0;
  std::memcpy(&b, p, dtype_size(t));
  switch (t) {
    case DType::kI8: return static_cast<int8_t>(b);
    case DType::kI16: return static_cast<int16_t>(b);
    case DType::kI32: return static_cast<int32_t>(b);
    case DType::kBool: return b != 0;
    default: return static_cast<int64_t>(b);  // u8 and i64
  }
}

void put(DType t, uint8_t* p, Scalar v) {
  uint64_t bits = ops::scalar_bits(t, v);
  std::memcpy(p, &bits, dtype_size(t));
}

// value rounded to dtype t (nearest even), back as double.
double round_to(DType t, double v) {
  uint8_t buf[8];
  put(t, buf, Scalar::from_double(v));
  return get_float(t, buf);
}

// Integer wrap-around to dtype t (bool: nonzero is true).
int64_t wrap_to(DType t, int64_t v) {
  uint8_t buf[8];
  put(t, buf, Scalar::from_int(v));
  return get_int(t, buf);
}

struct HostTensor {
  DType dtype;
  std::vector<uint8_t> bytes;
  double f(size_t i) const { return get_float(dtype, bytes.data() + i * dtype_size(dtype)); }
  int64_t i(size_t i) const { return get_int(dtype, bytes.data() + i * dtype_size(dtype)); }
};

// Where random inputs come from: uniform in [lo, hi] (log-uniform when `log`; rounded to
// integers when `integral`; negated half the time when `sign`); integers: uniform in [lo, hi]
// clamped to the dtype, never 0 when `sign`.
struct Domain {
  double lo = -4, hi = 4;
  bool log = false, sign = false, integral = false;
};

HostTensor random_tensor(DType t, size_t n, Domain d, uint32_t seed) {
  std::mt19937 rng(seed);
  HostTensor h{t, std::vector<uint8_t>(n * dtype_size(t))};
  for (size_t i = 0; i < n; ++i) {
    Scalar s;
    if (dtype_is_float(t)) {
      double v = d.log ? std::exp(std::uniform_real_distribution<double>(std::log(d.lo),
                                                                        std::log(d.hi))(rng))
                       : std::uniform_real_distribution<double>(d.lo, d.hi)(rng);
      if (d.sign && (rng() & 1)) v = -v;
      s = Scalar::from_double(d.integral ? std::nearbyint(v) : v);
    } else {
      int64_t lo = static_cast<int64_t>(d.lo), hi = static_cast<int64_t>(d.hi);
      if (t == DType::kBool) lo = 0, hi = 1;
      if (t == DType::kU8) lo = std::max<int64_t>(lo, 0), hi = std::min<int64_t>(hi, 255);
      if (t == DType::kI8) lo = std::max<int64_t>(lo, -128), hi = std::min<int64_t>(hi, 127);
      if (t == DType::kI16) lo = std::max<int64_t>(lo, -32768), hi = std::min<int64_t>(hi, 32767);
      int64_t v = std::uniform_int_distribution<int64_t>(lo, hi)(rng);
      if (d.sign && v == 0) v = 1;  // a nonzero divisor
      s = Scalar::from_int(v);
    }
    put(t, h.bytes.data() + i * dtype_size(t), s);
  }
  return h;
}

struct Tol {
  double rtol, atol;
};

Tol tolerance(DType t) {
  switch (t) {
    case DType::kF32: return {1e-5, 1e-6};
    case DType::kF16: return {1e-3, 1e-5};
    case DType::kBF16: return {1e-2, 1e-4};
    default: return {1e-13, 1e-15};
  }
}

bool close(double got, double want, Tol tol) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::abs(got - want) <= tol.atol + tol.rtol * std::abs(want);
}

// Relative error with the absolute tolerance as a floor, for reports.
double rel_error(double got, double want, Tol tol) {
  if (std::isnan(want) || std::isinf(want) || std::isnan(got) || std::isinf(got)) return 0;
  return std::abs(got - want) / std::max(std::abs(want), tol.atol / tol.rtol);
}

// ---- CPU references ------------------------------------------------------------------------

struct RefValue {
  double f = 0;   // float results
  int64_t i = 0;  // integer and bool results
};

struct BinaryCase {
  BinaryOp op;
  Domain fa, fb;          // float inputs
  Domain ia, ib;          // integer inputs
  bool bool_ok = false;   // meaningful on bool tensors
  bool discrete = false;  // reference in the compute precision: rounding decides the result
};

struct UnaryCase {
  UnaryOp op;
  Domain fa, ia;
  bool bool_ok = false;
};

constexpr Domain kAny{-4, 4}, kWide{-10, 10}, kBig{-20, 20}, kTrig{-100, 100};
constexpr Domain kPos{1e-3, 1e3, true}, kUnit{-0.999, 0.999}, kDivisor{0.5, 4, true, true};
constexpr Domain kInt{-1e12, 1e12}, kIntDivisor{-1000, 1000, false, true};
constexpr Domain kPowBase{-5, 5}, kPowExp{-2, 9}, kShift{-2, 70};
constexpr Domain kSmallInt{-2, 2, false, false, true};  // zeros and ties for logic and equality

const std::vector<BinaryCase>& binary_cases() {
  using B = BinaryOp;
  static const std::vector<BinaryCase> cases = {
      {B::kAdd, kAny, kAny, kInt, kInt, true},
      {B::kSub, kAny, kAny, kInt, kInt},
      {B::kMul, kAny, kAny, kInt, kInt, true},
      {B::kDiv, kWide, kDivisor, {}, {}},
      {B::kDivTrunc, kWide, kDivisor, kInt, kIntDivisor, false, true},
      {B::kDivFloor, kWide, kDivisor, kInt, kIntDivisor, false, true},
      {B::kRemainder, kWide, kDivisor, kInt, kIntDivisor, false, true},
      {B::kFmod, kWide, kDivisor, kInt, kIntDivisor, false, true},
      {B::kPow, {0.1, 5}, {-3, 3}, kPowBase, kPowExp},
      {B::kMaximum, kAny, kAny, kInt, kInt, true},
      {B::kMinimum, kAny, kAny, kInt, kInt, true},
      {B::kFmax, kAny, kAny, kInt, kInt, true},
      {B::kFmin, kAny, kAny, kInt, kInt, true},
      {B::kAtan2, kAny, kAny, {}, {}},
      {B::kBitwiseAnd, {}, {}, kInt, kInt, true},
      {B::kBitwiseOr, {}, {}, kInt, kInt, true},
      {B::kBitwiseXor, {}, {}, kInt, kInt, true},
      {B::kLshift, {}, {}, kInt, kShift},
      {B::kRshift, {}, {}, kInt, kShift},
      {B::kLogicalAnd, kSmallInt, kSmallInt, kSmallInt, kSmallInt, true},
      {B::kLogicalOr, kSmallInt, kSmallInt, kSmallInt, kSmallInt, true},
      {B::kLogicalXor, kSmallInt, kSmallInt, kSmallInt, kSmallInt, true},
      {B::kEq, kSmallInt, kSmallInt, kSmallInt, kSmallInt, true},
      {B::kNe, kSmallInt, kSmallInt, kSmallInt, kSmallInt, true},
      {B::kLt, kAny, kAny, kInt, kInt, true},
      {B::kLe, kSmallInt, kSmallInt, kSmallInt, kSmallInt, true},
      {B::kGt, kAny, kAny, kInt, kInt, true},
      {B::kGe, kSmallInt, kSmallInt, kSmallInt, kSmallInt, true},
      {B::kHypot, kWide, kWide, {}, {}},
      {B::kCopysign, kAny, kAny, {}, {}},
      {B::kXlogy, kAny, kPos, {}, {}},
      {B::kRreluNoise, kAny, {0.125, 0.34}, {}, {}},
      {B::kSigmoidBackward, kAny, {0, 1}, {}, {}},
      {B::kTanhBackward, kAny, {-1, 1}, {}, {}},
      {B::kThresholdBackward, kAny, kAny, kInt, {-3, 5}},
      {B::kSiluBackward, kAny, kBig, {}, {}},
      {B::kGeluBackward, kAny, kWide, {}, {}},
      {B::kGeluTanhBackward, kAny, kWide, {}, {}},
  };
  return cases;
}

const std::vector<UnaryCase>& unary_cases() {
  using U = UnaryOp;
  static const std::vector<UnaryCase> cases = {
      {U::kNeg, kAny, kInt},        {U::kAbs, kAny, kInt, true}, {U::kSign, kAny, kInt},
      {U::kReciprocal, kWide, {}},  {U::kSqrt, kPos, {}},        {U::kRsqrt, kPos, {}},
      {U::kExp, kWide, {}},         {U::kExp2, kWide, {}},       {U::kExpm1, kWide, {}},
      {U::kLog, kPos, {}},          {U::kLog2, kPos, {}},        {U::kLog10, kPos, {}},
      {U::kLog1p, {-0.9, 4}, {}},   {U::kSin, kTrig, {}},        {U::kCos, kTrig, {}},
      {U::kTan, {-1.5, 1.5}, {}},   {U::kAsin, kUnit, {}},       {U::kAcos, kUnit, {}},
      {U::kAtan, kWide, {}},        {U::kSinh, kWide, {}},       {U::kCosh, kWide, {}},
      {U::kTanh, kWide, {}},        {U::kAsinh, kBig, {}},       {U::kAcosh, {1, 100, true}, {}},
      {U::kAtanh, kUnit, {}},       {U::kErf, {-5, 5}, {}},      {U::kErfc, {-5, 5}, {}},
      {U::kFloor, kWide, kInt},     {U::kCeil, kWide, kInt},     {U::kRound, kWide, kInt},
      {U::kTrunc, kWide, kInt},     {U::kFrac, kWide, {}},       {U::kSigmoid, kBig, {}},
      {U::kRelu, kAny, kInt},       {U::kSilu, kBig, {}},        {U::kGelu, kWide, {}},
      {U::kGeluTanh, kWide, {}},    {U::kLogicalNot, kSmallInt, kSmallInt, true},
      {U::kBitwiseNot, {}, kInt, true}, {U::kIsnan, kAny, kInt, true},
      {U::kIsinf, kAny, kInt, true}, {U::kIsfinite, kAny, kInt, true},
      {U::kSquare, kAny, kInt},     {U::kHardsigmoid, kWide, {}}, {U::kHardswish, kWide, {}},
      {U::kMish, kBig, {}},         {U::kLogSigmoid, kBig, {}},
  };
  return cases;
}

// The reference of a float-computed binary op, rounded to the out dtype (or a bool).
RefValue float_binary_ref(const BinaryCase& c, DType t, DType ot, double a, double b,
                          double alpha) {
  double v = (c.discrete && t != DType::kF64)
                 ? ref::binary_float<float>(c.op, float(a), float(b), float(alpha))
                 : ref::binary_float<double>(c.op, a, b, alpha);
  // f16/bf16 div_trunc truncates the quotient rounded to the dtype, as PyTorch's CPU does.
  if (c.op == BinaryOp::kDivTrunc && (t == DType::kF16 || t == DType::kBF16)) {
    v = std::trunc(round_to(t, double(float(a) / float(b))));
  }
  if (ot == DType::kBool) return {0, v != 0};
  return {round_to(ot, v), 0};
}

RefValue float_unary_ref(const UnaryCase& c, DType, DType ot, double x) {
  double v = ref::unary_float(c.op, x);
  if (ot == DType::kBool) return {0, v != 0};
  return {round_to(ot, v), 0};
}

// The sweep's layout: out is a contiguous [13, 17, 19]; a is a permuted view of a [19, 17, 13]
// buffer; b is a [17, 19] buffer broadcast along dim 0. Nothing coalesces: the strided path.
constexpr int64_t kD0 = 13, kD1 = 17, kD2 = 19, kN = kD0 * kD1 * kD2;
const std::vector<int64_t> kSizes = {kD0, kD1, kD2};
const std::vector<int64_t> kStridesA = {1, kD0, kD0 * kD1};
const std::vector<int64_t> kStridesB = {0, kD2, 1};
constexpr int64_t kNB = kD1 * kD2;

size_t index_a(int64_t i, int64_t j, int64_t k) { return i + j * kD0 + k * kD0 * kD1; }
size_t index_b(int64_t, int64_t j, int64_t k) { return j * kD2 + k; }

// Compares a downloaded out buffer of dtype `ot` with references; returns the worst error.
template <typename Ref>
double check_all(const char* what, DType compute, DType ot, const std::vector<uint8_t>& got,
                 Ref ref) {
  Tol tol = tolerance(compute);
  double worst = 0;
  int failures = 0;
  for (int64_t i = 0; i < kD0; ++i) {
    for (int64_t j = 0; j < kD1; ++j) {
      for (int64_t k = 0; k < kD2; ++k) {
        size_t o = (i * kD1 + j) * kD2 + k;
        const uint8_t* p = got.data() + o * dtype_size(ot);
        RefValue want = ref(i, j, k);
        bool is_float = dtype_is_float(ot);
        double gf = is_float ? get_float(ot, p) : 0;
        int64_t gi = is_float ? 0 : get_int(ot, p);
        bool ok = is_float ? close(gf, want.f, tol) : gi == want.i;
        if (is_float) worst = std::max(worst, rel_error(gf, want.f, tol));
        if (!ok && ++failures <= 3) {
          ADD_FAILURE() << what << " " << dtype_name(compute) << " at (" << i << "," << j << ","
                        << k << "): got " << (is_float ? std::to_string(gf) : std::to_string(gi))
                        << " want " << (is_float ? std::to_string(want.f) : std::to_string(want.i));
        }
      }
    }
  }
  return worst;
}

// One op on one dtype in the sweep: inputs, device buffers and the reference of each element.
struct SweepJob {
  uint32_t op;  // a BinaryOp or UnaryOp
  std::string name;
  DType t, ot;
  HostTensor a, b;  // b is empty for unary ops
  std::unique_ptr<DeviceBuffer> da, db, out;
  std::function<RefValue(int64_t, int64_t, int64_t)> ref;
};

RefValue sweep_ref(const BinaryCase& c, const SweepJob& j, int64_t i, int64_t k, int64_t l) {
  size_t ia = index_a(i, k, l), ib = index_b(i, k, l);
  if (dtype_is_float(j.t)) return float_binary_ref(c, j.t, j.ot, j.a.f(ia), j.b.f(ib), 1.5);
  return {0, wrap_to(j.ot, ref::binary_int(c.op, j.t, j.a.i(ia), j.b.i(ib), 2))};
}

RefValue sweep_ref(const UnaryCase& c, const SweepJob& j, int64_t i, int64_t k, int64_t l) {
  size_t ia = index_a(i, k, l);
  if (dtype_is_float(j.t)) return float_unary_ref(c, j.t, j.ot, j.a.f(ia));
  return {0, wrap_to(j.ot, ref::unary_int(c.op, j.t, j.a.i(ia)))};
}

// A job for every dtype the device supports `c.op` in (bool only where meaningful).
template <typename Case>
void add_jobs(const DeviceCaps& caps, const Case& c, uint32_t* seed, std::deque<SweepJob>* jobs) {
  const ops::ElementwiseOpInfo& info = ops::op_info(c.op);
  for (DType t : kTypes) {
    if (!ops::supports(caps, c.op, t) || (t == DType::kBool && !c.bool_ok)) continue;
    SweepJob& j = jobs->emplace_back();
    j.op = uint32_t(c.op), j.name = info.name, j.t = t;
    j.ot = info.out_bool ? DType::kBool : t;
    j.a = random_tensor(t, kN, dtype_is_float(t) ? c.fa : c.ia, (*seed)++);
    if constexpr (std::is_same_v<Case, BinaryCase>) {
      j.b = random_tensor(t, kNB, dtype_is_float(t) ? c.fb : c.ib, (*seed)++);
    }
    j.ref = [&c, &j](int64_t i, int64_t k, int64_t l) { return sweep_ref(c, j, i, k, l); };
  }
}

// Records every job, then checks them after a single wait: one submission for the whole sweep.
void run_sweep(Device& dev, std::deque<SweepJob>& jobs,
               const std::function<void(SweepJob&)>& record) {
  for (SweepJob& j : jobs) {
    j.da = std::make_unique<DeviceBuffer>(dev, j.a.bytes.size());
    dev.stream().upload(j.a.bytes.data(), j.da->address, j.a.bytes.size());
    if (!j.b.bytes.empty()) {
      j.db = std::make_unique<DeviceBuffer>(dev, j.b.bytes.size());
      dev.stream().upload(j.b.bytes.data(), j.db->address, j.b.bytes.size());
    }
    j.out = std::make_unique<DeviceBuffer>(dev, kN * dtype_size(j.ot));
    record(j);
  }
  dev.synchronize();
  for (SweepJob& j : jobs) {
    auto got = download<uint8_t>(dev, j.out->address, kN * dtype_size(j.ot));
    double worst = check_all(j.name.c_str(), j.t, j.ot, got, j.ref);
    if (dtype_is_float(j.t)) {
      ::testing::Test::RecordProperty(j.name + "_" + std::string(dtype_name(j.t)),
                                      std::to_string(worst));
    }
  }
}

using ElementwiseTest = DeviceTest;

TEST_F(ElementwiseTest, EveryBinaryOpAndDtypeStridedAndBroadcast) {
  uint32_t seed = 100;
  std::deque<SweepJob> jobs;
  for (const BinaryCase& c : binary_cases()) add_jobs(dev().caps(), c, &seed, &jobs);
  run_sweep(dev(), jobs, [&](SweepJob& j) {
    Scalar alpha = dtype_is_float(j.t) ? Scalar::from_double(1.5) : Scalar::from_int(2);
    ops::binary(dev(), BinaryOp(j.op), desc(j.out->address, j.ot, kSizes),
                desc(j.da->address, j.t, kSizes, kStridesA),
                desc(j.db->address, j.t, kSizes, kStridesB), alpha);
  });
}

TEST_F(ElementwiseTest, EveryUnaryOpAndDtypeStrided) {
  uint32_t seed = 500;
  std::deque<SweepJob> jobs;
  for (const UnaryCase& c : unary_cases()) add_jobs(dev().caps(), c, &seed, &jobs);
  run_sweep(dev(), jobs, [&](SweepJob& j) {
    ops::unary(dev(), UnaryOp(j.op), desc(j.out->address, j.ot, kSizes),
               desc(j.da->address, j.t, kSizes, kStridesA));
  });
}

// Uploads host values of one type as a dtype-t tensor buffer.
template <typename V>
std::vector<uint8_t> pack(DType t, const std::vector<V>& values) {
  std::vector<uint8_t> bytes(values.size() * dtype_size(t));
  for (size_t i = 0; i < values.size(); ++i) {
    Scalar s = std::is_floating_point_v<V> ? Scalar::from_double(static_cast<double>(values[i]))
                                           : Scalar::from_int(static_cast<int64_t>(values[i]));
    put(t, bytes.data() + i * dtype_size(t), s);
  }
  return bytes;
}

TEST_F(ElementwiseTest, LargeContiguousFastPathAndChainedOps) {
  // 100003 elements, 1-D: the FLAT variant. c = a + 1.5 b, then d = c * c reads c right away
  // (hazard tracking must order them), e = exp(a), f = (a < b) into bool; then i32 % 7.
  const int64_t n = 100003;
  HostTensor ha = random_tensor(DType::kF32, n, kAny, 1);
  HostTensor hb = random_tensor(DType::kF32, n, kAny, 2);
  DeviceBuffer a(dev(), n * 4), b(dev(), n * 4), c(dev(), n * 4), d(dev(), n * 4), e(dev(), n * 4);
  DeviceBuffer f(dev(), n);
  dev().stream().upload(ha.bytes.data(), a.address, n * 4);
  dev().stream().upload(hb.bytes.data(), b.address, n * 4);
  auto t = [&](uint64_t addr, DType dt = DType::kF32) { return desc(addr, dt, {n}); };
  TensorDesc ad = t(a.address), bd = t(b.address);
  auto plan = ops::plan_elementwise(ops::EwKind::kBinary, 0, ops::op_info(BinaryOp::kAdd),
                                    t(c.address), {&ad}, {&bd}, Scalar::from_double(1.5));
  EXPECT_EQ(plan.mode, VKML_EW_FLAT | VKML_EW_VEC);  // dense and aligned: 16-byte vectors
  ops::binary(dev(), BinaryOp::kAdd, t(c.address), t(a.address), t(b.address),
              Scalar::from_double(1.5));
  ops::binary(dev(), BinaryOp::kMul, t(d.address), t(c.address), t(c.address));
  ops::unary(dev(), UnaryOp::kExp, t(e.address), t(a.address));
  ops::binary(dev(), BinaryOp::kLt, t(f.address, DType::kBool), t(a.address), t(b.address));
  auto vd = download<float>(dev(), d.address, n), ve = download<float>(dev(), e.address, n);
  auto vf = download<uint8_t>(dev(), f.address, n);
  for (int64_t i = 0; i < n; ++i) {
    float x = static_cast<float>(ha.f(i)), y = static_cast<float>(hb.f(i));
    double cc = double(x + 1.5f * y);
    ASSERT_TRUE(close(vd[i], cc * cc, {1e-5, 1e-6})) << i << ": " << vd[i] << " vs " << cc * cc;
    ASSERT_TRUE(close(ve[i], std::exp(double(x)), {1e-5, 1e-6})) << i;
    ASSERT_EQ(vf[i], x < y ? 1 : 0) << i;
  }
  // Integers on the same path: a every other element (stride 2), b a one-element tensor
  // broadcast with stride 0.
  HostTensor hi = random_tensor(DType::kI32, 2 * n, kInt, 3);
  std::vector<int32_t> seven = {7};
  DeviceBuffer ia(dev(), 2 * n * 4), ib(dev(), 4), io(dev(), n * 4);
  dev().stream().upload(hi.bytes.data(), ia.address, 2 * n * 4);
  dev().stream().upload(seven.data(), ib.address, 4);
  ops::binary(dev(), BinaryOp::kRemainder, t(io.address, DType::kI32),
              desc(ia.address, DType::kI32, {n}, {2}), desc(ib.address, DType::kI32, {n}, {0}));
  auto vi = download<int32_t>(dev(), io.address, n);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(vi[i], ref::binary_int(BinaryOp::kRemainder, DType::kI32, hi.i(2 * i), 7, 1)) << i;
  }
}

TEST_F(ElementwiseTest, ScalarOperands) {
  // Odd shape 3x5x7 with a transposed tensor operand and a scalar on either side.
  const std::vector<int64_t> sizes = {3, 5, 7}, tr = {1, 3, 15};
  const int64_t n = 105;
  struct Case {
    BinaryOp op;
    DType t;
    bool scalar_first;
    Scalar s, alpha;
    Domain dom;
  };
  const Case cases[] = {
      {BinaryOp::kAdd, DType::kF32, false, Scalar::from_double(0.25), Scalar::from_int(-2), kAny},
      {BinaryOp::kSub, DType::kF32, true, Scalar::from_double(3), Scalar::from_double(0.5), kAny},
      {BinaryOp::kPow, DType::kF16, false, Scalar::from_double(2), Scalar::from_double(1), kAny},
      {BinaryOp::kPow, DType::kF32, true, Scalar::from_double(2), Scalar::from_double(1), kWide},
      {BinaryOp::kDiv, DType::kBF16, true, Scalar::from_int(1), Scalar::from_double(1), kDivisor},
      {BinaryOp::kRemainder, DType::kI32, false, Scalar::from_int(-3), Scalar::from_int(1), kInt},
      {BinaryOp::kDivFloor, DType::kI64, false, Scalar::from_int(7), Scalar::from_int(1), kInt},
      {BinaryOp::kSub, DType::kI8, true, Scalar::from_int(5), Scalar::from_int(3), kInt},
      {BinaryOp::kGe, DType::kF64, false, Scalar::from_double(0.5), Scalar::from_int(1), kAny},
      {BinaryOp::kLogicalAnd, DType::kBool, false, Scalar::from_int(1), Scalar::from_int(1), kInt},
  };
  uint32_t seed = 900;
  for (const Case& c : cases) {
    if (!ops::supports(dev().caps(), c.op, c.t)) continue;
    const ops::ElementwiseOpInfo& info = ops::op_info(c.op);
    DType ot = info.out_bool ? DType::kBool : c.t;
    HostTensor hx = random_tensor(c.t, n, c.dom, seed++);
    DeviceBuffer x(dev(), hx.bytes.size()), out(dev(), n * dtype_size(ot));
    dev().stream().upload(hx.bytes.data(), x.address, hx.bytes.size());
    TensorDesc xd = desc(x.address, c.t, sizes, tr), od = desc(out.address, ot, sizes);
    if (c.scalar_first) {
      ops::scalar_binary(dev(), c.op, od, c.s, xd, c.alpha);
    } else {
      ops::binary_scalar(dev(), c.op, od, xd, c.s, c.alpha);
    }
    auto got = download<uint8_t>(dev(), out.address, n * dtype_size(ot));
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t j = 0; j < 5; ++j) {
        for (int64_t k = 0; k < 7; ++k) {
          size_t src = i + j * 3 + k * 15, o = (i * 5 + j) * 7 + k;
          const uint8_t* p = got.data() + o * dtype_size(ot);
          std::string at = std::string(info.name) + " " + std::string(dtype_name(c.t)) + " at " +
                           std::to_string(o);
          if (dtype_is_float(c.t)) {
            double v = hx.f(src), sv = c.s.is_float ? c.s.f : double(c.s.i);
            double al = c.alpha.is_float ? c.alpha.f : double(c.alpha.i);
            double want = c.scalar_first ? ref::binary_float<double>(c.op, sv, v, al)
                                         : ref::binary_float<double>(c.op, v, sv, al);
            if (ot == DType::kBool) {
              ASSERT_EQ(get_int(ot, p), want != 0) << at;
            } else {
              ASSERT_TRUE(close(get_float(ot, p), round_to(ot, want), tolerance(c.t)))
                  << at << ": " << get_float(ot, p) << " vs " << want;
            }
          } else {
            int64_t v = hx.i(src), sv = c.s.i, al = c.alpha.i;
            int64_t want = c.scalar_first ? ref::binary_int(c.op, c.t, sv, v, al)
                                          : ref::binary_int(c.op, c.t, v, sv, al);
            ASSERT_EQ(get_int(ot, p), wrap_to(ot, want)) << at;
          }
        }
      }
    }
  }
}

TEST_F(ElementwiseTest, ZeroSizeRecordsNothing) {
  DeviceBuffer buf(dev(), 256);
  uint64_t before = dev().stream().dispatches_recorded();
  TensorDesc z = desc(buf.address, DType::kF32, {4, 0, 3});
  ops::binary(dev(), BinaryOp::kAdd, z, z, z);
  ops::binary_scalar(dev(), BinaryOp::kMul, z, z, Scalar::from_double(2));
  ops::unary(dev(), UnaryOp::kExp, z, z);
  ops::binary(dev(), BinaryOp::kEq, desc(buf.address, DType::kBool, {0}),
              desc(buf.address, DType::kI64, {0}), desc(buf.address, DType::kI64, {0}));
  EXPECT_EQ(dev().stream().dispatches_recorded(), before);
}

TEST_F(ElementwiseTest, StridedOutputBroadcastAndInPlace) {
  // out is a transposed view (3x5x7 written with strides {1, 3, 15}); b has size-1 dims
  // broadcast with stride 0; then out *= -2 in place, through the same strided view.
  const std::vector<int64_t> sizes = {3, 5, 7};
  const int64_t n = 105;
  HostTensor ha = random_tensor(DType::kF32, n, kAny, 7);
  HostTensor hb = random_tensor(DType::kF32, 7, kAny, 8);
  DeviceBuffer a(dev(), n * 4), b(dev(), 7 * 4), out(dev(), n * 4);
  dev().stream().upload(ha.bytes.data(), a.address, n * 4);
  dev().stream().upload(hb.bytes.data(), b.address, 7 * 4);
  TensorDesc od = desc(out.address, DType::kF32, sizes, {1, 3, 15});
  ops::binary(dev(), BinaryOp::kHypot, od, desc(a.address, DType::kF32, sizes),
              desc(b.address, DType::kF32, sizes, {0, 0, 1}));
  ops::binary_scalar(dev(), BinaryOp::kMul, od, od, Scalar::from_double(-2));
  auto got = download<float>(dev(), out.address, n);
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 5; ++j) {
      for (int64_t k = 0; k < 7; ++k) {
        double want = -2 * std::hypot(ha.f((i * 5 + j) * 7 + k), hb.f(k));
        ASSERT_TRUE(close(got[i + j * 3 + k * 15], want, {1e-5, 1e-6})) << i << j << k;
      }
    }
  }
}

TEST_F(ElementwiseTest, SixtyFourBitIndexPath) {
  // Tensors this small normally take the 32-bit index variant; clear the bit to run the other.
  const std::vector<int64_t> sizes = {6, 11};
  HostTensor ha = random_tensor(DType::kI64, 66, kInt, 11);
  HostTensor hb = random_tensor(DType::kI64, 66, kInt, 12);
  DeviceBuffer a(dev(), 66 * 8), b(dev(), 66 * 8), out(dev(), 66 * 8);
  dev().stream().upload(ha.bytes.data(), a.address, 66 * 8);
  dev().stream().upload(hb.bytes.data(), b.address, 66 * 8);
  TensorDesc od = desc(out.address, DType::kI64, sizes);
  TensorDesc ad = desc(a.address, DType::kI64, sizes, {1, 6});
  TensorDesc bd = desc(b.address, DType::kI64, sizes);
  auto plan = ops::plan_elementwise(ops::EwKind::kBinary, uint32_t(BinaryOp::kBitwiseXor),
                                    ops::op_info(BinaryOp::kBitwiseXor), od, {&ad}, {&bd},
                                    Scalar::from_int(1));
  ASSERT_EQ(plan.mode, VKML_EW_INDEX32);
  plan.mode = 0;
  ops::record_plan(dev(), plan);
  auto got = download<int64_t>(dev(), out.address, 66);
  for (int64_t i = 0; i < 6; ++i) {
    for (int64_t j = 0; j < 11; ++j) ASSERT_EQ(got[i * 11 + j], ha.i(i + j * 6) ^ hb.i(i * 11 + j));
  }
}

// IEEE special values through every float binary op with a std:: reference in float.
TEST_F(ElementwiseTest, FloatBinarySpecialValues) {
  const float inf = INFINITY, nan = NAN;
  const std::vector<float> vals = {0.f, -0.f, 1.f, -1.f, 2.5f, -2.5f, 3.f, -7.f, 0.5f, 1e-3f,
                                   1e30f, -1e30f, inf, -inf, nan};
  const int64_t m = static_cast<int64_t>(vals.size()), n = m * m;
  std::vector<float> av, bv;
  for (float x : vals) {
    for (float y : vals) av.push_back(x), bv.push_back(y);
  }
  DeviceBuffer a(dev(), n * 4), b(dev(), n * 4), out(dev(), n * 4);
  dev().stream().upload(av.data(), a.address, n * 4);
  dev().stream().upload(bv.data(), b.address, n * 4);
  const BinaryOp binops[] = {BinaryOp::kDiv,      BinaryOp::kDivTrunc, BinaryOp::kDivFloor,
                             BinaryOp::kRemainder, BinaryOp::kFmod,    BinaryOp::kPow,
                             BinaryOp::kMaximum,  BinaryOp::kMinimum,  BinaryOp::kFmax,
                             BinaryOp::kFmin,     BinaryOp::kAtan2,    BinaryOp::kHypot,
                             BinaryOp::kCopysign, BinaryOp::kXlogy};
  for (BinaryOp op : binops) {
    ops::binary(dev(), op, desc(out.address, DType::kF32, {n}), desc(a.address, DType::kF32, {n}),
                desc(b.address, DType::kF32, {n}));
    auto got = download<float>(dev(), out.address, n);
    bool ties = op == BinaryOp::kMaximum || op == BinaryOp::kMinimum || op == BinaryOp::kFmax ||
                op == BinaryOp::kFmin;
    for (int64_t i = 0; i < n; ++i) {
      float want = ref::binary_float<float>(op, av[i], bv[i], 1.f);
      bool ok = close(got[i], want, {2e-7, 0}) &&
                (ties || want != 0 || std::signbit(got[i]) == std::signbit(want));
      EXPECT_TRUE(ok) << ops::op_info(op).name << "(" << av[i] << ", " << bv[i] << ") = " << got[i]
                      << ", want " << want;
    }
  }
}

// Whether the host's sin reduces huge arguments correctly (MinGW's x87 fsin does not at 2^63 and
// above); where it does not, the references of sin, cos and tan at such inputs are skipped. The
// argument is volatile so that the compiler cannot fold the call with its own exact library.
static bool host_trig_reduces_huge_arguments() {
  volatile double x = 1e22;
  return std::abs(std::sin(x) - (-0.8522008497671888)) < 1e-12;
}

// IEEE special values through every float unary op, against double references rounded to f32.
TEST_F(ElementwiseTest, FloatUnarySpecialValues) {
  const bool huge_trig = host_trig_reduces_huge_arguments();
  const float inf = INFINITY, nan = NAN;
  const std::vector<float> vals = {0.f,   -0.f,   1.f,    -1.f,  0.5f,  -0.5f, 2.5f,
                                   -2.5f, 1e-7f,  -1e-7f, 1e-30f, 100.f, -100.f, 1e30f,
                                   -1e30f, inf,   -inf,   nan};
  const int64_t n = static_cast<int64_t>(vals.size());
  DeviceBuffer x(dev(), n * 4), out(dev(), n * 4);
  dev().stream().upload(vals.data(), x.address, n * 4);
  for (const UnaryCase& c : unary_cases()) {
    const ops::ElementwiseOpInfo& info = ops::op_info(c.op);
    if (!info.has_float) continue;
    DType ot = info.out_bool ? DType::kBool : DType::kF32;
    ops::unary(dev(), c.op, desc(out.address, ot, {n}), desc(x.address, DType::kF32, {n}));
    auto got = download<uint8_t>(dev(), out.address, n * dtype_size(ot));
    const std::string name(info.name);
    const bool trig = name == "sin" || name == "cos" || name == "tan";
    for (int64_t i = 0; i < n; ++i) {
      if (trig && !huge_trig && std::isfinite(vals[i]) && std::abs(vals[i]) >= 0x1p63f) continue;
      RefValue want = float_unary_ref(c, DType::kF32, ot, vals[i]);
      if (ot == DType::kBool) {
        EXPECT_EQ(got[i], want.i) << info.name << "(" << vals[i] << ")";
        continue;
      }
      float g = get_float(ot, got.data() + i * 4);
      // Subnormal results may flush to zero on GPUs (and do in PyTorch's vectorised exp).
      bool ok = close(g, want.f, {3e-7, FLT_MIN}) &&
                (want.f != 0 || std::signbit(g) == std::signbit(want.f));
      EXPECT_TRUE(ok) << info.name << "(" << vals[i] << ") = " << g << ", want " << want.f;
    }
  }
}

TEST_F(ElementwiseTest, IntegerEdgeCases) {
  const int64_t kMin32 = std::numeric_limits<int32_t>::min();
  const int64_t kMin64 = std::numeric_limits<int64_t>::min();
  struct Case {
    BinaryOp op;
    DType t;
    std::vector<int64_t> a, b, want;
  };
  const Case cases[] = {
      {BinaryOp::kDivTrunc, DType::kI32, {kMin32, -7, 7}, {-1, 2, -2}, {kMin32, -3, -3}},
      {BinaryOp::kDivFloor, DType::kI32, {kMin32, -7, 7}, {-1, 2, -2}, {kMin32, -4, -4}},
      {BinaryOp::kRemainder, DType::kI16, {-7, 7, -8}, {2, -2, 4}, {1, -1, 0}},
      {BinaryOp::kFmod, DType::kI8, {-7, 7, -128}, {2, -2, -1}, {-1, 1, 0}},
      {BinaryOp::kLshift, DType::kI64, {-5, -5, -5, -5, 3}, {1, 63, 64, -1, 2},
       {-10, kMin64, 0, 0, 12}},
      {BinaryOp::kRshift, DType::kI64, {-5, -5, -5, 5}, {1, 63, 64, -1}, {-3, -1, -1, 0}},
      {BinaryOp::kLshift, DType::kI8, {1, 3, 1}, {7, 1, 8}, {-128, 6, 0}},
      {BinaryOp::kRshift, DType::kU8, {200, 200, 255}, {3, 8, 7}, {25, 0, 1}},
      {BinaryOp::kPow, DType::kI32, {2, -1, 1, 3, -2, 0}, {-1, -3, -5, 4, 31, 0},
       {0, -1, 1, 81, kMin32, 1}},
      {BinaryOp::kMul, DType::kU8, {200, 16}, {2, 16}, {144, 0}},
  };
  for (const Case& c : cases) {
    const int64_t n = static_cast<int64_t>(c.a.size());
    DeviceBuffer a(dev(), n * 8), b(dev(), n * 8), out(dev(), n * 8);
    auto ab = pack(c.t, c.a), bb = pack(c.t, c.b);
    dev().stream().upload(ab.data(), a.address, ab.size());
    dev().stream().upload(bb.data(), b.address, bb.size());
    ops::binary(dev(), c.op, desc(out.address, c.t, {n}), desc(a.address, c.t, {n}),
                desc(b.address, c.t, {n}));
    auto got = download<uint8_t>(dev(), out.address, n * dtype_size(c.t));
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(get_int(c.t, got.data() + i * dtype_size(c.t)), c.want[i])
          << ops::op_info(c.op).name << " " << dtype_name(c.t) << "(" << c.a[i] << ", " << c.b[i]
          << ")";
    }
  }
  // Division by zero is the caller's to reject; here it must only not fault (x / 0 gives 0).
  std::vector<int32_t> ones = {1, -1, 0}, zeros = {0, 0, 0};
  DeviceBuffer a(dev(), 12), b(dev(), 12), out(dev(), 12);
  dev().stream().upload(ones.data(), a.address, 12);
  dev().stream().upload(zeros.data(), b.address, 12);
  for (BinaryOp op : {BinaryOp::kDivTrunc, BinaryOp::kDivFloor, BinaryOp::kRemainder}) {
    ops::binary(dev(), op, desc(out.address, DType::kI32, {3}), desc(a.address, DType::kI32, {3}),
                desc(b.address, DType::kI32, {3}));
  }
  EXPECT_EQ(download<int32_t>(dev(), out.address, 3).size(), 3u);
}

TEST(ElementwisePlan, VariantAndModeChoice) {
  using ops::EwKind;
  auto plan = [](auto op, const TensorDesc& out, const TensorDesc* a, const TensorDesc* b,
                 Scalar s = Scalar::from_double(2)) {
    bool binary = std::is_same_v<decltype(op), BinaryOp>;
    return ops::plan_elementwise(binary ? EwKind::kBinary : EwKind::kUnary, uint32_t(op),
                                 ops::op_info(op), out, {a, s}, {b, s}, Scalar::from_double(1));
  };
  TensorDesc c = desc(0x1000, DType::kF32, {4, 6}), t = desc(0x2000, DType::kF32, {4, 6}, {1, 4});
  TensorDesc row = desc(0x3000, DType::kF32, {4, 6}, {0, 1});
  TensorDesc one = desc(0x4000, DType::kF32, {4, 6}, {0, 0});
  auto p = plan(BinaryOp::kAdd, c, &c, &c);
  EXPECT_EQ(p.shader, "ew_binary_f32_basic");
  EXPECT_EQ(p.mode, VKML_EW_FLAT);
  EXPECT_EQ(p.params.ndim, 1u);
  EXPECT_EQ(p.params.sizes[0], 24);
  EXPECT_EQ(p.reads.size(), 2u);
  p = plan(BinaryOp::kMul, c, &c, &one);  // broadcast one-element tensor: still 1-D
  EXPECT_EQ(p.mode, VKML_EW_FLAT);
  EXPECT_EQ(p.params.b_strides[0], 0);
  p = plan(BinaryOp::kMul, c, &t, &row);  // transposed and broadcast: strided, 32-bit index
  EXPECT_EQ(p.mode, VKML_EW_INDEX32);
  EXPECT_EQ(p.params.ndim, 2u);
  p = plan(BinaryOp::kPow, c, &c, nullptr, Scalar::from_double(0.5));
  EXPECT_EQ(p.shader, "ew_binary_f32_exp");
  EXPECT_EQ(p.mode, VKML_EW_FLAT | VKML_EW_SCALAR_B);
  EXPECT_EQ(p.params.scalar, ops::encode_scalar(DType::kF32, Scalar::from_double(0.5)));
  EXPECT_EQ(p.reads.size(), 1u);
  TensorDesc h = desc(0x1000, DType::kF16, {4, 6});
  EXPECT_EQ(plan(UnaryOp::kErf, h, &h, nullptr).shader, "ew_unary_f16_erf");
  TensorDesc i = desc(0x1000, DType::kI32, {4, 6}), bo = desc(0x5000, DType::kBool, {4, 6});
  EXPECT_EQ(plan(BinaryOp::kLt, bo, &i, &i).shader, "ew_binary_i32");
  EXPECT_EQ(plan(UnaryOp::kSqrt, c, &c, nullptr).mode, VKML_EW_FLAT);
  TensorDesc z = desc(0x1000, DType::kF32, {0, 3});
  EXPECT_EQ(plan(BinaryOp::kAdd, z, &z, &z).numel, 0);
  // Errors: shapes, dtypes, out dtype of comparisons, too many dims.
  EXPECT_THROW(plan(BinaryOp::kAdd, c, &c, &i), InvalidArgument);
  EXPECT_THROW(plan(BinaryOp::kLt, c, &c, &c), InvalidArgument);
  EXPECT_THROW(plan(BinaryOp::kAdd, c, &c, &bo), InvalidArgument);
  TensorDesc small = desc(0x1000, DType::kF32, {4, 5});
  EXPECT_THROW(plan(BinaryOp::kAdd, c, &small, &c), InvalidArgument);
  std::vector<int64_t> s9(9, 2), st9(9);
  for (int d = 0; d < 9; ++d) st9[d] = int64_t{1} << (2 * d);  // every other element: no merging
  TensorDesc big = desc(0x1000, DType::kF32, s9, st9), bigc = desc(0x9000, DType::kF32, s9);
  EXPECT_THROW(plan(UnaryOp::kNeg, bigc, &big, nullptr), NotSupported);
  EXPECT_EQ(plan(UnaryOp::kNeg, bigc, &bigc, nullptr).mode, VKML_EW_FLAT);  // merges to 1-D
  // VEC: dense contiguous operands at 16-byte aligned addresses, 4096 elements or more; a scalar
  // operand and a bool out are fine; a misaligned, strided or small operand keeps FLAT/strided.
  TensorDesc v = desc(0x10000, DType::kF16, {64, 100}), w = desc(0x20000, DType::kF16, {64, 100});
  constexpr uint32_t kVec = VKML_EW_FLAT | VKML_EW_VEC;
  EXPECT_EQ(plan(BinaryOp::kAdd, v, &v, &w).mode, kVec);
  EXPECT_EQ(plan(BinaryOp::kMul, v, &w, nullptr).mode, kVec | VKML_EW_SCALAR_B);
  EXPECT_EQ(plan(UnaryOp::kExp, v, &w, nullptr).mode, kVec);
  TensorDesc vb = desc(0x30000, DType::kBool, {64, 100});
  EXPECT_EQ(plan(BinaryOp::kLt, vb, &v, &w).mode, kVec);
  TensorDesc off = desc(0x20002, DType::kF16, {64, 100});  // one element in: not aligned
  EXPECT_EQ(plan(BinaryOp::kAdd, v, &v, &off).mode, VKML_EW_FLAT);
  EXPECT_EQ(plan(BinaryOp::kAdd, off, &v, &w).mode, VKML_EW_FLAT);
  TensorDesc vt = desc(0x20000, DType::kF16, {64, 100}, {1, 64});
  EXPECT_EQ(plan(BinaryOp::kAdd, v, &v, &vt).mode, VKML_EW_INDEX32);
  TensorDesc tiny = desc(0x10000, DType::kF16, {4095});
  EXPECT_EQ(plan(BinaryOp::kAdd, tiny, &tiny, &tiny).mode, VKML_EW_FLAT);
  EXPECT_EQ(ops::vector_width(DType::kF32), 4u);
  EXPECT_EQ(ops::vector_width(DType::kBF16), 8u);
  EXPECT_EQ(ops::vector_width(DType::kI8), 16u);
  EXPECT_EQ(ops::vector_width(DType::kF64), 2u);
}

TEST(ElementwisePlan, TableMetadataAndDtypeSupport) {
  EXPECT_EQ(ops::op_info(BinaryOp::kDivFloor).name, "div_floor");
  EXPECT_EQ(ops::op_info(UnaryOp::kLogicalNot).name, "logical_not");
  EXPECT_TRUE(ops::op_info(BinaryOp::kGe).out_bool);
  EXPECT_FALSE(ops::op_info(BinaryOp::kAdd).out_bool);
  EXPECT_EQ(ops::kNumBinaryOps, uint32_t(BinaryOp::kRreluNoise) + 1);
  EXPECT_EQ(ops::kNumUnaryOps, uint32_t(UnaryOp::kAiryAi) + 1);
  DeviceCaps caps;
  caps.storage_16bit = caps.storage_8bit = caps.int64_math = true;
  EXPECT_TRUE(ops::supports(caps, BinaryOp::kAdd, DType::kBF16));
  EXPECT_FALSE(ops::supports(caps, BinaryOp::kAdd, DType::kF64));  // no fp64 arithmetic
  EXPECT_FALSE(ops::supports(caps, BinaryOp::kBitwiseAnd, DType::kF32));
  EXPECT_FALSE(ops::supports(caps, UnaryOp::kSqrt, DType::kI32));
  EXPECT_TRUE(ops::supports(caps, UnaryOp::kBitwiseNot, DType::kBool));
  caps.fp64_math = true;
  EXPECT_TRUE(ops::supports(caps, UnaryOp::kErf, DType::kF64));
  caps.storage_8bit = false;
  EXPECT_FALSE(ops::supports(caps, BinaryOp::kEq, DType::kF32));  // bool out needs 8-bit storage
  EXPECT_EQ(ops::encode_scalar(DType::kI32, Scalar::from_double(-2.7)), uint64_t(-2));
  EXPECT_EQ(ops::encode_scalar(DType::kBool, Scalar::from_double(0.1)), 1u);
  EXPECT_EQ(ops::encode_scalar(DType::kBF16, Scalar::from_double(1.0)), 0x3F800000u);
}

TEST_F(ElementwiseTest, UnsupportedDtypeThrows) {
  DeviceBuffer buf(dev(), 64);
  TensorDesc f = desc(buf.address, DType::kF32, {4});
  EXPECT_THROW(ops::binary(dev(), BinaryOp::kBitwiseAnd, f, f, f), NotSupported);
  TensorDesc i = desc(buf.address, DType::kI32, {4});
  EXPECT_THROW(ops::unary(dev(), UnaryOp::kExp, i, i), NotSupported);
  EXPECT_THROW(ops::unary(dev(), static_cast<UnaryOp>(ops::kNumUnaryOps), f, f), InvalidArgument);
}

}  // namespace
}  // namespace vkml::testing
