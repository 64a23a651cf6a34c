// Copies between the CPU and vkml, within and between vkml devices, with dtype conversion and
// arbitrary strides; plus fill_, zero_ and _local_scalar_dense.
#include <ATen/ops/_copy_from_and_resize_native.h>
#include <ATen/ops/_copy_from_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/logical_or.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/view_as_real.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "common/bridge.h"
#include "device/pinned_allocator.h"
#include "vkml/host_memory.h"

namespace torch_vkml::ops_copy_fill {

bool is_vkml(const at::Tensor& t) { return t.device().type() == kVkml; }

// Bytes from the first addressed element to one past the last (strides >= 0).
int64_t span_elements(const at::Tensor& t) {
  int64_t last = 0;
  for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
  return last + 1;
}

bool dense_non_overlapping_contiguous(const at::Tensor& t) { return t.is_contiguous(); }

// Host-to-device bytes: with non_blocking from pinned memory of the device, a copy recorded on
// the stream that reads the pinned block itself; otherwise through staging (the host memory may
// change as soon as this returns).
void upload_bytes(const at::Tensor& host, const at::Tensor& dst, uint64_t bytes,
                  bool non_blocking) {
  vkml::Device& d = core_device(dst);
  const auto address = reinterpret_cast<uint64_t>(dst.data_ptr());
  const bool pinned = non_blocking && is_pinned_on(host.data_ptr(), d.index());
  translate_errors([&] {
    if (pinned) {
      vkml::upload_pinned(d, host.data_ptr(), address, bytes);
    } else {
      d.stream().upload(host.data_ptr(), address, bytes);
    }
  });
}

// A vkml tensor holding `src` (a CPU tensor) with the same sizes, strides and dtype, uploaded
// as its raw span; or, when the span is much larger than the data, a packed copy.
at::Tensor upload(const at::Tensor& src, c10::DeviceIndex device, bool non_blocking = false) {
  at::Tensor host = src.resolve_neg().resolve_conj();
  if (host.numel() == 0) {
    return at::empty(host.sizes(), host.options().device(c10::Device(kVkml, device)));
  }
  int64_t span = span_elements(host);
  if (span > 2 * host.numel() + 1024) {
    // Sparse view of a big buffer: pack on the host rather than ship unused bytes.
    at::Tensor packed = at::empty(host.sizes(), host.options());
    packed.copy_(host);
    host = packed;
    span = host.numel();
  }
  at::Tensor dev = at::empty_strided(host.sizes(), host.strides(),
                                     host.options().device(c10::Device(kVkml, device)));
  upload_bytes(host, dev, static_cast<uint64_t>(span) * host.itemsize(), non_blocking);
  return dev;
}

// dst = src for real tensors without the negative bit, through the strided copy kernel.
void raw_copy(const at::Tensor& dst, const at::Tensor& src) {
  vkml::Device& d = core_device(dst);
  translate_errors([&] { vkml::ops::copy(d, to_desc(dst), to_desc(src)); });
}

// The memory behind `t` as a tensor without the conjugate and negative bits (a view).
at::Tensor physical(const at::Tensor& t) {
  at::Tensor p = t.is_conj() ? t.conj() : t;
  return p.is_neg() ? p._neg_view() : p;
}

// Copies where either side is complex or carries a bit: complex values move as (real,
// imaginary) float pairs through view_as_real, and each bit that differs between the two sides
// becomes a negation of the destination's real or imaginary parts.
void copy_with_bits(const at::Tensor& dst, const at::Tensor& src) {
  const bool flip_neg = dst.is_neg() != src.is_neg();
  const bool flip_conj = src.is_complex() && dst.is_conj() != src.is_conj();
  at::Tensor pd = physical(dst), ps = physical(src);
  at::Tensor src_real = ps.is_complex() ? at::view_as_real(ps) : ps;
  if (!pd.is_complex() && pd.scalar_type() == at::kBool && ps.is_complex()) {
    // A complex value is true where either part is nonzero.
    raw_copy(pd, at::logical_or(at::ne(src_real.select(-1, 0), 0),
                                at::ne(src_real.select(-1, 1), 0)));
    return;
  }
  if (!pd.is_complex()) {
    raw_copy(pd, ps.is_complex() ? src_real.select(-1, 0) : ps);
    if (flip_neg) pd.neg_();
    return;
  }
  at::Tensor rd = at::view_as_real(pd);
  if (ps.is_complex()) {
    raw_copy(rd, src_real);
    if (flip_neg) rd.select(-1, 0).neg_();
    if (flip_neg != flip_conj) rd.select(-1, 1).neg_();
    return;
  }
  raw_copy(rd.select(-1, 0), ps);
  if (flip_neg) rd.select(-1, 0).neg_();
  // A real value's imaginary part is +0 as read through dst's bits.
  rd.select(-1, 1).fill_(dst.is_conj() != dst.is_neg() ? -0.0 : 0.0);
}

// dst (vkml) = src (vkml, same device, broadcastable to dst), any dtypes and strides.
void device_copy(const at::Tensor& dst, const at::Tensor& src) {
  at::Tensor s = src.expand(dst.sizes());
  if (dst.is_complex() || s.is_complex() || dst.is_neg() || s.is_neg()) {
    copy_with_bits(dst, s);
    return;
  }
  raw_copy(dst, s);
}

// float64 and complex128, which a device without fp64 cannot hold (a host tensor of them is
// converted on the host, on its way to or from such a device).
bool device_refuses(at::ScalarType t, const vkml::Device& d) {
  return (t == at::kDouble || t == at::kComplexDouble) &&
         !d.caps().supports_dtype(vkml::DType::kF64);
}

// With non_blocking into contiguous pinned memory of src's device, the download is a copy recorded
// on the stream (the data is there once the stream passes it); otherwise the host waits for it.
void copy_to_cpu(const at::Tensor& dst, const at::Tensor& src, bool non_blocking = false) {
  vkml::Device& d = core_device(src);
  at::Tensor s = src.expand(dst.sizes());
  bool direct = dst.is_contiguous() && s.is_contiguous() && dst.scalar_type() == s.scalar_type() &&
                dst.is_neg() == s.is_neg() && dst.is_conj() == s.is_conj();
  const bool pinned = non_blocking && dst.is_contiguous() && !dst.is_neg() && !dst.is_conj() &&
                      is_pinned_on(dst.data_ptr(), d.index());
  if (direct) {
    translate_errors([&] {
      if (pinned) {
        vkml::download_pinned(d, reinterpret_cast<uint64_t>(s.data_ptr()), dst.data_ptr(),
                                   dst.nbytes());
      } else {
        d.stream().download(reinterpret_cast<uint64_t>(s.data_ptr()), dst.data_ptr(),
                            dst.nbytes());
      }
    });
    return;
  }
  // Gather on the device into a dense tensor of dst's dtype, then one download; a dtype the device
  // cannot hold is staged in src's dtype and widened on the host.
  const at::ScalarType stage = device_refuses(dst.scalar_type(), d) ? s.scalar_type()
                                                                     : dst.scalar_type();
  at::Tensor staged = at::empty(dst.sizes(), s.options().dtype(stage));
  device_copy(staged, s);
  // dst has staged's layout, dtype and no bits: download into it directly.
  if (pinned && stage == dst.scalar_type()) {
    translate_errors([&] {
      vkml::download_pinned(d, reinterpret_cast<uint64_t>(staged.data_ptr()), dst.data_ptr(),
                                 dst.nbytes());
    });
    return;
  }
  at::Tensor host = at::empty(dst.sizes(), dst.options().dtype(stage));
  translate_errors([&] {
    d.stream().download(reinterpret_cast<uint64_t>(staged.data_ptr()), host.data_ptr(),
                        host.nbytes());
  });
  dst.copy_(host);
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  // self is the source (the op is self._copy_from(dst)).
  TORCH_CHECK(dst.defined() && self.defined(), "vkml: copy of an undefined tensor");
  if (dst.numel() == 0) return dst;
  if (self.is_complex() && !dst.is_complex() && dst.scalar_type() != at::kBool) {
    TORCH_WARN_ONCE("Casting complex values to real discards the imaginary part");
  }
  if (is_vkml(dst) && is_vkml(self)) {
    if (dst.device() == self.device()) {
      c10::DeviceGuard guard(dst.device());
      device_copy(dst, self);
    } else {
      // Between vkml devices: through host memory (no peer access between Vulkan devices).
      at::Tensor host = at::empty(self.sizes(), self.options().device(at::kCPU));
      copy_to_cpu(host, self);
      c10::DeviceGuard guard(dst.device());
      device_copy(dst, upload(host, dst.device().index()));
    }
    return dst;
  }
  if (is_vkml(dst)) {
    at::Tensor src = self.device().is_cpu() ? self : self.to(at::kCPU);
    if (device_refuses(src.scalar_type(), core_device(dst))) src = src.to(dst.scalar_type());
    c10::DeviceGuard guard(dst.device());
    at::Tensor expanded = src.expand(dst.sizes());
    if (dst.is_contiguous() && expanded.is_contiguous() &&
        dst.scalar_type() == expanded.scalar_type() && dst.is_neg() == expanded.is_neg() &&
        dst.is_conj() == expanded.is_conj()) {
      upload_bytes(expanded, dst, dst.nbytes(), non_blocking);
    } else {
      device_copy(dst, upload(expanded, dst.device().index(), non_blocking));
    }
    return dst;
  }
  // vkml -> CPU (or another backend, through the CPU).
  c10::DeviceGuard guard(self.device());
  if (dst.device().is_cpu()) {
    copy_to_cpu(dst, self, non_blocking);
  } else {
    at::Tensor host = at::empty(dst.sizes(), dst.options().device(at::kCPU));
    copy_to_cpu(host, self);
    dst.copy_(host, non_blocking);
  }
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  TORCH_CHECK(self.numel() > 0, "vkml: item() of a tensor with no elements");
  at::Tensor host = at::empty({}, self.options().device(at::kCPU));
  vkml::Device& d = core_device(self);
  translate_errors([&] {
    d.stream().download(reinterpret_cast<uint64_t>(self.data_ptr()), host.data_ptr(),
                        host.itemsize());
  });
  return host.item();
}

at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value) {
  c10::DeviceGuard guard(self.device());
  vkml::Device& d = core_device(self);
  if (self.is_complex() || self.is_neg()) {
    // Through the bits: the stored value is conj/neg of the value read back.
    c10::complex<double> v = value.toComplexDouble();
    if (self.is_conj()) v = std::conj(v);
    if (self.is_neg()) v = -v;
    at::Tensor p = physical(self);
    if (!p.is_complex()) {
      translate_errors([&] { vkml::ops::fill(d, to_desc(p), to_core_scalar(v.real())); });
      return self;
    }
    at::Tensor r = at::view_as_real(p);
    translate_errors([&] {
      vkml::ops::fill(d, to_desc(r.select(-1, 0)), to_core_scalar(v.real()));
      vkml::ops::fill(d, to_desc(r.select(-1, 1)), to_core_scalar(v.imag()));
    });
    return self;
  }
  translate_errors([&] { vkml::ops::fill(d, to_desc(self), to_core_scalar(value)); });
  return self;
}

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ",
              value.dim(), " dimensions.");
  if (!is_vkml(value)) return fill_scalar(self, value.item());
  c10::DeviceGuard guard(self.device());
  device_copy(self, value);  // broadcast the 0-d tensor on the device: no host round trip
  return self;
}

at::Tensor& zero_(at::Tensor& self) { return fill_scalar(self, 0); }

// The copies read the conjugate and negative bits themselves (copy_with_bits). Without these
// fallthroughs the bits' fallbacks would resolve the source by cloning it, which copies again.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
  m.impl("_local_scalar_dense", local_scalar_dense);
  m.impl("fill_.Scalar", fill_scalar);
  m.impl("fill_.Tensor", fill_tensor);
  m.impl("zero_", zero_);
}

}  // namespace torch_vkml::ops_copy_fill
