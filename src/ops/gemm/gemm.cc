// The gemm family's host side: validation, hazard ranges and recording of the chosen plan.
#include "vkml/gemm.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include "ops/gemm/gemm_f32_split.h"
#include "ops/gemm/gemm_params.h"
#include "ops/launch.h"
#include "vkml/errors.h"
#include "vkml/profiling.h"

namespace vkml::ops {

namespace {

int64_t span_elements(const MatrixView& v, int64_t rows, int64_t cols, const int64_t* batch) {
  if (rows == 0 || cols == 0 || batch[0] == 0 || batch[1] == 0) return 0;
  int64_t last = (rows - 1) * std::abs(v.row_stride) + (cols - 1) * std::abs(v.col_stride) +
                 (batch[0] - 1) * std::abs(v.batch_stride[0]) +
                 (batch[1] - 1) * std::abs(v.batch_stride[1]);
  return last + 1;
}

bool overlaps(const MemRange& x, const MemRange& y) {
  return x.bytes && y.bytes && x.address < y.address + y.bytes && y.address < x.address + x.bytes;
}

bool same_view(const MatrixView& x, const MatrixView& y) {
  return x.address == y.address && x.row_stride == y.row_stride && x.col_stride == y.col_stride &&
         x.batch_stride[0] == y.batch_stride[0] && x.batch_stride[1] == y.batch_stride[1];
}

GemmOperand operand(const MatrixView& v) {
  return {v.address, v.row_stride, v.col_stride, v.batch_stride[0], v.batch_stride[1]};
}

// "mm MxNxK" with batches, dtype and the operands' (row, column) strides, for VKML_PROFILE=2.
std::optional<ProfileTag> gemm_tag(const GemmDesc& d) {
  if (!profiling_shapes()) return std::nullopt;
  auto strides = [](const MatrixView& v) {
    return std::to_string(v.row_stride) + "," + std::to_string(v.col_stride);
  };
  std::string t = "mm " + std::to_string(d.m) + "x" + std::to_string(d.n) + "x" +
                  std::to_string(d.k) + " " + std::string(dtype_name(d.in_dtype));
  if (d.batch[0] * d.batch[1] > 1) {
    t += " b" + std::to_string(d.batch[0]) + "x" + std::to_string(d.batch[1]);
  }
  return std::optional<ProfileTag>(std::in_place,
                                   t + " A(" + strides(d.a) + ") B(" + strides(d.b) + ")");
}

uint32_t groups(int64_t wanted, uint32_t limit) {
  return static_cast<uint32_t>(std::clamp<int64_t>(wanted, 1, std::min<uint32_t>(limit, 65535)));
}

}  // namespace

MemRange matrix_range(const MatrixView& v, DType t, int64_t rows, int64_t cols,
                      const int64_t* batch) {
  return {v.address, static_cast<uint64_t>(span_elements(v, rows, cols, batch)) * dtype_size(t)};
}

void validate_gemm(const GemmDesc& d, const DeviceCaps& caps) {
  if (d.m < 0 || d.n < 0 || d.k < 0 || d.batch[0] < 0 || d.batch[1] < 0) {
    throw InvalidArgument("vkml: gemm with negative sizes");
  }
  auto float_type = [](DType t) {
    return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 || t == DType::kF64;
  };
  if (!float_type(d.in_dtype) || !float_type(d.out_dtype)) {
    throw NotSupported("vkml: gemm supports f32, f16, bf16 and f64, not " +
                       std::string(dtype_name(d.in_dtype)) + " -> " +
                       std::string(dtype_name(d.out_dtype)));
  }
  bool half_in = d.in_dtype == DType::kF16 || d.in_dtype == DType::kBF16;
  if (d.out_dtype != d.in_dtype && !(half_in && d.out_dtype == DType::kF32)) {
    throw NotSupported("vkml: gemm of " + std::string(dtype_name(d.in_dtype)) + " inputs into " +
                       std::string(dtype_name(d.out_dtype)) + " is not supported");
  }
  for (DType t : {d.in_dtype, d.out_dtype}) {
    if (!caps.supports_dtype(t)) {
      throw NotSupported("vkml: " + caps.name + " does not support " + std::string(dtype_name(t)) +
                         " tensors");
    }
  }
  const int64_t batches = d.batch[0] * d.batch[1];
  if (d.m == 0 || d.n == 0 || batches == 0) return;
  if (!d.c.address) throw InvalidArgument("vkml: gemm without an output");
  if (d.k > 0 && (!d.a.address || !d.b.address)) {
    throw InvalidArgument("vkml: gemm without an A or B operand");
  }
  if (d.beta != 0.0 && !d.c_in.address) {
    throw InvalidArgument("vkml: gemm with beta != 0 needs C_in");
  }
  // Two C elements at one address would race (and make the result order-dependent).
  bool c_unique = (d.m == 1 || d.c.row_stride != 0) && (d.n == 1 || d.c.col_stride != 0) &&
                  (d.batch[0] == 1 || d.c.batch_stride[0] != 0) &&
                  (d.batch[1] == 1 || d.c.batch_stride[1] != 0);
  if (!c_unique) throw InvalidArgument("vkml: gemm output has overlapping elements");
  MemRange c = matrix_range(d.c, d.out_dtype, d.m, d.n, d.batch);
  if (d.k > 0 && (overlaps(c, matrix_range(d.a, d.in_dtype, d.m, d.k, d.batch)) ||
                  overlaps(c, matrix_range(d.b, d.in_dtype, d.k, d.n, d.batch)))) {
    throw InvalidArgument("vkml: gemm output overlaps an input");
  }
  // C_in and bias are read by the thread that writes the same element: aliasing C exactly is
  // fine (in-place addmm_), any other overlap is not.
  if (d.beta != 0.0 && !same_view(d.c_in, d.c) &&
      overlaps(c, matrix_range(d.c_in, d.out_dtype, d.m, d.n, d.batch))) {
    throw InvalidArgument("vkml: gemm C_in partially overlaps the output");
  }
  if (d.bias.address && !same_view(d.bias, d.c) &&
      overlaps(c, matrix_range(d.bias, d.out_dtype, d.m, d.n, d.batch))) {
    throw InvalidArgument("vkml: gemm bias overlaps the output");
  }
}

namespace {

// v moved by `rows` rows and `cols` columns (an absent operand stays absent).
MatrixView offset_view(const MatrixView& v, int64_t rows, int64_t cols, DType t) {
  if (!v.address) return v;
  MatrixView s = v;
  s.address += static_cast<uint64_t>(rows * v.row_stride + cols * v.col_stride) * dtype_size(t);
  return s;
}

// One product, in one plan.
void gemm_whole(Device& dev, const GemmDesc& desc) {
  const DeviceCaps& caps = dev.caps();
  const int64_t batches = desc.batch[0] * desc.batch[1];
  const auto tag = gemm_tag(desc);
  if (desc.k > 0 && gemm_f32_split_wanted(desc, caps)) {
    gemm_f32_split(dev, desc);
    return;
  }

  GemmPlan plan = choose_gemm_plan(desc, caps);
  const GemmDesc& d = plan.problem;
  GemmParams p{};
  p.a = operand(d.a);
  p.b = operand(d.b);
  p.c = operand(d.c);
  p.c_in = operand(d.c_in);
  p.bias = operand(d.bias);
  p.m = d.m;
  p.n = d.n;
  p.k = d.k;
  p.batch0 = d.batch[0];
  p.batch1 = d.batch[1];
  p.alpha_f64 = d.alpha;
  p.beta_f64 = d.beta;
  p.alpha = static_cast<float>(d.alpha);
  p.beta = static_cast<float>(d.beta);
  p.flags = (d.beta != 0.0 ? VKML_GEMM_HAS_CIN : 0u) | (d.bias.address ? VKML_GEMM_HAS_BIAS : 0u);

  MemRange ab[2];
  size_t nab = 0;
  if (d.k > 0) {
    ab[nab++] = matrix_range(d.a, d.in_dtype, d.m, d.k, d.batch);
    ab[nab++] = matrix_range(d.b, d.in_dtype, d.k, d.n, d.batch);
  }
  MemRange epi_reads[2];
  size_t nepi = 0;
  if (p.flags & VKML_GEMM_HAS_CIN) {
    epi_reads[nepi++] = matrix_range(d.c_in, d.out_dtype, d.m, d.n, d.batch);
  }
  if (p.flags & VKML_GEMM_HAS_BIAS) {
    epi_reads[nepi++] = matrix_range(d.bias, d.out_dtype, d.m, d.n, d.batch);
  }
  const MemRange c_range = matrix_range(d.c, d.out_dtype, d.m, d.n, d.batch);

  // Split-K: partial sums go to a scratch buffer, summed by a second pass.
  const uint64_t acc_size = d.out_dtype == DType::kF64 ? 8 : 4;
  const uint64_t partial_bytes =
      plan.split_k > 1 ? plan.split_k * static_cast<uint64_t>(batches * d.m * d.n) * acc_size : 0;
  const uint64_t partial = partial_bytes ? dev.allocate(partial_bytes) : 0;
  p.splits = plan.split_k;
  p.partial = partial;
  p.k_chunk = plan.k_chunk;

  const Pipeline& pipe = dev.pipeline(plan.shader, plan.spec);
  // Multiply-adds, for the stream's submit budget (the launch shape says little about K).
  const uint64_t cost = static_cast<uint64_t>(batches) * d.m * d.n * std::max<int64_t>(d.k, 1);
  uint64_t addr = dev.stream().params(&p, sizeof(p));
  const auto& maxg = caps.max_workgroup_count;
  const int64_t tiles_m = (d.m + plan.tile_m - 1) / plan.tile_m;
  const int64_t tiles_n = (d.n + plan.tile_n - 1) / plan.tile_n;
  uint32_t gx, gy, gz;
  if (plan.kernel == GemmKernel::kGemv) {
    gx = groups(tiles_m, maxg[0]);
    gy = groups(batches, maxg[1]);
    gz = 1;
  } else {
    gx = groups(tiles_n, maxg[0]);
    gy = groups(tiles_m, maxg[1]);
    gz = groups(batches * plan.split_k, maxg[2]);
  }
  if (!partial) {
    MemRange reads[4];
    size_t nreads = 0;
    for (size_t i = 0; i < nab; ++i) reads[nreads++] = ab[i];
    for (size_t i = 0; i < nepi; ++i) reads[nreads++] = epi_reads[i];
    dev.stream().dispatch(pipe, gx, gy, gz, &addr, sizeof(addr), {reads, nreads}, {&c_range, 1},
                          cost);
    return;
  }
  const MemRange partial_range{partial, partial_bytes};
  dev.stream().dispatch(pipe, gx, gy, gz, &addr, sizeof(addr), {ab, nab}, {&partial_range, 1},
                        cost);
  MemRange reads[3] = {partial_range};
  size_t nreads = 1;
  for (size_t i = 0; i < nepi; ++i) reads[nreads++] = epi_reads[i];
  // Its own copy of the parameters: each block belongs to one dispatch (see Stream::params).
  addr = dev.stream().params(&p, sizeof(p));
  record_splitk_reduce(dev, d.out_dtype, addr, d.m, d.n, batches, {reads, nreads}, c_range);
  dev.free(partial);  // later reuse is ordered after these dispatches by hazard tracking
}

}  // namespace

void gemm(Device& dev, const GemmDesc& desc) {
  validate_gemm(desc, dev.caps());
  const int64_t batches = desc.batch[0] * desc.batch[1];
  if (desc.m == 0 || desc.n == 0 || batches == 0) return;
  const double work = static_cast<double>(batches) * static_cast<double>(desc.m) *
                      static_cast<double>(desc.n) * static_cast<double>(std::max<int64_t>(desc.k, 1));
  const int64_t slices = budget_slices(dev, work);
  if (slices == 1 || (desc.m == 1 && desc.n == 1)) {
    gemm_whole(dev, desc);
    return;
  }
  // Output blocks are independent: the longer output side is cut into slices, each submitted on
  // its own, so no submission keeps the GPU busy beyond the time budget.
  const bool by_rows = desc.m >= desc.n;
  const int64_t len = by_rows ? desc.m : desc.n;
  const int64_t step = (len + slices - 1) / slices;
  for (int64_t s0 = 0; s0 < len; s0 += step) {
    GemmDesc part = desc;
    const int64_t r = by_rows ? s0 : 0, c = by_rows ? 0 : s0;
    (by_rows ? part.m : part.n) = std::min(step, len - s0);
    part.a = offset_view(desc.a, r, 0, desc.in_dtype);
    part.b = offset_view(desc.b, 0, c, desc.in_dtype);
    part.c = offset_view(desc.c, r, c, desc.out_dtype);
    part.c_in = offset_view(desc.c_in, r, c, desc.out_dtype);
    part.bias = offset_view(desc.bias, r, c, desc.out_dtype);
    gemm_whole(dev, part);
    if (s0 + step < len) dev.stream().flush();
  }
}

void record_splitk_reduce(Device& dev, DType out, uint64_t params_addr, int64_t m, int64_t n,
                          int64_t batches, std::span<const MemRange> reads,
                          const MemRange& written) {
  // A row's columns per workgroup: 256, or fewer for narrow outputs (one row per workgroup).
  uint32_t threads = 32;
  while (threads < 256 && threads < n) threads *= 2;
  const uint32_t spec[] = {threads};
  const Pipeline& reduce = dev.pipeline("gemm_splitk_reduce_" + std::string(dtype_name(out)), spec);
  const auto& maxg = dev.caps().max_workgroup_count;
  dev.stream().dispatch(reduce, groups((n + threads - 1) / threads, maxg[0]),
                        groups(m, maxg[1]), groups(batches, maxg[2]), &params_addr,
                        sizeof(params_addr), reads, {&written, 1});
}

}  // namespace vkml::ops
