#include "ops/elementwise/elementwise_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "ops/launch.h"
#include "vkml/config.h"
#include "vkml/errors.h"

namespace vkml::ops {

uint64_t encode_scalar(DType t, Scalar v) {
  if (t == DType::kF64) {
    double d = v.is_float ? v.f : static_cast<double>(v.i);
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    return bits;
  }
  if (dtype_is_float(t)) {
    float f = v.is_float ? static_cast<float>(v.f) : static_cast<float>(v.i);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return bits;
  }
  if (t == DType::kBool) return (v.is_float ? v.f != 0.0 : v.i != 0) ? 1 : 0;
  if (!v.is_float) return static_cast<uint64_t>(v.i);
  // Saturate instead of the undefined behaviour of casting an out-of-range double.
  constexpr double kLimit = 9.2233720368547758e18;
  double d = std::isnan(v.f) ? 0.0 : std::trunc(v.f);
  if (d >= kLimit) return static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (d <= -kLimit) return static_cast<uint64_t>(std::numeric_limits<int64_t>::min());
  return static_cast<uint64_t>(static_cast<int64_t>(d));
}

namespace {

void check_layout(const TensorDesc& t, const TensorDesc& out, const char* what) {
  if (t.strides.size() != t.sizes.size()) {
    throw InvalidArgument(std::string("vkml: elementwise ") + what + " has " +
                          std::to_string(t.strides.size()) + " strides for " +
                          std::to_string(t.sizes.size()) + " dims");
  }
  if (t.sizes != out.sizes) {
    throw InvalidArgument(std::string("vkml: elementwise ") + what + " " + t.describe() +
                          " is not broadcast to out " + out.describe());
  }
}

// The VEC mode pays off once there are a few vectors per thread group; smaller tensors keep the
// plain path (and its already compiled pipeline).
constexpr int64_t kVectorMinNumel = 4096;

// Dense contiguous operands (stride 1 after coalescing; scalars have no tensor) at 16-byte
// aligned addresses, and enough elements.
bool vector_eligible(int64_t numel, size_t ndim,
                     std::initializer_list<const std::vector<int64_t>*> strides,
                     std::initializer_list<const TensorDesc*> tensors) {
  if (numel < kVectorMinNumel || ndim != 1) return false;
  auto stride = strides.begin();
  for (const TensorDesc* t : tensors) {
    const std::vector<int64_t>* s = *stride++;
    if (!t) continue;
    if ((*s)[0] != 1 || t->address % 16 != 0) return false;
  }
  return true;
}

}  // namespace

uint32_t vector_width(DType t) { return static_cast<uint32_t>(16 / dtype_size(t)); }

ElementwisePlan plan_elementwise(EwKind kind, uint32_t op, const ElementwiseOpInfo& info,
                                 const TensorDesc& out, const EwOperand& a, const EwOperand& b,
                                 Scalar alpha, const TensorDesc* tc, Scalar beta,
                                 Scalar gamma) {
  const bool binary = kind == EwKind::kBinary;
  if (tc && !binary) throw InvalidArgument("vkml: a unary elementwise op has no operand c");
  const TensorDesc* ta = a.tensor;
  const TensorDesc* tb = binary ? b.tensor : nullptr;
  if (!ta && !tb) throw InvalidArgument("vkml: elementwise op needs a tensor operand");
  check_layout(out, out, "out");
  if (ta) check_layout(*ta, out, "a");
  if (tb) check_layout(*tb, out, "b");
  if (tc) check_layout(*tc, out, "c");
  ElementwisePlan plan;
  plan.compute = ta ? ta->dtype : tb->dtype;
  for (const TensorDesc* t : {tb, tc}) {
    if (t && t->dtype != plan.compute) {
      throw InvalidArgument("vkml: elementwise operands differ in dtype: " +
                            (ta ? ta->describe() : tb->describe()) + " and " + t->describe());
    }
  }
  DType want = info.out_bool ? DType::kBool : plan.compute;
  if (out.dtype != want) {
    throw InvalidArgument("vkml: elementwise out " + out.describe() + " should be " +
                          std::string(dtype_name(want)));
  }
  plan.op = op;
  plan.numel = out.numel();
  // Float variants hold one group of rows each (see shaders.cmake); integer ones hold all.
  plan.shader = std::string(binary ? "ew_binary_" : "ew_unary_") +
                std::string(dtype_name(plan.compute));
  if (dtype_is_float(plan.compute)) plan.shader += "_" + std::string(info.group);
  if (plan.numel == 0) return plan;

  // Scalars take zero strides, which merge with anything and keep the coalescing of the rest.
  std::vector<int64_t> so = out.strides;
  std::vector<int64_t> sa = ta ? ta->strides : std::vector<int64_t>(out.sizes.size(), 0);
  std::vector<int64_t> sb = tb ? tb->strides : std::vector<int64_t>(out.sizes.size(), 0);
  std::vector<int64_t> sc = tc ? tc->strides : std::vector<int64_t>(out.sizes.size(), 0);
  std::vector<int64_t> sizes = coalesce_dims(out.sizes, {&so, &sa, &sb, &sc});
  if (sizes.size() > VKML_EW_MAX_DIMS) {
    throw NotSupported("vkml: elementwise tensors with more than " +
                       std::to_string(VKML_EW_MAX_DIMS) + " non-mergeable dimensions");
  }
  ElementwiseParams& p = plan.params;
  p.numel = plan.numel;
  p.ndim = static_cast<uint32_t>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    p.sizes[d] = sizes[d];
    p.dst_strides[d] = so[d];
    p.a_strides[d] = sa[d];
    p.b_strides[d] = sb[d];
    p.c_strides[d] = sc[d];
  }
  p.dst = out.address;
  p.a = ta ? ta->address : 0;
  p.b = tb ? tb->address : 0;
  p.c = tc ? tc->address : 0;
  p.alpha = encode_scalar(plan.compute, alpha);
  p.beta = encode_scalar(plan.compute, beta);
  p.gamma = encode_scalar(plan.compute, gamma);
  if (tc) plan.mode |= VKML_EW_HAS_C;
  if (!ta) {
    plan.mode |= VKML_EW_SCALAR_A;
    p.scalar = encode_scalar(plan.compute, a.scalar);
  }
  if (binary && !tb) {
    plan.mode |= VKML_EW_SCALAR_B;
    p.scalar = encode_scalar(plan.compute, b.scalar);
  }
  // One dim (or none): offsets are i * stride, no division at all.
  if (sizes.size() <= 1) {
    plan.mode |= VKML_EW_FLAT;
    if (vector_eligible(plan.numel, sizes.size(), {&so, &sa, &sb, &sc}, {&out, ta, tb, tc})) {
      plan.mode |= VKML_EW_VEC;
    }
  } else if (plan.numel < (int64_t{1} << 31)) {
    plan.mode |= VKML_EW_INDEX32;
  }
  if (ta) plan.reads.push_back({ta->address, ta->span_bytes()});
  if (tb) plan.reads.push_back({tb->address, tb->span_bytes()});
  if (tc) plan.reads.push_back({tc->address, tc->span_bytes()});
  plan.writes.push_back({out.address, out.span_bytes()});
  return plan;
}

// A VEC dispatch of more than VKML_EW_SPREAD (2048) workgroups gets about a quarter as many (at
// least that many), so each thread has the kernels' EW_UNROLL (4) vectors in flight instead of
// one and arithmetic hides behind the loads. Measurements: docs/design/elementwise.md#spread.
namespace {
int64_t spread_groups() { return config().ew_spread; }
}  // namespace

void record_plan(Device& dev, const ElementwisePlan& plan) {
  if (plan.numel == 0) return;
  uint32_t spec[] = {kElementwiseWorkgroup, plan.op, plan.mode};
  const Pipeline& pipe = dev.pipeline(plan.shader, spec);
  uint64_t addr = dev.stream().params(&plan.params, sizeof(plan.params));
  // VEC: one thread per 16-byte vector (the grid stride loads several once the grid is capped).
  int64_t items = (plan.mode & VKML_EW_VEC) ? plan.numel / vector_width(plan.compute) : plan.numel;
  int64_t groups =
      std::max<int64_t>(1, (items + kElementwiseWorkgroup - 1) / kElementwiseWorkgroup);
  if (plan.mode & VKML_EW_VEC) {  // (the environment is read only on this path)
    const int64_t spread = spread_groups();
    if (spread > 0 && groups > spread) groups = std::max(spread, (groups + 3) / 4);
  }
  uint32_t gx = static_cast<uint32_t>(std::min<int64_t>(groups, kMaxGroupsX));
  dev.stream().dispatch(pipe, gx, 1, 1, &addr, sizeof(addr), plan.reads, plan.writes);
}

}  // namespace vkml::ops
