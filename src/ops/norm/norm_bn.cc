// The batch-norm fast path: a per-channel affine map streamed over dense activations, with the
// statistics and backward sums split over (channel, chunk) workgroups so that a few channels
// still fill a GPU. See norm_bn_params.h for the layout and norm_bn.comp for the stages.
#include "ops/norm/norm_bn.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "ops/nn_util.h"
#include "ops/norm/norm_bn_params.h"
#include "vkml/config.h"

namespace vkml::ops::norm_bn {

namespace {

constexpr uint32_t kWorkgroup = 256;
constexpr int64_t kTargetGroups = 1024;  // partial workgroups to aim for (fills a 132-SM GPU)
constexpr int64_t kMinChunk = 2048;      // elements of one channel per partial workgroup, at least
constexpr int64_t kMinRows = 64;         // rows per partial workgroup with BN_ROWS, at least

struct Layout {
  int64_t outer = 0, channels = 0, inner = 0;
  bool operator==(const Layout&) const = default;
};

// Vector loads and, for channels-innermost layouts that allow it, the row-wise partial stage.
uint32_t vector_modes(const Layout& l, std::initializer_list<const TensorDesc*> acts) {
  if (!(l.inner % 4 == 0 || (l.inner == 1 && l.channels % 4 == 0))) return 0;
  for (const TensorDesc* t : acts) {
    if (t && t->address % (4 * dtype_size(t->dtype)) != 0) return 0;
  }
  bool rows = l.inner == 1 && l.channels % 4 == 0 && l.channels <= 4 * int64_t{kWorkgroup};
  return BN_VEC4 | (rows ? BN_ROWS : 0u);
}

// [outer, C, inner] of a dense NCHW-contiguous or channels-innermost tensor (size-1 dims may have
// any stride); nothing for other layouts.
std::optional<Layout> dense_layout(const TensorDesc& t) {
  if (t.ndim() < 2) return std::nullopt;
  const int nd = t.ndim();
  auto matches = [&](const std::vector<int>& innermost_first) {
    int64_t step = 1;
    for (int d : innermost_first) {
      if (t.sizes[d] != 1 && t.strides[d] != step) return false;
      step *= t.sizes[d];
    }
    return true;
  };
  std::vector<int> nchw, channels_last = {1};
  for (int d = nd - 1; d >= 0; --d) nchw.push_back(d);
  for (int d = nd - 1; d >= 2; --d) channels_last.push_back(d);
  channels_last.push_back(0);
  Layout l;
  l.channels = t.sizes[1];
  if (l.channels == 1) {  // one channel: every dense order is the same run of elements
    if (!matches(nchw) && !matches(channels_last)) return std::nullopt;
    l.outer = 1;
    l.inner = t.numel();
    return l;
  }
  if (matches(nchw)) {
    l.outer = t.sizes[0];
    l.inner = t.numel() / (t.sizes[0] * l.channels);
    return l;
  }
  if (matches(channels_last)) {
    l.outer = t.numel() / l.channels;
    l.inner = 1;
    return l;
  }
  return std::nullopt;
}

bool fits_fp32_path(const TensorDesc* t) {
  return !t || t->dtype == DType::kF32 || t->dtype == DType::kF16 || t->dtype == DType::kBF16;
}

// A per-channel tensor: 1-D with a stride the shader's 32-bit index can take.
bool fits_channel(const TensorDesc* t) {
  return !t || (fits_fp32_path(t) && t->ndim() == 1 && t->strides[0] >= 0 &&
                t->strides[0] < (int64_t{1} << 24));
}

bool disabled() { return !config().norm_fast; }

// The common layout of the activations, or nothing when the fast path does not apply.
std::optional<Layout> common_layout(std::initializer_list<const TensorDesc*> acts,
                                    std::initializer_list<const TensorDesc*> per_channel) {
  if (disabled()) return std::nullopt;
  std::optional<Layout> layout;
  for (const TensorDesc* t : acts) {
    if (!t) continue;
    if (!fits_fp32_path(t)) return std::nullopt;
    std::optional<Layout> l = dense_layout(*t);
    if (!l || (layout && !(*l == *layout))) return std::nullopt;
    layout = l;
  }
  for (const TensorDesc* t : per_channel) {
    if (!fits_channel(t)) return std::nullopt;
  }
  // 32-bit element indices in the shader.
  if (!layout) return std::nullopt;
  int64_t total = layout->outer * layout->channels * layout->inner;
  if (total == 0 || total >= (int64_t{1} << 31)) {
    return std::nullopt;
  }
  return layout;
}

void set_channel(NormBnParams& p, int slot, const TensorDesc* t) {
  if (!t) return;
  p.ch_ptr[slot] = t->address;
  p.ch_stride[slot] = static_cast<uint32_t>(t->strides[0]);
  p.ch_dtype[slot] = nn::float_code(*t, "batch_norm per-channel tensor");
}

void add_range(std::vector<MemRange>& list, const TensorDesc* t) {
  if (t) list.push_back(nn::range_of(*t));
}

// Splits each channel's outer * inner elements into chunks for the partial stage (with
// BN_ROWS, chunks of rows shared by every channel).
void plan_chunks(NormBnParams& p, const Layout& l) {
  int64_t per_channel = l.outer * l.inner;
  const bool rows = p.mode & BN_ROWS;
  int64_t max_chunks = std::max<int64_t>(1, per_channel / (rows ? kMinRows : kMinChunk));
  int64_t wanted = rows ? kTargetGroups : (kTargetGroups + l.channels - 1) / l.channels;
  int64_t chunks = std::clamp<int64_t>(wanted, 1, max_chunks);
  int64_t len = (per_channel + chunks - 1) / chunks;
  len = (len + 3) / 4 * 4;
  p.chunk_len = static_cast<uint32_t>(len);
  p.chunks = static_cast<uint32_t>((per_channel + len - 1) / len);
}

uint64_t scratch_bytes(const NormBnParams& p) {
  uint64_t partials = (uint64_t{p.channels} * p.chunks * 2 + 3) / 4 * 4;
  return (partials + 4 * uint64_t{p.channels}) * 4;
}

// Records partial (when p.chunks > 0), combine and, when `apply`, the apply pass.
void record(Device& dev, NormBnParams& p, bool apply, std::vector<MemRange> act_reads,
            std::vector<MemRange> ch_reads, std::vector<MemRange> ch_writes,
            const TensorDesc* written) {
  nn::Scratch scratch(dev, scratch_bytes(p));
  p.scratch = scratch.address();
  MemRange scr{p.scratch, scratch_bytes(p)};
  std::vector<MemRange> reads = act_reads, writes = {scr};
  reads.insert(reads.end(), ch_reads.begin(), ch_reads.end());  // the backward's mean
  if (p.chunks > 0) {
    const bool rows = p.mode & BN_ROWS;
    nn::dispatch_groups(dev, nn::variant(dev, "norm_bn_partial", false, true),
                        rows ? kWorkgroup : nn::workgroup_for(p.chunk_len / 4, kWorkgroup),
                        rows ? int64_t{p.chunks} : int64_t{p.channels} * p.chunks, &p, sizeof(p),
                        reads, writes);
  }
  reads = ch_reads;
  reads.push_back(scr);
  reads.insert(reads.end(), act_reads.begin(), act_reads.end());  // the forward's shift
  writes = ch_writes;
  writes.push_back(scr);
  nn::dispatch_groups(dev, "norm_bn_combine", 64, nn::groups_for(p.channels, 64), &p, sizeof(p),
                      reads, writes);
  if (!apply) return;
  reads = act_reads;
  reads.push_back(scr);
  writes = {nn::range_of(*written)};
  int64_t total = int64_t{p.outer} * p.channels * p.inner;
  int64_t units = (p.mode & BN_VEC4) ? total / 4 : total;
  nn::dispatch_groups(dev, "norm_bn_apply", kWorkgroup, nn::groups_for(units, kWorkgroup), &p,
                      sizeof(p), reads, writes);
}

void set_layout(NormBnParams& p, const Layout& l) {
  p.outer = static_cast<uint32_t>(l.outer);
  p.channels = static_cast<uint32_t>(l.channels);
  p.inner = static_cast<uint32_t>(l.inner);
}

}  // namespace

bool forward(Device& dev, const TensorDesc& out, const TensorDesc* save_mean,
             const TensorDesc* save_invstd, const TensorDesc& input, const TensorDesc* weight,
             const TensorDesc* bias, const TensorDesc* running_mean,
             const TensorDesc* running_var, bool training, double momentum, double eps) {
  std::optional<Layout> l = common_layout(
      {&input, &out}, {save_mean, save_invstd, weight, bias, running_mean, running_var});
  if (!l) return false;
  NormBnParams p{};
  set_layout(p, *l);
  p.x = input.address;
  p.y = out.address;
  p.x_dtype = nn::float_code(input, "batch_norm input");
  p.y_dtype = nn::float_code(out, "batch_norm output");
  set_channel(p, BN_W, weight);
  set_channel(p, BN_B, bias);
  set_channel(p, BN_RMEAN, running_mean);
  set_channel(p, BN_RVAR, running_var);
  p.eps = static_cast<float>(eps);
  p.momentum = static_cast<float>(momentum);
  std::vector<MemRange> ch_reads, ch_writes;
  for (const TensorDesc* t : {weight, bias, running_mean, running_var}) add_range(ch_reads, t);
  if (training) {
    p.mode |= BN_TRAINING;
    set_channel(p, BN_MEAN, save_mean);
    set_channel(p, BN_RSTD, save_invstd);
    add_range(ch_writes, save_mean);
    add_range(ch_writes, save_invstd);
    if (running_mean || running_var) {
      p.mode |= BN_UPDATE_RUNNING;
      add_range(ch_writes, running_mean);
      add_range(ch_writes, running_var);
    }
  }
  p.mode |= vector_modes(*l, {&input, &out});
  if (training) plan_chunks(p, *l);
  record(dev, p, true, {nn::range_of(input)}, ch_reads, ch_writes, &out);
  return true;
}

bool backward(Device& dev, const TensorDesc* grad_input, const TensorDesc* grad_weight,
              const TensorDesc* grad_bias, const TensorDesc& grad_out, const TensorDesc& input,
              const TensorDesc* weight, const TensorDesc* running_mean,
              const TensorDesc* running_var, const TensorDesc* save_mean,
              const TensorDesc* save_invstd, bool training, double eps) {
  std::optional<Layout> l =
      common_layout({&input, &grad_out, grad_input}, {weight, running_mean, running_var,
                                                      save_mean, save_invstd, grad_weight,
                                                      grad_bias});
  if (!l) return false;
  NormBnParams p{};
  set_layout(p, *l);
  p.mode = BN_BACKWARD | (training ? BN_TRAINING : 0u);
  p.x = input.address;
  p.dy = grad_out.address;
  p.y = grad_input ? grad_input->address : 0;
  p.x_dtype = nn::float_code(input, "batch_norm input");
  p.dy_dtype = nn::float_code(grad_out, "batch_norm grad_output");
  p.y_dtype = grad_input ? nn::float_code(*grad_input, "batch_norm grad_input") : 0;
  set_channel(p, BN_W, weight);
  set_channel(p, BN_GW, grad_weight);
  set_channel(p, BN_GB, grad_bias);
  if (training) {
    set_channel(p, BN_MEAN, save_mean);
    set_channel(p, BN_RSTD, save_invstd);
  } else {
    set_channel(p, BN_RMEAN, running_mean);
    set_channel(p, BN_RVAR, running_var);
  }
  p.eps = static_cast<float>(eps);
  std::vector<MemRange> ch_reads, ch_writes;
  for (const TensorDesc* t : {weight, training ? save_mean : running_mean,
                              training ? save_invstd : running_var}) {
    add_range(ch_reads, t);
  }
  add_range(ch_writes, grad_weight);
  add_range(ch_writes, grad_bias);
  // Sums over each channel: needed for grad_weight/grad_bias, and for dx when training.
  p.mode |= vector_modes(*l, {&input, &grad_out, grad_input});
  if (grad_weight || grad_bias || (training && grad_input)) plan_chunks(p, *l);
  record(dev, p, grad_input != nullptr, {nn::range_of(input), nn::range_of(grad_out)}, ch_reads,
         ch_writes, grad_input);
  return true;
}

}  // namespace vkml::ops::norm_bn
