// The three aten primitives every torch.fft function lowers to: _fft_c2c, _fft_r2c and _fft_c2r
// (and their out= forms), on the fft family's complex transform along one dimension at a time.
// r2c transforms the real input as complex and keeps the onesided half; c2r rebuilds the
// Hermitian-symmetric spectrum along the last dimension and keeps the real part, which ignores
// the imaginary parts of the zero and Nyquist bins as pocketfft does.
#include <ATen/Functions.h>
#include <ATen/TensorOperators.h>
#include <ATen/native/Resize.h>
#include <ATen/native/SpectralOpsUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/flip.h>
#include <ATen/ops/view_as_complex.h>
#include <ATen/ops/view_as_real.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>

#include "common/bridge.h"
#include "vkml/fft.h"

namespace torch_vkml::ops_fft_c2c_r2c_c2r {

// PyTorch's scale for `normalization` (at::native::fft_norm_mode) over signal sizes `n`.
double norm_scale(int64_t normalization, double n) {
  auto mode = static_cast<at::native::fft_norm_mode>(normalization);
  if (mode == at::native::fft_norm_mode::by_root_n) return 1.0 / std::sqrt(n);
  if (mode == at::native::fft_norm_mode::by_n) return 1.0 / n;
  return 1.0;
}

std::vector<int64_t> wrap_dims(at::IntArrayRef dim, int64_t ndim) {
  std::vector<int64_t> d(dim.begin(), dim.end());
  for (auto& x : d) x = c10::maybe_wrap_dim(x, ndim);
  return d;
}

// out = DFT of x along `d` (x complex without conj / neg bits; out complex, not overlapping x).
void transform(const at::Tensor& out, const at::Tensor& x, int64_t d, bool inverse,
               double scale) {
  vkml::Device& dev = core_device(x);
  at::Tensor xi = x.movedim(d, -1), oi = out.movedim(d, -1);
  translate_errors(
      [&] { vkml::ops::fft_c2c(dev, to_complex_desc(oi), to_complex_desc(xi), inverse, scale); });
}

// The DFT of complex x along `dims` (the last one last), scaled by `scale`, into a new tensor.
at::Tensor c2c(const at::Tensor& input, const std::vector<int64_t>& dims, bool inverse,
               double scale) {
  at::Tensor cur = input.resolve_conj().resolve_neg();
  if (dims.empty()) return scale == 1.0 ? cur.clone() : cur * scale;
  for (size_t i = 0; i < dims.size(); ++i) {
    at::Tensor next = at::empty(cur.sizes(), cur.options());
    const double s = i + 1 == dims.size() ? scale : 1.0;
    if (next.numel() > 0) transform(next, cur, dims[i], inverse, s);
    cur = next;
  }
  return cur;
}

double signal_numel(const at::Tensor& t, const std::vector<int64_t>& dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(t.size(d));
  return n;
}

void check_device(const at::Tensor& self, const at::Tensor& out) {
  TORCH_CHECK(out.device() == self.device(), "Expected out tensor to have device ", self.device(),
              ", but got ", out.device(), " instead");
}

at::Tensor fft_c2c(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                   bool forward) {
  TORCH_CHECK(self.is_complex(), "_fft_c2c expects a complex input tensor, but got ",
              self.scalar_type());
  c10::DeviceGuard guard(self.device());
  std::vector<int64_t> dims = wrap_dims(dim, self.dim());
  return c2c(self, dims, !forward, norm_scale(normalization, signal_numel(self, dims)));
}

at::Tensor& fft_c2c_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                        bool forward, at::Tensor& out) {
  check_device(self, out);
  at::Tensor r = fft_c2c(self, dim, normalization, forward);
  at::native::resize_output(out, r.sizes());
  return out.copy_(r);
}

at::Tensor fft_r2c(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                   bool onesided) {
  TORCH_CHECK(self.is_floating_point(), "_fft_r2c expects a floating point input tensor, but got ",
              self.scalar_type());
  c10::DeviceGuard guard(self.device());
  std::vector<int64_t> dims = wrap_dims(dim, self.dim());
  at::Tensor x =
      at::empty(self.sizes(), self.options().dtype(c10::toComplexType(self.scalar_type())));
  x.copy_(self);
  at::Tensor full = c2c(x, dims, false, norm_scale(normalization, signal_numel(self, dims)));
  if (!onesided || dims.empty()) return full;
  const int64_t last = dims.back();
  return full.narrow(last, 0, self.size(last) / 2 + 1).clone();
}

at::Tensor& fft_r2c_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                        bool onesided, at::Tensor& out) {
  check_device(self, out);
  at::Tensor r = fft_r2c(self, dim, normalization, onesided);
  at::native::resize_output(out, r.sizes());
  return out.copy_(r);
}

at::Tensor fft_c2r(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                   int64_t n) {
  TORCH_CHECK(self.is_complex(), "_fft_c2r expects a complex input tensor, but got ",
              self.scalar_type());
  TORCH_CHECK(!dim.empty(), "_fft_c2r: at least one dimension is required");
  TORCH_CHECK(n >= 1, "Invalid number of data points (", n, ") specified");
  c10::DeviceGuard guard(self.device());
  std::vector<int64_t> dims = wrap_dims(dim, self.dim());
  const int64_t last = dims.back();
  std::vector<int64_t> others(dims.begin(), dims.end() - 1);
  at::Tensor half = c2c(self, others, true, 1.0);
  // The full spectrum along `last`: F[k] = Y[k] for k < h, conj(Y[n - k]) above.
  const int64_t h = n / 2 + 1, have = std::min(h, half.size(last));
  std::vector<int64_t> shape(half.sizes().begin(), half.sizes().end());
  shape[last] = n;
  at::Tensor full = at::zeros(shape, half.options());
  full.narrow(last, 0, have).copy_(half.narrow(last, 0, have));
  const int64_t mirrored = std::min(n - h, have - 1);
  if (mirrored > 0) {
    // conj(Y[n - k]) for k = n - mirrored .. n - 1 is conj of Y[mirrored .. 1], flipped.
    at::Tensor src = at::view_as_real(half.narrow(last, 1, mirrored));
    at::Tensor flipped = at::view_as_complex(at::flip(src, {last}));
    full.narrow(last, n - mirrored, mirrored).copy_(flipped.conj());
  }
  double count = signal_numel(half, others) * static_cast<double>(n);
  at::Tensor spectrum = at::empty(shape, half.options());
  transform(spectrum, full, last, true, norm_scale(normalization, count));
  at::Tensor out =
      at::empty(shape, self.options().dtype(c10::toRealValueType(self.scalar_type())));
  out.copy_(at::view_as_real(spectrum).select(-1, 0));
  return out;
}

at::Tensor& fft_c2r_out(const at::Tensor& self, at::IntArrayRef dim, int64_t normalization,
                        int64_t last_dim_size, at::Tensor& out) {
  check_device(self, out);
  at::Tensor r = fft_c2r(self, dim, normalization, last_dim_size);
  at::native::resize_output(out, r.sizes());
  return out.copy_(r);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fft_c2c", fft_c2c);
  m.impl("_fft_c2c.out", fft_c2c_out);
  m.impl("_fft_r2c", fft_r2c);
  m.impl("_fft_r2c.out", fft_r2c_out);
  m.impl("_fft_c2r", fft_c2r);
  m.impl("_fft_c2r.out", fft_c2r_out);
}

}  // namespace torch_vkml::ops_fft_c2c_r2c_c2r
