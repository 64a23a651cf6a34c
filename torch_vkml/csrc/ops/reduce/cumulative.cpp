// Scans along a dim: cumsum/cumprod (functional, in-place, out=), the cummax/cummin helpers
// behind PyTorch's composite cummax/cummin, and _logcumsumexp; each one vkml::ops::scan call
// (complex cumprod and logcumsumexp: log2(n) steps of native complex products / logaddexps).
#include <ATen/core/ATen_fwd.h>  // the per-op meta headers below need it first
#include <ATen/WrapDimUtils.h>
#include <ATen/Functions.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/cumprod_meta.h>
#include <ATen/ops/cumsum_meta.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/full.h>
#include <ATen/ops/logaddexp.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/view_as_real.h>
#include <torch/library.h>

#include <cmath>
#include <limits>

#include "ops/reduce/reduce_bridge.h"

namespace torch_vkml::ops_cumulative {

using reduce::Mode;
using reduce::Structured;
using vkml::ops::ScanOp;

// A complex cumprod as log2(n) steps of complex products (Hillis-Steele): after the step of
// shift s, element i holds the product of elements i - 2s + 1 .. i. Written to `out` at the end,
// so an in-place scan reads only its input.
void complex_cumprod(const at::Tensor& self, int64_t dim, const at::Tensor& out) {
  at::Tensor x = self.to(out.scalar_type()).resolve_conj().resolve_neg();
  const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  for (int64_t s = 1; s < n; s *= 2) {
    at::Tensor moved = at::mul(x.narrow(dim, s, n - s), x.narrow(dim, 0, n - s));
    x = at::cat({x.narrow(dim, 0, s), moved}, dim);
  }
  out.copy_(x);
}

// `a` less its representative in [-pi, pi]: the whole turns (multiples of 2 pi) in it.
at::Tensor turns(const at::Tensor& a) {
  return at::round(at::div(a, 2 * M_PI)).mul_(2 * M_PI);
}

// A scan's imaginary parts on the CPU's branch. `tree` equals the CPU's sequential result up to
// whole turns of its imaginary parts: each step of the CPU's loop keeps the imaginary part within
// pi / 2 of that of its larger operand by real part, the new element x_i where its real part
// reaches the running result's, else the running result. So from the last such element on, the
// CPU's imaginary part moves by the differences of the tree's reduced to [-pi, pi]: a segmented
// cumulative sum of them, snapped to the tree's values plus whole turns, is the CPU's. Elements
// whose value is not finite keep the tree's.
at::Tensor on_cpu_branch(const at::Tensor& x, const at::Tensor& tree, int64_t dim) {
  const int64_t n = tree.size(dim);
  at::Tensor tr = at::real(tree), ti = at::imag(tree), xr = at::real(x), xi = at::imag(x);
  at::Tensor first = at::full_like(tr.narrow(dim, 0, 1), -std::numeric_limits<double>::infinity());
  at::Tensor prev_r = at::cat({first, tr.narrow(dim, 0, n - 1)}, dim);
  at::Tensor prev_i = at::cat({ti.narrow(dim, 0, 1), ti.narrow(dim, 0, n - 1)}, dim);
  at::Tensor record = at::ge(xr, prev_r);
  at::Tensor base = at::add(xi, at::sub(at::sub(ti, xi), turns(at::sub(ti, xi))));
  at::Tensor step = at::sub(ti, prev_i);
  step = at::where(record, at::zeros({}, step.options()), at::sub(step, turns(step)));
  at::Tensor sums = at::cumsum(step, dim);
  std::vector<int64_t> line(tree.dim(), 1);
  line[dim] = n;
  at::Tensor index = at::arange(n, tr.options().dtype(at::kLong)).view(line).expand(tr.sizes());
  at::Tensor last = std::get<0>(at::cummax(at::where(record, index, 0), dim));
  at::Tensor approx = at::add(base.gather(dim, last), at::sub(sums, sums.gather(dim, last)));
  at::Tensor fixed = at::add(ti, turns(at::sub(approx, ti)));
  return at::complex(tr, at::where(at::isfinite(fixed), fixed, ti));
}

// A complex logcumsumexp as log2(n) steps of the CPU's complex logaddexp (Hillis-Steele, as
// complex_cumprod), the later range first as in the CPU's loop, its imaginary parts then moved
// to the CPU's branch. The first element is first combined with the CPU's starting value, -inf.
void complex_logcumsumexp(const at::Tensor& self, int64_t dim, const at::Tensor& out) {
  at::Tensor src = self.to(out.scalar_type()).resolve_conj().resolve_neg();
  if (src.dim() == 0) src = src.unsqueeze(0);
  const int64_t n = src.size(dim);
  at::Tensor start = at::full({}, -std::numeric_limits<double>::infinity(), src.options());
  at::Tensor x = at::cat({at::logaddexp(src.narrow(dim, 0, 1), start), src.narrow(dim, 1, n - 1)},
                         dim);
  for (int64_t s = 1; s < n; s *= 2) {
    at::Tensor moved = at::logaddexp(x.narrow(dim, s, n - s), x.narrow(dim, 0, n - s));
    x = at::cat({x.narrow(dim, 0, s), moved}, dim);
  }
  out.copy_(on_cpu_branch(src, x, dim).reshape(out.sizes()));
}

void run_scan(ScanOp op, const at::Tensor& self, int64_t dim, const at::Tensor& out,
              const at::Tensor& indices = {}) {
  if (self.numel() == 0) return;
  if (op == ScanOp::kCumSum && out.is_complex() && !indices.defined()) {
    // A complex cumsum is the cumsum of the (real, imaginary) float pairs; a 0-dim tensor
    // scans as one of 1 element (its pair dimension must not be the one scanned).
    at::Tensor x = self.to(out.scalar_type()).resolve_conj().resolve_neg();
    const int64_t d = at::maybe_wrap_dim(dim, self.dim());
    if (x.dim() == 0) {
      return run_scan(op, at::view_as_real(x.unsqueeze(0)), 0, at::view_as_real(out.unsqueeze(0)));
    }
    return run_scan(op, at::view_as_real(x), d, at::view_as_real(out));
  }
  if (op == ScanOp::kCumProd && out.is_complex() && !indices.defined()) {
    return complex_cumprod(self, at::maybe_wrap_dim(dim, self.dim()), out);
  }
  if (op == ScanOp::kLogCumSumExp && out.is_complex()) {
    return complex_logcumsumexp(self, at::maybe_wrap_dim(dim, self.dim()), out);
  }
  TORCH_CHECK_NOT_IMPLEMENTED(!self.is_complex(), "vkml: \"", op == ScanOp::kCumSum ? "cumsum"
                              : "scan", "\" has no vkml kernel for complex tensors");
  c10::DeviceGuard guard(self.device());
  vkml::ops::ScanArgs a;
  a.op = op;
  a.src = to_desc(self);
  a.dim = static_cast<int>(at::maybe_wrap_dim(dim, self.dim()));
  a.out0 = to_desc(out);
  if (indices.defined()) a.out1 = to_desc(indices);
  a.compute = to_core_dtype(out.scalar_type());
  vkml::Device& dev = core_device(self);
  translate_errors([&] { vkml::ops::scan(dev, a); });
}

template <class Meta>
at::Tensor cum_op(ScanOp op, Mode mode, const at::Tensor& self, int64_t dim,
                  std::optional<at::ScalarType> dtype, const at::Tensor& given = {}) {
  Structured<Meta> s(mode, {given});
  s.meta(self, dim, dtype);
  at::Tensor out = s.output(0);
  // An in-place scan reads each element before the thread that owns it writes it.
  run_scan(op, self, dim, out);
  return out;
}

at::Tensor cumsum(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  return cum_op<at::meta::structured_cumsum>(ScanOp::kCumSum, Mode::kFunctional, self, dim,
                                             dtype);
}
at::Tensor& cumsum_(at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  cum_op<at::meta::structured_cumsum>(ScanOp::kCumSum, Mode::kInplace, self, dim, dtype, self);
  return self;
}
at::Tensor& cumsum_out(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype,
                       at::Tensor& out) {
  cum_op<at::meta::structured_cumsum>(ScanOp::kCumSum, Mode::kOut, self, dim, dtype, out);
  return out;
}
at::Tensor cumprod(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  return cum_op<at::meta::structured_cumprod>(ScanOp::kCumProd, Mode::kFunctional, self, dim,
                                              dtype);
}
at::Tensor& cumprod_(at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype) {
  cum_op<at::meta::structured_cumprod>(ScanOp::kCumProd, Mode::kInplace, self, dim, dtype, self);
  return self;
}
at::Tensor& cumprod_out(const at::Tensor& self, int64_t dim, std::optional<at::ScalarType> dtype,
                        at::Tensor& out) {
  cum_op<at::meta::structured_cumprod>(ScanOp::kCumProd, Mode::kOut, self, dim, dtype, out);
  return out;
}

void cummax_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim) {
  run_scan(ScanOp::kCumMax, self, dim, values, indices);
}

void cummin_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices, int64_t dim) {
  run_scan(ScanOp::kCumMin, self, dim, values, indices);
}

at::Tensor& logcumsumexp_out(const at::Tensor& self, int64_t dim, at::Tensor& result) {
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()) || self.is_complex(),
                              "\"logcumsumexp_out_vkml\" not implemented for '",
                              self.scalar_type(), "'");
  reduce::check_same_device(self, result);
  at::native::resize_output(result, self.sizes());
  run_scan(ScanOp::kLogCumSumExp, self, dim, result);
  return result;
}

at::Tensor logcumsumexp(const at::Tensor& self, int64_t dim) {
  at::Tensor result = at::empty_like(self, at::MemoryFormat::Contiguous);
  return logcumsumexp_out(self, dim, result);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("cumsum", cumsum);
  m.impl("cumsum_", cumsum_);
  m.impl("cumsum.out", cumsum_out);
  m.impl("cumprod", cumprod);
  m.impl("cumprod_", cumprod_);
  m.impl("cumprod.out", cumprod_out);
  m.impl("_cummax_helper", cummax_helper);
  m.impl("_cummin_helper", cummin_helper);
  m.impl("_logcumsumexp", logcumsumexp);
  m.impl("_logcumsumexp.out", logcumsumexp_out);
}

}  // namespace torch_vkml::ops_cumulative
