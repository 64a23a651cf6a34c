// channel_shuffle on vkml (functional and out=): a view of (N, g, C/g, *) transposed to
// (N, C/g, g, *), copied.
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <utility>
#include <vector>

#include "common/nn_bridge.h"

namespace torch_vkml::ops_channel_shuffle {

at::Tensor channel_shuffle(const at::Tensor& self, c10::SymInt groups_sym) {
  int64_t groups = groups_sym.guard_int(__FILE__, __LINE__);
  TORCH_CHECK(self.dim() > 2,
              "channel_shuffle expects input to have at least 3 dimensions, but got input with "
              "sizes ",
              self.sizes());
  TORCH_CHECK(groups > 0, "Number of groups to divide channels in must be positive.",
              " Value of groups:", groups);
  int64_t c = self.size(1);
  TORCH_CHECK(c % groups == 0, "Number of channels must be divisible by groups. Got ", c,
              " channels and ", groups, " groups.");
  std::vector<int64_t> split(self.sizes().begin(), self.sizes().end());
  split[1] = c / groups;
  split.insert(split.begin() + 1, groups);
  at::Tensor out = at::empty(self.sizes(), self.options().memory_format(self.suggest_memory_format()));
  if (self.numel() == 0) return out;
  // out viewed as (N, C/g, g, *) receives self viewed as (N, g, C/g, *) with dims 1, 2 swapped.
  std::vector<int64_t> swapped = split;
  std::swap(swapped[1], swapped[2]);
  out.view(swapped).copy_(self.reshape(split).transpose(1, 2));
  return out;
}

at::Tensor& channel_shuffle_out(const at::Tensor& self, c10::SymInt groups, at::Tensor& out) {
  at::Tensor r = channel_shuffle(self, groups);
  nn::check_on_device(self, out, "channel_shuffle", "out");
  at::native::resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("channel_shuffle", channel_shuffle);
  m.impl("channel_shuffle.out", channel_shuffle_out);
}

}  // namespace torch_vkml::ops_channel_shuffle
