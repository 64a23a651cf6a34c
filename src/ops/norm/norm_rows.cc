// The row-norm fast path: a workgroup per row keeping the row in registers (one read of the
// input per pass), and the weight/bias gradients as a two-level split over row chunks instead of
// one workgroup per column walking every row.
#include "ops/norm/norm_rows.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "ops/nn_util.h"
#include "ops/norm/norm_rows_params.h"
#include "vkml/config.h"

namespace vkml::ops::norm_rows {

namespace {

constexpr int64_t kMaxCols = 4 * ROWS_MAX_VEC * 256;  // registers of a 256-invocation workgroup
constexpr uint32_t kParamGradWorkgroup = 64;
constexpr int64_t kTargetGroups = 1024;
constexpr int64_t kMinRowsPerChunk = 16;

bool disabled() { return !config().norm_fast; }

bool fp32_family(const TensorDesc& t) {
  return t.dtype == DType::kF32 || t.dtype == DType::kF16 || t.dtype == DType::kBF16;
}

// Contiguous, of a dtype the fp32 shaders read; `aligned`: also four-element aligned (vec4 loads).
bool fits(const TensorDesc* t, bool aligned) {
  if (!t) return true;
  if (!fp32_family(*t) || !t->is_contiguous()) return false;
  return !aligned || t->address % (4 * dtype_size(t->dtype)) == 0;
}

// Rows and columns of the view, or false when the fast path does not apply.
bool plan(const TensorDesc& input, int normalized_ndim, NormRowsParams& p) {
  if (disabled()) return false;
  int64_t cols = 1;
  for (int d = input.ndim() - normalized_ndim; d < input.ndim(); ++d) cols *= input.sizes[d];
  int64_t total = input.numel();
  if (total == 0 || total >= (int64_t{1} << 31) || cols % 4 != 0 || cols > kMaxCols) return false;
  p.rows = static_cast<uint32_t>(total / cols);
  p.cols = static_cast<uint32_t>(cols);
  return true;
}

void set(NormRowsParams& p, int slot, const TensorDesc* t) {
  if (!t) return;
  p.ptr[slot] = t->address;
  p.dtype[slot] = nn::float_code(*t, "normalization operand");
}

// The smallest power-of-two workgroup (32..256) whose registers hold a row.
uint32_t row_workgroup(uint32_t cols) {
  uint32_t wg = 32;
  while (wg < 256 && wg * 4 * ROWS_MAX_VEC < cols) wg *= 2;
  return wg;
}

void add(std::vector<MemRange>& list, const TensorDesc* t) {
  if (t) list.push_back(nn::range_of(*t));
}

}  // namespace

bool forward(Device& dev, const TensorDesc& out, const TensorDesc* mean, const TensorDesc* rstd,
             const TensorDesc& input, const TensorDesc* weight, const TensorDesc* bias,
             int normalized_ndim, double eps, bool rms) {
  NormRowsParams p{};
  if (!plan(input, normalized_ndim, p)) return false;
  if (!fits(&input, true) || !fits(&out, true) || !fits(weight, true) || !fits(bias, true) ||
      !fits(mean, false) || !fits(rstd, false)) {
    return false;
  }
  set(p, ROWS_X, &input);
  set(p, ROWS_Y, &out);
  set(p, ROWS_W, weight);
  set(p, ROWS_B, bias);
  set(p, ROWS_MEAN, mean);
  set(p, ROWS_RSTD, rstd);
  p.mode = rms ? ROWS_MODE_RMS : 0u;
  p.eps = static_cast<float>(eps);
  std::vector<MemRange> reads, writes;
  for (const TensorDesc* t : {&input, weight, bias}) add(reads, t);
  for (const TensorDesc* t : {&out, mean, rstd}) add(writes, t);
  nn::dispatch_groups(dev, nn::variant(dev, "norm_rows_fwd", false, true), row_workgroup(p.cols),
                      p.rows, &p, sizeof(p), reads, writes);
  return true;
}

bool backward(Device& dev, const TensorDesc* grad_input, const TensorDesc* grad_weight,
              const TensorDesc* grad_bias, const TensorDesc& grad_out, const TensorDesc& input,
              const TensorDesc* mean, const TensorDesc& rstd, const TensorDesc* weight,
              int normalized_ndim, bool rms) {
  NormRowsParams p{};
  if (!plan(input, normalized_ndim, p)) return false;
  if (!fits(&input, true) || !fits(&grad_out, true) || !fits(grad_input, true) ||
      !fits(weight, true) || !fits(mean, false) || !fits(&rstd, false) ||
      !fits(grad_weight, false) || !fits(grad_bias, false)) {
    return false;
  }
  set(p, ROWS_X, &input);
  set(p, ROWS_DY, &grad_out);
  set(p, ROWS_W, weight);
  if (!rms) set(p, ROWS_MEAN, mean);
  set(p, ROWS_RSTD, &rstd);
  p.mode = rms ? ROWS_MODE_RMS : 0u;
  std::vector<MemRange> reads;
  for (const TensorDesc* t : {&input, &grad_out, weight, rms ? nullptr : mean, &rstd}) {
    add(reads, t);
  }
  if (grad_input) {
    NormRowsParams q = p;
    set(q, ROWS_Y, grad_input);
    MemRange w = nn::range_of(*grad_input);
    nn::dispatch_groups(dev, nn::variant(dev, "norm_rows_bwd", false, true),
                        row_workgroup(p.cols), p.rows, &q, sizeof(q), reads, {&w, 1});
  }
  if (grad_weight || grad_bias) {
    set(p, ROWS_GW, grad_weight);
    set(p, ROWS_GB, grad_bias);
    const int64_t nvec = p.cols / 4;
    const int64_t blocks = (nvec + kParamGradWorkgroup - 1) / kParamGradWorkgroup;
    int64_t per_chunk = std::max<int64_t>(kMinRowsPerChunk,
                                          (int64_t{p.rows} * blocks + kTargetGroups - 1) /
                                              kTargetGroups);
    p.rows_per_chunk = static_cast<uint32_t>(per_chunk);
    p.chunks = static_cast<uint32_t>((p.rows + per_chunk - 1) / per_chunk);
    uint64_t bytes = uint64_t{p.chunks} * 2 * p.cols * 4;
    nn::Scratch scratch(dev, bytes);
    p.scratch = scratch.address();
    MemRange scr{p.scratch, bytes};
    nn::dispatch_groups(dev, "norm_rows_pg_partial", kParamGradWorkgroup,
                        int64_t{p.chunks} * blocks, &p, sizeof(p), reads, {&scr, 1});
    std::vector<MemRange> writes;
    add(writes, grad_weight);
    add(writes, grad_bias);
    nn::dispatch_groups(dev, "norm_rows_pg_combine", kParamGradWorkgroup,
                        nn::groups_for(nvec, kParamGradWorkgroup), &p, sizeof(p), {&scr, 1},
                        writes);
  }
  return true;
}

}  // namespace vkml::ops::norm_rows
