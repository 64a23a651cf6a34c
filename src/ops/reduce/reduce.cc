// The reduce family, reductions: one strided kernel for every op (reduce.comp), specialised by
// op and dtypes, launched in one pass or, for long reductions with few outputs, in two.
#include "vkml/reduce.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>

#include "ops/reduce/reduce_params.h"
#include "ops/reduce/reduce_policy.h"
#include "ops/reduce/reduce_util.h"
#include "vkml/errors.h"

namespace vkml::ops {

using namespace reduce_detail;

namespace {

constexpr uint32_t kWorkgroup = VKML_REDUCE_WORKGROUP;
constexpr uint32_t kMaxGroups = 65535;

bool is_index_op(ReduceOp op) { return op == ReduceOp::kArgMax || op == ReduceOp::kArgMin; }

bool needs_elements(ReduceOp op) {
  return op == ReduceOp::kMax || op == ReduceOp::kMin || is_index_op(op) ||
         op == ReduceOp::kAminmax;
}

bool float_only(ReduceOp op) {
  return op == ReduceOp::kMean || op == ReduceOp::kVar || op == ReduceOp::kStd ||
         op == ReduceOp::kNorm || op == ReduceOp::kLogSumExp;
}

uint32_t norm_kind(double p) {
  if (p == 1.0) return VKML_NORM_1;
  if (p == 2.0) return VKML_NORM_2;
  if (p == 0.0) return VKML_NORM_0;
  if (std::isinf(p)) return p > 0 ? VKML_NORM_INF : VKML_NORM_NEG_INF;
  return VKML_NORM_P;
}

// The dtype whose values the accumulator sees: max/min/arg keep src's values, all/any and
// count_nonzero only test src, the rest compute in `compute`.
DType value_dtype(const ReduceArgs& a) {
  switch (a.op) {
    case ReduceOp::kMax: case ReduceOp::kMin: case ReduceOp::kArgMax: case ReduceOp::kArgMin:
    case ReduceOp::kAminmax: case ReduceOp::kAll: case ReduceOp::kAny:
    case ReduceOp::kCountNonzero:
      return a.src.dtype;
    default:
      return a.compute;
  }
}

struct Geometry {
  std::vector<int64_t> kept_sizes, src_kept, out0_kept, out1_kept;
  std::vector<int64_t> red_sizes, src_red;
  int64_t nout = 1, nred = 1;
};

void check_output(const ReduceArgs& a, const TensorDesc& out, const std::vector<bool>& reduced) {
  if (out.address == 0) return;
  bool ok = out.ndim() == a.src.ndim() && out.strides.size() == out.sizes.size();
  for (int d = 0; ok && d < a.src.ndim(); ++d) {
    ok = out.sizes[d] == (reduced[d] ? 1 : a.src.sizes[d]);
  }
  if (!ok) {
    throw InvalidArgument("vkml: reduction output " + out.describe() + " does not match input " +
                          a.src.describe());
  }
}

Geometry make_geometry(const ReduceArgs& a) {
  int nd = a.src.ndim();
  if (static_cast<int>(a.src.strides.size()) != nd) {
    throw InvalidArgument("vkml: reduction input has mismatched sizes and strides");
  }
  std::vector<bool> reduced(nd, false);
  for (int d : a.dims) {
    if (d < 0 || d >= nd || reduced[d]) {
      throw InvalidArgument("vkml: bad reduction dim " + std::to_string(d) + " for " +
                            a.src.describe());
    }
    reduced[d] = true;
  }
  check_output(a, a.out0, reduced);
  check_output(a, a.out1, reduced);
  // Unused outputs borrow a used one's strides so that they never block coalescing.
  const TensorDesc& any_out = a.out0.address ? a.out0 : a.out1.address ? a.out1 : a.src;
  const std::vector<int64_t>& o0 = a.out0.address ? a.out0.strides : any_out.strides;
  const std::vector<int64_t>& o1 = a.out1.address ? a.out1.strides : any_out.strides;

  Geometry g;
  std::vector<int64_t> ks, kst, k0, k1;
  std::vector<int> red_order;
  for (int d = 0; d < nd; ++d) {
    if (reduced[d]) {
      red_order.push_back(d);
    } else {
      ks.push_back(a.src.sizes[d]);
      kst.push_back(a.src.strides[d]);
      k0.push_back(o0[d]);
      k1.push_back(o1[d]);
    }
  }
  // Order-free ops walk reduced dims in memory order; index ops need the logical order.
  if (!is_index_op(a.op)) {
    std::stable_sort(red_order.begin(), red_order.end(), [&](int x, int y) {
      return std::abs(a.src.strides[x]) > std::abs(a.src.strides[y]);
    });
  }
  std::vector<int64_t> rs, rst;
  for (int d : red_order) {
    rs.push_back(a.src.sizes[d]);
    rst.push_back(a.src.strides[d]);
  }
  for (int64_t s : ks) g.nout *= s;
  for (int64_t s : rs) g.nred *= s;
  g.src_kept = kst;
  g.out0_kept = k0;
  g.out1_kept = k1;
  g.kept_sizes = coalesce_dims(ks, {&g.src_kept, &g.out0_kept, &g.out1_kept});
  g.src_red = rst;
  g.red_sizes = coalesce_dims(rs, {&g.src_red});
  if (g.kept_sizes.size() > VKML_REDUCE_MAX_DIMS || g.red_sizes.size() > VKML_REDUCE_MAX_DIMS) {
    throw NotSupported("vkml: reductions over tensors with more than " +
                       std::to_string(VKML_REDUCE_MAX_DIMS) +
                       " non-mergeable kept or reduced dimensions are not supported");
  }
  return g;
}

void validate(const Device& dev, const ReduceArgs& a) {
  check_dtype(dev, a.src.dtype);
  check_dtype(dev, a.compute);
  if (a.out0.address) check_dtype(dev, a.out0.dtype);
  if (a.out1.address) check_dtype(dev, a.out1.dtype);
  if (float_only(a.op) && !dtype_is_float(a.compute)) {
    throw InvalidArgument("vkml: this reduction needs a floating-point computation dtype, got " +
                          std::string(dtype_name(a.compute)));
  }
  if (is_index_op(a.op) && a.out1.address && a.out1.dtype != DType::kI64) {
    throw InvalidArgument("vkml: argmax/argmin indices must be int64");
  }
}

void fill_params(ReduceParams* p, const Geometry& g) {
  p->nout = g.nout;
  p->count = g.nred;
  p->kept_ndim = static_cast<uint32_t>(g.kept_sizes.size());
  p->red_ndim = static_cast<uint32_t>(g.red_sizes.size());
  for (size_t d = 0; d < g.kept_sizes.size(); ++d) {
    p->kept_sizes[d] = g.kept_sizes[d];
    p->src_kept_strides[d] = g.src_kept[d];
    p->out0_kept_strides[d] = g.out0_kept[d];
    p->out1_kept_strides[d] = g.out1_kept[d];
  }
  for (size_t d = 0; d < g.red_sizes.size(); ++d) {
    p->red_sizes[d] = g.red_sizes[d];
    p->src_red_strides[d] = g.src_red[d];
  }
}

void set_layout(ReduceParams* p, const ReducePlan& plan, int64_t nred) {
  p->ox_log2 = plan.ox_log2;
  p->ox_fast = plan.ox_fast ? 1u : 0u;
  p->splits = plan.splits;
  p->nred = nred;
  p->chunk = plan.chunk;
  int64_t per_group = int64_t{1} << plan.ox_log2;
  int64_t items = p->nout;  // outputs, or blocks of col_w adjacent outputs
  if (plan.col_w > 0) {
    int64_t extent = p->kept_sizes[p->kept_ndim - 1];
    items = p->nout / extent * ceil_div(extent, plan.col_w);
  }
  p->out_groups = static_cast<uint32_t>(ceil_div(items, per_group));
}

// Adjacent outputs per thread in the column layout: one 16-byte load of src (reduce_io.glsl's
// load_cols); 0 for the 1-byte types (sixteen per load), which keep one output per thread.
uint32_t column_width(DType src) {
  const size_t es = dtype_size(src);
  return es >= 2 ? static_cast<uint32_t>(16 / es) : 0;
}

// Elements per 16-byte load for the VEC mode, or 0: f32/f16/bf16 src reduced along one dim of
// stride 1 (rows, or the whole tensor), every row starting 16-byte aligned, rows long enough.
uint32_t vector_width(const TensorDesc& src, const Geometry& g) {
  DType t = src.dtype;
  if (t != DType::kF32 && t != DType::kF16 && t != DType::kBF16) return 0;
  const int64_t es = static_cast<int64_t>(dtype_size(t));
  if (g.red_sizes.size() != 1 || g.src_red[0] != 1 || g.nred < 64 || src.address % 16 != 0) {
    return 0;
  }
  for (int64_t stride : g.src_kept) {
    if ((stride * es) % 16 != 0) return 0;
  }
  return static_cast<uint32_t>(16 / es);
}

// Column layout: a thread takes col_width adjacent outputs (one 16-byte load per row where
// aligned), 64 threads across at most; the rest of the workgroup and, for long reductions, more
// workgroups (splits) share the rows, so that a few waves of workgroups keep loads in flight.
ReducePlan plan_columns(int64_t nout, int64_t nred, const DeviceCaps& caps, uint32_t col_width,
                        int64_t col_extent) {
  constexpr uint32_t kWgLog2 = VKML_REDUCE_WORKGROUP_LOG2;
  ReducePlan plan;
  plan.col_w = col_width;
  plan.ox_fast = true;
  plan.chunk = nred;
  int64_t blocks = nout / col_extent * ceil_div(col_extent, col_width);
  plan.ox_log2 = std::min<uint32_t>(6, ceil_log2(static_cast<uint64_t>(blocks)));
  uint32_t ry_log2 = kWgLog2 - plan.ox_log2;
  int64_t groups = ceil_div(blocks, int64_t{1} << plan.ox_log2);
  const int64_t target = reduce_split_target(caps, ReduceSplit::kVectorColumns);
  // Each thread of a split still reads 8 rows or more (two rounds of four loads), and a split
  // 128 rows or more, so that the partial states (16-24 bytes per output and split, written and
  // read back) add a few % to the input's traffic at most.
  int64_t min_chunk = std::max<int64_t>((int64_t{1} << ry_log2) * 8, 128);
  if (groups < target && nred >= 2 * min_chunk) {
    int64_t splits = std::min({ceil_div(target, groups), nred / min_chunk, int64_t{4096}});
    plan.chunk = ceil_div(nred, splits);
    plan.splits = static_cast<uint32_t>(ceil_div(nred, plan.chunk));
  }
  return plan;
}

}  // namespace

ReducePlan plan_reduce(int64_t nout, int64_t nred, int64_t red_stride, int64_t kept_stride,
                       const DeviceCaps& caps, uint32_t col_width, int64_t col_extent) {
  ReducePlan plan;
  constexpr uint32_t kWgLog2 = VKML_REDUCE_WORKGROUP_LOG2;
  plan.chunk = std::max<int64_t>(nred, 1);
  if (nred <= 1) {
    plan.ox_log2 = kWgLog2;
    plan.ox_fast = true;
    return plan;
  }
  // Column reductions (kept dim contiguous, reduced dim strided): neighbouring threads take
  // neighbouring outputs so that their loads coalesce. Otherwise threads share an output's row.
  bool column = red_stride != 1 && kept_stride == 1 && nout > 1;
  if (column && col_width > 1 && col_extent > 1 && nout % col_extent == 0) {
    return plan_columns(nout, nred, caps, col_width, col_extent);
  }
  uint32_t ry_log2;
  if (column) {
    uint32_t ox_log2 = std::min<uint32_t>(6, ceil_log2(static_cast<uint64_t>(nout)));
    ry_log2 = kWgLog2 - ox_log2;
    plan.ox_fast = true;
  } else {
    ry_log2 = std::min<uint32_t>(kWgLog2, ceil_log2(static_cast<uint64_t>(ceil_div(nred, 4))));
    plan.ox_fast = false;
  }
  plan.ox_log2 = kWgLog2 - ry_log2;
  // Few output groups and a long reduction: split it so that enough workgroups run.
  int64_t out_groups = ceil_div(nout, int64_t{1} << plan.ox_log2);
  const int64_t target = reduce_split_target(caps, ReduceSplit::kGeneral);
  int64_t min_chunk = (int64_t{1} << ry_log2) * 32;
  if (out_groups * 2 <= target && nred >= 2 * min_chunk) {
    int64_t splits = std::min({ceil_div(target, out_groups), ceil_div(nred, min_chunk),
                               int64_t{4096}});
    plan.chunk = ceil_div(nred, splits);
    plan.splits = static_cast<uint32_t>(ceil_div(nred, plan.chunk));
  }
  return plan;
}

void reduce(Device& dev, const ReduceArgs& a, const ReduceOverride& force) {
  validate(dev, a);
  Geometry g = make_geometry(a);
  if (g.nout == 0) return;
  if (a.out0.address == 0 && a.out1.address == 0) {
    throw InvalidArgument("vkml: a reduction needs at least one output");
  }
  if (g.nred == 0 && needs_elements(a.op)) {
    throw InvalidArgument("vkml: max/min/argmax/argmin of an empty reduction has no identity");
  }
  DType vdt = value_dtype(a);
  bool touches_f64 = a.src.dtype == DType::kF64 || vdt == DType::kF64 ||
                     (a.out0.address && a.out0.dtype == DType::kF64) ||
                     (a.out1.address && a.out1.dtype == DType::kF64);
  // A float product's relative rounding errors compound (2^24 factors near 1 drift by %):
  // accumulate it in double where the device has fp64, rounding once at the end; the float
  // variant keeps a float-float product otherwise.
  if (a.op == ReduceOp::kProd && acc_kind(vdt) == AccKind::kF32 && dev.caps().fp64_math) {
    touches_f64 = true;
  }
  std::string shader = variant_name("reduce", acc_kind(vdt), touches_f64);
  bool idx64 = force.idx64 || g.nout > kInt31 || g.nred > kInt31;
  uint32_t vec_w = force.vec == 0 ? 0 : vector_width(a.src, g);

  int64_t red_stride = g.red_sizes.empty() ? 0 : g.src_red.back();
  int64_t kept_stride = g.kept_sizes.empty() ? 0 : g.src_kept.back();
  bool col_ok = force.col != 0 && force.ox_fast != 0 && vec_w == 0;
  uint32_t col_width = col_ok ? column_width(a.src.dtype) : 0;
  int64_t col_extent = g.kept_sizes.empty() ? 0 : g.kept_sizes.back();
  ReducePlan plan = plan_reduce(g.nout, g.nred, red_stride, kept_stride, dev.caps(), col_width,
                                col_extent);
  if (force.ox_log2 >= 0) plan.ox_log2 = std::min<uint32_t>(force.ox_log2, 8);
  if (force.ox_fast >= 0) plan.ox_fast = force.ox_fast != 0;
  uint32_t spec[] = {kWorkgroup,
                     static_cast<uint32_t>(a.op),
                     static_cast<uint32_t>(a.src.dtype),
                     static_cast<uint32_t>(vdt),
                     static_cast<uint32_t>(a.out0.address ? a.out0.dtype : vdt),
                     static_cast<uint32_t>(a.out1.address ? a.out1.dtype : vdt),
                     idx64 ? 1u : 0u,
                     vec_w,
                     plan.col_w};
  // The column layout's first pass is its own variant; its FINAL pass is the plain kernel's,
  // which does not read COL_W (0 there, so that one pipeline serves every plain pass).
  const Pipeline& first = dev.pipeline(
      plan.col_w > 0
          ? variant_name(("reduce_col" + std::to_string(plan.col_w)).c_str(), acc_kind(vdt),
                         touches_f64)
          : shader,
      spec);
  spec[8] = 0;
  const Pipeline& plain = plan.col_w > 0 ? dev.pipeline(shader, spec) : first;
  if (force.splits > 0 && g.nred > 0) {
    plan.chunk = ceil_div(g.nred, force.splits);
    plan.splits = static_cast<uint32_t>(ceil_div(g.nred, plan.chunk));
  }
  // VEC: splits start on whole vectors.
  if (vec_w > 0 && plan.splits > 1) {
    plan.chunk = ceil_div(plan.chunk, int64_t{vec_w}) * vec_w;
    plan.splits = static_cast<uint32_t>(ceil_div(g.nred, plan.chunk));
  }

  ReduceParams p{};
  fill_params(&p, g);
  p.src = a.src.address;
  p.out0 = a.out0.address;
  p.out1 = a.out1.address;
  std::memcpy(&p.p_bits, &a.p, 8);
  std::memcpy(&p.correction_bits, &a.correction, 8);
  p.p_f32 = static_cast<float>(a.p);
  p.correction_f32 = static_cast<float>(a.correction);
  p.norm_kind = norm_kind(a.p);
  MemRange src_range{a.src.address, a.src.span_bytes()};
  MemRange outs[2];
  uint32_t nouts = 0;
  if (a.out0.address) outs[nouts++] = {a.out0.address, a.out0.span_bytes()};
  if (a.out1.address) outs[nouts++] = {a.out1.address, a.out1.span_bytes()};
  Stream& stream = dev.stream();
  auto launch = [&](const Pipeline& pipe, const ReduceParams& params, uint32_t gy,
                    std::span<const MemRange> reads, std::span<const MemRange> writes) {
    uint64_t addr = stream.params(&params, sizeof(params));
    uint32_t gx = static_cast<uint32_t>(std::min<int64_t>(params.out_groups, kMaxGroups));
    stream.dispatch(pipe, gx, gy, 1, &addr, sizeof(addr), reads, writes);
  };

  if (plan.splits <= 1) {
    plan.splits = 1;
    plan.chunk = std::max<int64_t>(g.nred, 1);
    set_layout(&p, plan, g.nred);
    p.stage = VKML_RED_STAGE_DIRECT;
    launch(first, p, 1, {&src_range, 1}, {outs, nouts});
    return;
  }
  // Two passes: partial states per (output, split), then one combining pass.
  // One accumulator state: two values of the accumulator type and an int64 (reduce.comp State).
  uint64_t state_bytes = shader == "reduce_f32" ? 16 : 24;
  uint64_t partial_bytes = static_cast<uint64_t>(g.nout) * plan.splits * state_bytes;
  uint64_t partial = dev.allocate(partial_bytes);
  MemRange partial_range{partial, partial_bytes};
  p.partial = partial;
  set_layout(&p, plan, g.nred);
  p.stage = VKML_RED_STAGE_PARTIAL;
  launch(first, p, plan.splits, {&src_range, 1}, {&partial_range, 1});

  ReducePlan final_plan = plan_reduce(g.nout, plan.splits, 1, 0, dev.caps());
  final_plan.splits = 1;
  set_layout(&p, final_plan, plan.splits);
  p.chunk = plan.splits;
  p.stage = VKML_RED_STAGE_FINAL;
  launch(plain, p, 1, {&partial_range, 1}, {outs, nouts});
  // The stream orders later users of this memory after the final pass (hazard tracking).
  dev.free(partial);
}

}  // namespace vkml::ops
