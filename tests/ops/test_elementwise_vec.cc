// The elementwise VEC mode (16-byte vector accesses on dense aligned tensors, scalar tail) against
// the FLAT path it stands in for: the same bits for every dtype, with tensor and scalar operands, a
// bool-valued op and unary ops, on inputs spread over the whole exponent range (subnormals,
// overflow to inf) and a size that is no multiple of any vector width.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "ops/elementwise/elementwise_plan.h"
#include "test_util.h"
#include "vkml/elementwise.h"

namespace vkml::testing {
namespace {

using ops::BinaryOp;
using ops::UnaryOp;
using ElementwiseVecTest = DeviceTest;

// Random bytes of n elements of dtype t: floats with any sign, mantissa and finite exponent
// (an all-ones exponent loses its top bit, so no NaN or inf), bools 0 or 1, integers any value.
std::vector<uint8_t> random_elements(DType t, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  const size_t es = dtype_size(t);
  std::vector<uint8_t> bytes(n * es);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  for (int64_t i = 0; i < n; ++i) {
    uint8_t* e = bytes.data() + i * es;
    if (t == DType::kBool) e[0] &= 1;
    if (!dtype_is_float(t)) continue;
    int exp_bits = t == DType::kF64 ? 11 : t == DType::kF16 ? 5 : 8;  // f32 and bf16: 8
    uint64_t bits = 0;
    std::memcpy(&bits, e, es);
    int mant_bits = static_cast<int>(es * 8) - 1 - exp_bits;
    uint64_t exp_mask = ((uint64_t{1} << exp_bits) - 1) << mant_bits;
    if ((bits & exp_mask) == exp_mask) bits &= ~(uint64_t{1} << (mant_bits + exp_bits - 1));
    std::memcpy(e, &bits, es);
  }
  return bytes;
}

TEST_F(ElementwiseVecTest, MatchesFlatPathBitForBit) {
  const int64_t n = 3 * 4096 + 13;
  const DType types[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI8,
                         DType::kU8,  DType::kI16, DType::kI32,  DType::kI64, DType::kBool};
  struct Case {
    bool binary;
    uint32_t op;
    bool scalar_b;
  };
  const Case cases[] = {{true, uint32_t(BinaryOp::kAdd), false},
                        {true, uint32_t(BinaryOp::kMul), true},
                        {true, uint32_t(BinaryOp::kLt), false},
                        {true, uint32_t(BinaryOp::kMaximum), false},
                        {false, uint32_t(UnaryOp::kNeg), false},
                        {false, uint32_t(UnaryOp::kExp), false}};
  for (DType t : types) {
    if (!dev().caps().supports_dtype(t)) continue;
    const uint64_t bytes = n * dtype_size(t);
    DeviceBuffer a(dev(), bytes), b(dev(), bytes), vec(dev(), bytes), flat(dev(), bytes);
    std::vector<uint8_t> ha = random_elements(t, n, 31), hb = random_elements(t, n, 32);
    dev().stream().upload(ha.data(), a.address, bytes);
    dev().stream().upload(hb.data(), b.address, bytes);
    TensorDesc ad = desc(a.address, t, {n}), bd = desc(b.address, t, {n});
    for (const Case& c : cases) {
      const ops::ElementwiseOpInfo& info =
          c.binary ? ops::op_info(BinaryOp(c.op)) : ops::op_info(UnaryOp(c.op));
      bool ok = c.binary ? ops::supports(dev().caps(), BinaryOp(c.op), t)
                         : ops::supports(dev().caps(), UnaryOp(c.op), t);
      if (!ok) continue;
      DType ot = info.out_bool ? DType::kBool : t;
      uint64_t out_bytes = n * dtype_size(ot);
      ops::EwOperand bop{c.scalar_b ? nullptr : &bd, Scalar::from_double(-1.75)};
      auto plan = ops::plan_elementwise(c.binary ? ops::EwKind::kBinary : ops::EwKind::kUnary,
                                        c.op, info, desc(vec.address, ot, {n}), {&ad}, bop,
                                        Scalar::from_double(1.5));
      ASSERT_TRUE(plan.mode & VKML_EW_VEC) << info.name << " " << dtype_name(t);
      ops::record_plan(dev(), plan);
      plan.mode &= ~VKML_EW_VEC;
      plan.params.dst = flat.address;
      plan.writes = {{flat.address, out_bytes}};
      ops::record_plan(dev(), plan);
      auto got = download<uint8_t>(dev(), vec.address, out_bytes);
      auto want = download<uint8_t>(dev(), flat.address, out_bytes);
      ASSERT_EQ(got, want) << info.name << " " << dtype_name(t);
    }
  }
}

}  // namespace
}  // namespace vkml::testing
