// The norm family: layer, RMS, group and batch norm, forward and backward. Each op describes its
// input as a view split into row and column dims with one stride set per tensor slot (see
// norm_params.h); three kernels then serve every norm.
#include "vkml/norm.h"

#include <algorithm>
#include <array>
#include <bit>
#include <string>

#include "ops/nn_util.h"
#include "ops/norm/norm_bn.h"
#include "ops/norm/norm_params.h"
#include "ops/norm/norm_rows.h"
#include "vkml/errors.h"

namespace vkml::ops {

namespace {

constexpr int kSlots = VKML_NORM_SLOTS;

constexpr uint32_t bit(int slot) { return 1u << slot; }

struct View {
  std::vector<int64_t> sizes;
  std::vector<bool> is_row;
  std::array<const TensorDesc*, kSlots> tensor{};
  std::array<std::vector<int64_t>, kSlots> strides;  // over `sizes`

  void set(int slot, const TensorDesc* t, std::vector<int64_t> s) {
    if (!t) return;
    tensor[slot] = t;
    strides[slot] = std::move(s);
  }
  // The same view with rows and columns exchanged (parameter-gradient reductions).
  View transposed() const {
    View v = *this;
    v.is_row.flip();
    return v;
  }
};

// Splits the view's dims into the row and column lists, coalescing each across all slots.
NormParams build(const View& v, uint32_t mode, double eps, double momentum) {
  NormParams p{};
  for (bool row : {true, false}) {
    std::vector<int64_t> sizes;
    std::array<std::vector<int64_t>, kSlots> st;
    for (size_t d = 0; d < v.sizes.size(); ++d) {
      if (v.is_row[d] != row) continue;
      sizes.push_back(v.sizes[d]);
      for (int s = 0; s < kSlots; ++s) {
        if (v.tensor[s]) st[s].push_back(v.strides[s][d]);
      }
    }
    std::vector<std::vector<int64_t>*> used;
    for (int s = 0; s < kSlots; ++s) {
      if (v.tensor[s]) used.push_back(&st[s]);
    }
    int64_t count = 1;
    for (int64_t s : sizes) count *= s;
    sizes = coalesce_dims(sizes, used);
    if (sizes.size() > VKML_NORM_MAX_DIMS) {
      throw NotSupported("vkml: normalization over too many non-mergeable dimensions");
    }
    int64_t* out_sizes = row ? p.row_sizes : p.col_sizes;
    for (size_t d = 0; d < sizes.size(); ++d) {
      out_sizes[d] = sizes[d];
      for (int s = 0; s < kSlots; ++s) {
        if (!v.tensor[s]) continue;
        (row ? p.row_strides : p.col_strides)[s][d] = st[s][d];
      }
    }
    (row ? p.rows : p.cols) = count;
    (row ? p.row_ndim : p.col_ndim) = static_cast<uint32_t>(sizes.size());
  }
  for (int s = 0; s < kSlots; ++s) {
    if (!v.tensor[s]) continue;
    p.ptr[s] = v.tensor[s]->address;
    p.dtype[s] = nn::float_code(*v.tensor[s], "normalization operand");
  }
  p.eps_bits = std::bit_cast<uint64_t>(eps);
  p.momentum_bits = std::bit_cast<uint64_t>(momentum);
  p.eps_f = static_cast<float>(eps);
  p.momentum_f = static_cast<float>(momentum);
  p.mode = mode;
  return p;
}

// Rows this few (and this long) leave a GPU idle with a workgroup per row: they are split.
constexpr int64_t kSplitMaxRows = 128;
constexpr int64_t kSplitMinCols = 4096;
constexpr int64_t kSplitChunk = 1024;  // at least this many columns per chunk
constexpr int64_t kSplitTargetGroups = 512;

struct Ranges {
  std::vector<MemRange> reads, writes;
};

// Reads of every slot not written, writes of the `written` slots, plus scratch both ways.
Ranges ranges_of(const View& v, uint32_t written, MemRange scratch) {
  Ranges r;
  for (int s = 0; s < kSlots; ++s) {
    if (!v.tensor[s]) continue;
    (written & (1u << s) ? r.writes : r.reads).push_back(nn::range_of(*v.tensor[s]));
    if (s == NORM_RMEAN || s == NORM_RVAR) r.reads.push_back(nn::range_of(*v.tensor[s]));
  }
  if (scratch.bytes) {
    r.reads.push_back(scratch);
    r.writes.push_back(scratch);
  }
  return r;
}

// The split path of norm_fwd / norm_bwd: per-chunk partials, a per-row combine, then an
// elementwise pass (see norm_split.comp).
void launch_split(Device& dev, bool forward, NormParams& p, const View& v, bool fp64,
                  uint32_t written) {
  const bool fixed = p.mode & NORM_FIXED_STATS;
  const bool sums = forward ? !fixed : (!fixed || (p.mode & NORM_ROW_PARAM_GRADS));
  const bool apply = forward || v.tensor[NORM_Y];
  int64_t max_splits = std::max<int64_t>(1, p.cols / kSplitChunk);
  p.splits = std::clamp<int64_t>((kSplitTargetGroups + p.rows - 1) / p.rows, 1, max_splits);
  uint64_t acc = fp64 ? 8 : 4;
  uint64_t bytes = static_cast<uint64_t>(p.rows * p.splits * 4 + p.rows * 2) * acc;
  nn::Scratch scratch(dev, sums ? bytes : 0);
  p.scratch = scratch.address();
  MemRange scr{scratch.address(), sums ? bytes : 0};
  const char* dir = forward ? "fwd" : "bwd";
  if (sums) {
    Ranges partial = ranges_of(v, 0, scr);
    nn::dispatch_groups(dev,
                        nn::variant(dev, std::string("norm_split_") + dir + "_partial", fp64, true),
                        nn::workgroup_for((p.cols / p.splits) / 2), p.rows * p.splits, &p,
                        sizeof(p), partial.reads, partial.writes);
    uint32_t combined = forward ? written & ~bit(NORM_Y) : written & (bit(NORM_GW) | bit(NORM_GB));
    Ranges combine = ranges_of(v, combined, scr);
    constexpr uint32_t kRowsPerGroup = 64;
    nn::dispatch_groups(
        dev, nn::variant(dev, std::string("norm_split_") + dir + "_combine", fp64, false),
        kRowsPerGroup, nn::groups_for(p.rows, kRowsPerGroup), &p, sizeof(p), combine.reads,
        combine.writes);
  }
  if (apply) {
    Ranges ap = ranges_of(v, bit(NORM_Y), scr);
    constexpr uint32_t kWorkgroup = 256;
    nn::dispatch_groups(
        dev, nn::variant(dev, std::string("norm_split_") + dir + "_apply", fp64, false), kWorkgroup,
        nn::groups_for(p.rows * p.cols, kWorkgroup), &p, sizeof(p), ap.reads, ap.writes);
  }
}

// Records `kernel` over the view; `written` is a bit mask of the slots it writes.
void launch(Device& dev, const std::string& kernel, const View& v, uint32_t mode, double eps,
            double momentum, uint32_t written) {
  NormParams p = build(v, mode, eps, momentum);
  bool fp64 = false;
  for (const TensorDesc* t : v.tensor) {
    if (t) fp64 = fp64 || nn::needs_fp64(dev, {t});
  }
  if (p.rows == 0) return;
  bool splittable = kernel == "norm_fwd" || kernel == "norm_bwd";
  if (splittable && p.cols > 0 &&
      (nn::split_rows_forced() || (p.rows <= kSplitMaxRows && p.cols >= kSplitMinCols))) {
    launch_split(dev, kernel == "norm_fwd", p, v, fp64, written);
    return;
  }
  Ranges r = ranges_of(v, written, {});
  nn::dispatch_groups(dev, nn::variant(dev, kernel, fp64, true), nn::workgroup_for(p.cols / 2),
                      p.rows, &p, sizeof(p), r.reads, r.writes);
}

std::vector<int64_t> zeros(size_t n) { return std::vector<int64_t>(n, 0); }

std::vector<int64_t> concat(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void check_shape(const TensorDesc* t, const std::vector<int64_t>& sizes, const char* what) {
  if (t && t->sizes != sizes) {
    throw InvalidArgument(std::string("vkml: ") + what + " has shape " + t->describe() +
                          ", expected " + std::to_string(sizes.size()) +
                          " dims matching the input");
  }
}

void check_numel(const TensorDesc* t, int64_t n, const char* what) {
  if (t && t->numel() != n) {
    throw InvalidArgument(std::string("vkml: ") + what + " must have " + std::to_string(n) +
                          " elements, got " + t->describe());
  }
}

// Strides of a per-row statistic over the leading `axis` dims of `input`: the statistic is either
// shaped like input with size-1 trailing dims, or contiguous.
std::vector<int64_t> stat_strides(const TensorDesc& stat, const TensorDesc& input, int axis,
                                  const char* what) {
  int64_t rows = 1;
  for (int d = 0; d < axis; ++d) rows *= input.sizes[d];
  check_numel(&stat, rows, what);
  std::vector<int64_t> s(axis);
  if (stat.ndim() == input.ndim()) {
    for (int d = 0; d < axis; ++d) s[d] = stat.sizes[d] == 1 ? 0 : stat.strides[d];
    for (int d = 0; d < axis; ++d) {
      if (stat.sizes[d] != input.sizes[d]) {
        throw InvalidArgument(std::string("vkml: ") + what + " shape " + stat.describe() +
                              " does not match the input's leading dims");
      }
    }
    return s;
  }
  if (!stat.is_contiguous()) {
    throw InvalidArgument(std::string("vkml: ") + what +
                          " must be contiguous or shaped like the "
                          "input with size-1 normalized dims");
  }
  int64_t step = 1;
  for (int d = axis - 1; d >= 0; --d) {
    s[d] = step;
    step *= input.sizes[d];
  }
  return s;
}

// The layer-norm view: rows are input's leading dims, columns its last `normalized_ndim` dims.
View layer_view(const TensorDesc& input, int normalized_ndim, const char* op) {
  int axis = input.ndim() - normalized_ndim;
  if (normalized_ndim < 1 || axis < 0) {
    throw InvalidArgument(std::string("vkml: ") + op + ": cannot normalize over the last " +
                          std::to_string(normalized_ndim) + " dims of " + input.describe());
  }
  View v;
  v.sizes = input.sizes;
  v.is_row.assign(input.ndim(), false);
  for (int d = 0; d < axis; ++d) v.is_row[d] = true;
  v.set(NORM_X, &input, input.strides);
  return v;
}

// A tensor of the normalized shape (weight, bias or their grads) in the layer-norm view.
void set_param(View& v, int slot, const TensorDesc* t, int axis, const char* what) {
  if (!t) return;
  std::vector<int64_t> shape(v.sizes.begin() + axis, v.sizes.end());
  check_shape(t, shape, what);
  v.set(slot, t, concat(zeros(axis), t->strides));
}

void set_stat(View& v, int slot, const TensorDesc* t, const TensorDesc& input, int axis,
              const char* what) {
  if (!t) return;
  v.set(slot, t, concat(stat_strides(*t, input, axis, what), zeros(input.ndim() - axis)));
}

void layer_forward(Device& dev, const TensorDesc& out, const TensorDesc* mean,
                   const TensorDesc* rstd, const TensorDesc& input, const TensorDesc* weight,
                   const TensorDesc* bias, int normalized_ndim, double eps, bool rms) {
  const char* op = rms ? "rms_norm" : "layer_norm";
  View v = layer_view(input, normalized_ndim, op);
  int axis = input.ndim() - normalized_ndim;
  nn::check_same_sizes(out, input, op);
  v.set(NORM_Y, &out, out.strides);
  set_param(v, NORM_W, weight, axis, "weight");
  set_param(v, NORM_B, bias, axis, "bias");
  set_stat(v, NORM_MEAN, mean, input, axis, "mean");
  set_stat(v, NORM_RSTD, rstd, input, axis, "rstd");
  if (input.numel() == 0) return;
  if (norm_rows::forward(dev, out, mean, rstd, input, weight, bias, normalized_ndim, eps, rms)) {
    return;
  }
  launch(dev, "norm_fwd", v, rms ? NORM_RMS : 0, eps, 0.0,
         bit(NORM_Y) | bit(NORM_MEAN) | bit(NORM_RSTD));
}

void layer_backward(Device& dev, const TensorDesc* grad_input, const TensorDesc* grad_weight,
                    const TensorDesc* grad_bias, const TensorDesc& grad_out,
                    const TensorDesc& input, const TensorDesc* mean, const TensorDesc& rstd,
                    const TensorDesc* weight, int normalized_ndim, bool rms) {
  const char* op = rms ? "rms_norm_backward" : "layer_norm_backward";
  View v = layer_view(input, normalized_ndim, op);
  int axis = input.ndim() - normalized_ndim;
  nn::check_same_sizes(grad_out, input, op);
  v.set(NORM_DY, &grad_out, grad_out.strides);
  set_param(v, NORM_W, weight, axis, "weight");
  set_stat(v, NORM_MEAN, mean, input, axis, "mean");
  set_stat(v, NORM_RSTD, &rstd, input, axis, "rstd");
  uint32_t mode = rms ? NORM_RMS : 0;
  if (grad_input) nn::check_same_sizes(*grad_input, input, op);
  std::vector<int64_t> normalized(input.sizes.begin() + axis, input.sizes.end());
  check_shape(grad_weight, normalized, "grad_weight");
  check_shape(grad_bias, normalized, "grad_bias");
  if (norm_rows::backward(dev, grad_input, grad_weight, grad_bias, grad_out, input, mean, rstd,
                          weight, normalized_ndim, rms)) {
    return;
  }
  if (grad_input) {
    View gi = v;
    gi.set(NORM_Y, grad_input, grad_input->strides);
    if (input.numel() != 0) launch(dev, "norm_bwd", gi, mode, 0.0, 0.0, bit(NORM_Y));
  }
  if (grad_weight || grad_bias) {
    View pg = v.transposed();  // one workgroup per parameter, reducing over the leading dims
    pg.tensor[NORM_W] = nullptr;
    set_param(pg, NORM_GW, grad_weight, axis, "grad_weight");
    set_param(pg, NORM_GB, grad_bias, axis, "grad_bias");
    launch(dev, "norm_param_grad", pg, mode, 0.0, 0.0, bit(NORM_GW) | bit(NORM_GB));
  }
}

// Group norm: input [N, C, *] viewed as [N, G, C/G, *]; rows (N, G), columns (C/G, *).
View group_view(const TensorDesc& input, int64_t groups, const char* op) {
  if (input.ndim() < 2 || groups <= 0 || input.sizes[1] % groups != 0) {
    throw InvalidArgument(std::string("vkml: ") + op + ": input " + input.describe() +
                          " cannot be split into " + std::to_string(groups) + " channel groups");
  }
  int64_t per_group = input.sizes[1] / groups;
  View v;
  v.sizes = {input.sizes[0], groups, per_group};
  v.is_row = {true, true, false};
  std::vector<int64_t> xs = {input.strides[0], input.strides[1] * per_group, input.strides[1]};
  for (int d = 2; d < input.ndim(); ++d) {
    v.sizes.push_back(input.sizes[d]);
    v.is_row.push_back(false);
    xs.push_back(input.strides[d]);
  }
  v.set(NORM_X, &input, xs);
  return v;
}

// Strides in the group view of a tensor shaped like the input.
std::vector<int64_t> group_like(const TensorDesc& t, int64_t per_group) {
  std::vector<int64_t> s = {t.strides[0], t.strides[1] * per_group, t.strides[1]};
  for (int d = 2; d < t.ndim(); ++d) s.push_back(t.strides[d]);
  return s;
}

void set_channel_param(View& v, int slot, const TensorDesc* t, int64_t channels, int64_t per_group,
                       const char* what) {
  if (!t) return;
  check_numel(t, channels, what);
  if (t->ndim() != 1) throw InvalidArgument(std::string("vkml: ") + what + " must be 1-D");
  std::vector<int64_t> s = zeros(v.sizes.size());
  s[1] = t->strides[0] * per_group;
  s[2] = t->strides[0];
  v.set(slot, t, s);
}

void set_group_stat(View& v, int slot, const TensorDesc* t, int64_t n, int64_t groups,
                    const char* what) {
  if (!t) return;
  check_numel(t, n * groups, what);
  std::vector<int64_t> s = zeros(v.sizes.size());
  if (t->ndim() == 2) {
    s[0] = t->strides[0];
    s[1] = t->strides[1];
  } else if (t->is_contiguous()) {
    s[0] = groups;
    s[1] = 1;
  } else {
    throw InvalidArgument(std::string("vkml: ") + what + " must be [N, groups] or contiguous");
  }
  v.set(slot, t, s);
}

// Batch norm: rows are channels (dim 1), columns (N, *).
View batch_view(const TensorDesc& input, const char* op) {
  if (input.ndim() < 2) {
    throw InvalidArgument(std::string("vkml: ") + op + ": input " + input.describe() +
                          " needs a batch and a channel dimension");
  }
  View v;
  v.sizes = input.sizes;
  v.is_row.assign(input.ndim(), false);
  v.is_row[1] = true;
  v.set(NORM_X, &input, input.strides);
  return v;
}

void set_per_channel(View& v, int slot, const TensorDesc* t, const char* what) {
  if (!t) return;
  check_numel(t, v.sizes[1], what);
  if (t->ndim() != 1) throw InvalidArgument(std::string("vkml: ") + what + " must be 1-D");
  std::vector<int64_t> s = zeros(v.sizes.size());
  s[1] = t->strides[0];
  v.set(slot, t, s);
}

}  // namespace

void layer_norm(Device& dev, const TensorDesc& out, const TensorDesc* mean, const TensorDesc* rstd,
                const TensorDesc& input, const TensorDesc* weight, const TensorDesc* bias,
                int normalized_ndim, double eps) {
  layer_forward(dev, out, mean, rstd, input, weight, bias, normalized_ndim, eps, false);
}

void layer_norm_backward(Device& dev, const TensorDesc* grad_input, const TensorDesc* grad_weight,
                         const TensorDesc* grad_bias, const TensorDesc& grad_out,
                         const TensorDesc& input, const TensorDesc& mean, const TensorDesc& rstd,
                         const TensorDesc* weight, int normalized_ndim) {
  layer_backward(dev, grad_input, grad_weight, grad_bias, grad_out, input, &mean, rstd, weight,
                 normalized_ndim, false);
}

void rms_norm(Device& dev, const TensorDesc& out, const TensorDesc* rstd, const TensorDesc& input,
              const TensorDesc* weight, int normalized_ndim, double eps) {
  layer_forward(dev, out, nullptr, rstd, input, weight, nullptr, normalized_ndim, eps, true);
}

void rms_norm_backward(Device& dev, const TensorDesc* grad_input, const TensorDesc* grad_weight,
                       const TensorDesc& grad_out, const TensorDesc& input, const TensorDesc& rstd,
                       const TensorDesc* weight, int normalized_ndim) {
  layer_backward(dev, grad_input, grad_weight, nullptr, grad_out, input, nullptr, rstd, weight,
                 normalized_ndim, true);
}

void group_norm(Device& dev, const TensorDesc& out, const TensorDesc* mean, const TensorDesc* rstd,
                const TensorDesc& input, const TensorDesc* weight, const TensorDesc* bias,
                int64_t groups, double eps) {
  View v = group_view(input, groups, "group_norm");
  int64_t per_group = v.sizes[2];
  nn::check_same_sizes(out, input, "group_norm");
  v.set(NORM_Y, &out, group_like(out, per_group));
  set_channel_param(v, NORM_W, weight, input.sizes[1], per_group, "weight");
  set_channel_param(v, NORM_B, bias, input.sizes[1], per_group, "bias");
  set_group_stat(v, NORM_MEAN, mean, input.sizes[0], groups, "mean");
  set_group_stat(v, NORM_RSTD, rstd, input.sizes[0], groups, "rstd");
  if (input.numel() == 0) return;
  launch(dev, "norm_fwd", v, 0, eps, 0.0, bit(NORM_Y) | bit(NORM_MEAN) | bit(NORM_RSTD));
}

void group_norm_backward(Device& dev, const TensorDesc* grad_input, const TensorDesc* grad_weight,
                         const TensorDesc* grad_bias, const TensorDesc& grad_out,
                         const TensorDesc& input, const TensorDesc& mean, const TensorDesc& rstd,
                         const TensorDesc* weight, int64_t groups) {
  View v = group_view(input, groups, "group_norm_backward");
  int64_t per_group = v.sizes[2];
  nn::check_same_sizes(grad_out, input, "group_norm_backward");
  v.set(NORM_DY, &grad_out, group_like(grad_out, per_group));
  set_channel_param(v, NORM_W, weight, input.sizes[1], per_group, "weight");
  set_group_stat(v, NORM_MEAN, &mean, input.sizes[0], groups, "mean");
  set_group_stat(v, NORM_RSTD, &rstd, input.sizes[0], groups, "rstd");
  if (grad_input) {
    nn::check_same_sizes(*grad_input, input, "group_norm_backward");
    View gi = v;
    gi.set(NORM_Y, grad_input, group_like(*grad_input, per_group));
    if (input.numel() != 0) launch(dev, "norm_bwd", gi, 0, 0.0, 0.0, bit(NORM_Y));
  }
  if (grad_weight || grad_bias) {
    // Rows become the channels (G, C/G); columns (N, *).
    View pg = v;
    pg.is_row = std::vector<bool>(v.sizes.size(), false);
    pg.is_row[1] = pg.is_row[2] = true;
    pg.tensor[NORM_W] = nullptr;
    set_channel_param(pg, NORM_GW, grad_weight, input.sizes[1], per_group, "grad_weight");
    set_channel_param(pg, NORM_GB, grad_bias, input.sizes[1], per_group, "grad_bias");
    launch(dev, "norm_param_grad", pg, 0, 0.0, 0.0, bit(NORM_GW) | bit(NORM_GB));
  }
}

void batch_norm(Device& dev, const TensorDesc& out, const TensorDesc* save_mean,
                const TensorDesc* save_invstd, const TensorDesc& input, const TensorDesc* weight,
                const TensorDesc* bias, const TensorDesc* running_mean,
                const TensorDesc* running_var, bool training, double momentum, double eps) {
  View v = batch_view(input, "batch_norm");
  nn::check_same_sizes(out, input, "batch_norm");
  v.set(NORM_Y, &out, out.strides);
  set_per_channel(v, NORM_W, weight, "weight");
  set_per_channel(v, NORM_B, bias, "bias");
  set_per_channel(v, NORM_RMEAN, running_mean, "running_mean");
  set_per_channel(v, NORM_RVAR, running_var, "running_var");
  uint32_t mode = 0, written = bit(NORM_Y);
  if (training) {
    set_per_channel(v, NORM_MEAN, save_mean, "save_mean");
    set_per_channel(v, NORM_RSTD, save_invstd, "save_invstd");
    written |= bit(NORM_MEAN) | bit(NORM_RSTD);
    if (running_mean || running_var) {
      mode |= NORM_UPDATE_RUNNING;
      written |= bit(NORM_RMEAN) | bit(NORM_RVAR);
    }
  } else {
    if (!running_mean || !running_var) {
      throw InvalidArgument(
          "vkml: batch_norm in evaluation mode needs running_mean and running_var");
    }
    mode |= NORM_FIXED_STATS;
  }
  if (input.numel() == 0) return;
  if (norm_bn::forward(dev, out, save_mean, save_invstd, input, weight, bias, running_mean,
                       running_var, training, momentum, eps)) {
    return;
  }
  launch(dev, "norm_fwd", v, mode, eps, momentum, written);
}

void batch_norm_backward(Device& dev, const TensorDesc* grad_input, const TensorDesc* grad_weight,
                         const TensorDesc* grad_bias, const TensorDesc& grad_out,
                         const TensorDesc& input, const TensorDesc* weight,
                         const TensorDesc* running_mean, const TensorDesc* running_var,
                         const TensorDesc* save_mean, const TensorDesc* save_invstd, bool training,
                         double eps) {
  View v = batch_view(input, "batch_norm_backward");
  nn::check_same_sizes(grad_out, input, "batch_norm_backward");
  v.set(NORM_DY, &grad_out, grad_out.strides);
  set_per_channel(v, NORM_W, weight, "weight");
  uint32_t mode = NORM_ROW_PARAM_GRADS;
  if (training) {
    if (!save_mean || !save_invstd) {
      throw InvalidArgument(
          "vkml: batch_norm_backward in training mode needs save_mean and "
          "save_invstd");
    }
    set_per_channel(v, NORM_MEAN, save_mean, "save_mean");
    set_per_channel(v, NORM_RSTD, save_invstd, "save_invstd");
  } else {
    if (!running_mean || !running_var) {
      throw InvalidArgument(
          "vkml: batch_norm_backward in evaluation mode needs running_mean and "
          "running_var");
    }
    set_per_channel(v, NORM_RMEAN, running_mean, "running_mean");
    set_per_channel(v, NORM_RVAR, running_var, "running_var");
    mode |= NORM_FIXED_STATS;
  }
  if (grad_input) {
    nn::check_same_sizes(*grad_input, input, "batch_norm_backward");
    v.set(NORM_Y, grad_input, grad_input->strides);
  }
  set_per_channel(v, NORM_GW, grad_weight, "grad_weight");
  set_per_channel(v, NORM_GB, grad_bias, "grad_bias");
  if (!grad_input && !grad_weight && !grad_bias) return;
  if (norm_bn::backward(dev, grad_input, grad_weight, grad_bias, grad_out, input, weight,
                        running_mean, running_var, save_mean, save_invstd, training, eps)) {
    return;
  }
  launch(dev, "norm_bwd", v, mode, eps, 0.0, bit(NORM_Y) | bit(NORM_GW) | bit(NORM_GB));
}

}  // namespace vkml::ops
