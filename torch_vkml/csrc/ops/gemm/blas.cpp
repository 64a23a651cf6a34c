// Matrix products: mm, bmm, addmm, addmv, mv, dot, vdot, baddbmm, addbmm, addr (functional,
// in-place and .out). Operands go to the core GEMM with their strides as they are, so
// transposed views (mm's backward) need no copies. Complex products are four real GEMMs on the
// operands' real and imaginary parts, read in place. matmul, linear, tensordot, inner and vecdot
// reach these through PyTorch's decompositions.
#include <ATen/Context.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_neg_view.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/view_as_real.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "common/bridge.h"
#include "vkml/gemm.h"

namespace torch_vkml::ops_blas {

using vkml::ops::GemmDesc;
using vkml::ops::MatrixView;

// Real operands: float32, float16, bfloat16, float64; complex ones: complex64, complex128 (whose
// lazy neg and conj bits the complex path folds into its coefficients).
void check_float(const char* op, const at::Tensor& t) {
  at::ScalarType s = t.scalar_type();
  TORCH_CHECK_NOT_IMPLEMENTED(s == at::kFloat || s == at::kHalf || s == at::kBFloat16 ||
                                  s == at::kDouble || s == at::kComplexFloat ||
                                  s == at::kComplexDouble,
                              "vkml: ", op,
                              " supports float32, float16, bfloat16, float64, complex64 and "
                              "complex128 tensors, not ", s);
  TORCH_CHECK_NOT_IMPLEMENTED(t.is_complex() || !t.is_neg(), "vkml: ", op,
                              " of a negated view is not supported");
}

void check_same_device(const char* op, std::initializer_list<const at::Tensor*> ts) {
  const at::Tensor* first = nullptr;
  for (const at::Tensor* t : ts) {
    if (!t->defined()) continue;
    if (!first) {
      first = t;
      continue;
    }
    TORCH_CHECK(t->device() == first->device(),
                "Expected all tensors to be on the same device, but found at least two devices, ",
                first->device(), " and ", t->device(), "! (when checking argument for ", op, ")");
  }
}

void check_out_dtype(const at::Tensor& out, at::ScalarType expected) {
  TORCH_CHECK(out.scalar_type() == expected, "Expected out tensor to have dtype ", expected,
              ", but got ", out.scalar_type(), " instead");
}

uint64_t address(const at::Tensor& t) {
  return t.numel() ? reinterpret_cast<uint64_t>(t.data_ptr()) : 0;
}

// A tensor of 0-3 dims as a matrix: scalars are 1x1, vectors columns, 3-D tensors batched.
MatrixView view_of(const at::Tensor& t) {
  MatrixView v;
  v.address = address(t);
  switch (t.dim()) {
    case 0:
      v.row_stride = v.col_stride = 1;
      break;
    case 1:
      v.row_stride = t.stride(0), v.col_stride = 1;
      break;
    case 2:
      v.row_stride = t.stride(0), v.col_stride = t.stride(1);
      break;
    default:
      v.batch_stride[0] = t.stride(0), v.row_stride = t.stride(1), v.col_stride = t.stride(2);
  }
  return v;
}

// A vector as a 1 x n row.
MatrixView row_of(const at::Tensor& v) {
  MatrixView r;
  r.address = address(v);
  r.row_stride = 1;
  r.col_stride = v.stride(0);
  return r;
}

// An operand a k = 0 product never reads.
MatrixView no_view(const at::Tensor&) { return MatrixView{}; }

bool may_overlap(const at::Tensor& x, const at::Tensor& y) {
  if (!x.defined() || !y.defined() || x.numel() == 0 || y.numel() == 0) return false;
  return at::get_overlap_status(x, y) != at::MemOverlapStatus::No;
}

// out = alpha * A @ B + beta * c_in + bias on the real GEMM, into `out` as it is (the caller has
// ruled out overlaps).
void gemm_into(const at::Tensor& out, const at::Tensor& a_t, MatrixView a, const at::Tensor& b_t,
               MatrixView b, int64_t m, int64_t n, int64_t k, int64_t batch,
               const at::Tensor& c_in, double alpha, double beta, const at::Tensor& bias) {
  GemmDesc d;
  d.m = m, d.n = n, d.k = k;
  d.batch[0] = batch;
  d.in_dtype = to_core_dtype(a_t.scalar_type());
  d.out_dtype = to_core_dtype(out.scalar_type());
  d.a = a, d.b = b;
  d.c = view_of(out);
  if (c_in.defined() && beta != 0.0) d.c_in = view_of(c_in);
  if (bias.defined()) d.bias = view_of(bias);
  d.alpha = alpha;
  d.beta = c_in.defined() ? beta : 0.0;
  d.fp32_relaxed =
      at::globalContext().float32MatmulPrecision() != at::Float32MatmulPrecision::HIGHEST;
  c10::DeviceGuard guard(out.device());
  vkml::Device& dev = core_device(out);
  translate_errors([&] { vkml::ops::gemm(dev, d); });
}

// ---- complex products --------------------------------------------------------------------------

// How an operand of a product is read: as a matrix (view_of) or a vector as a 1 x n row (row_of).
using ViewFn = MatrixView (*)(const at::Tensor&);

// A complex tensor as the real views of its stored parts and the signs its lazy neg and conj
// bits (and an explicit conjugation) put on them: value = re_sign * re + i * im_sign * im.
struct ComplexParts {
  at::Tensor re, im;
  double re_sign = 1.0, im_sign = 1.0;
};

ComplexParts parts_of(const at::Tensor& t, bool conjugate = false) {
  ComplexParts p;
  at::Tensor base = t;
  if (base.is_conj()) {  // conj() of a conjugated view clears the bit: same memory
    base = base.conj();
    p.im_sign = -p.im_sign;
  }
  if (base.is_neg()) {
    base = at::_neg_view(base);
    p.re_sign = -p.re_sign;
    p.im_sign = -p.im_sign;
  }
  if (conjugate) p.im_sign = -p.im_sign;
  at::Tensor r = at::view_as_real(base);
  p.re = r.select(-1, 0);
  p.im = r.select(-1, 1);
  return p;
}

// out = alpha * A @ B + beta * c_in for complex operands, as four real GEMMs on the parts read in
// place: (Ar Br - Ai Bi) + i (Ar Bi + Ai Br), each pair accumulating into out's part (the second
// GEMM takes the first's result as C_in). Neg and conj bits become signs of the real
// coefficients; a complex alpha or beta scales the product afterwards.
void run_complex(const at::Tensor& out, const at::Tensor& a_t, ViewFn a_view, bool conj_a,
                 const at::Tensor& b_t, ViewFn b_view, int64_t m, int64_t n, int64_t k,
                 int64_t batch, const at::Tensor& c_in, c10::complex<double> alpha,
                 c10::complex<double> beta) {
  const bool use_cin = c_in.defined() && beta != 0.0;
  if (alpha.imag() != 0.0 || beta.imag() != 0.0) {
    at::Tensor prod = at::empty(out.sizes(), out.options());
    run_complex(prod, a_t, a_view, conj_a, b_t, b_view, m, n, k, batch, at::Tensor(), 1.0, 0.0);
    prod.mul_(c10::Scalar(alpha));
    if (use_cin) prod.add_(at::mul(c_in, c10::Scalar(beta)));
    out.copy_(prod);
    return;
  }
  const ComplexParts A = parts_of(a_t, conj_a), B = parts_of(b_t), O = parts_of(out);
  const double al = alpha.real(), be = use_cin ? beta.real() : 0.0;
  ComplexParts C;
  if (use_cin) C = parts_of(c_in);
  auto gemm = [&](const at::Tensor& o, const at::Tensor& x, const at::Tensor& y, double coef,
                  const at::Tensor& cin, double cin_coef) {
    gemm_into(o, x, a_view(x), y, b_view(y), m, n, k, batch, cin, coef, cin_coef, at::Tensor());
  };
  gemm(O.re, A.re, B.re, al * A.re_sign * B.re_sign, C.re, be * C.re_sign);
  gemm(O.re, A.im, B.im, -al * A.im_sign * B.im_sign, O.re, 1.0);
  gemm(O.im, A.re, B.im, al * A.re_sign * B.im_sign, C.im, be * C.im_sign);
  gemm(O.im, A.im, B.re, al * A.im_sign * B.re_sign, O.im, 1.0);
}

// out = alpha * A @ B + beta * c_in + bias (c_in and bias already expanded to out's shape, or
// undefined), where `a_view`/`b_view` describe a_t/b_t (A conjugated when conj_a). Writes
// through a temporary when out overlaps an input or carries a lazy neg/conj bit.
void run(const at::Tensor& out, const at::Tensor& a_t, ViewFn a_view, const at::Tensor& b_t,
         ViewFn b_view, int64_t m, int64_t n, int64_t k, int64_t batch, const at::Tensor& c_in,
         c10::complex<double> alpha, c10::complex<double> beta,
         const at::Tensor& bias = at::Tensor(), bool conj_a = false) {
  if (out.numel() == 0) return;
  at::assert_no_internal_overlap(out);
  const bool use_cin = c_in.defined() && beta != 0.0;
  bool clash = may_overlap(out, a_t) || may_overlap(out, b_t) || may_overlap(out, bias) ||
               out.is_conj() || out.is_neg();
  if (use_cin && may_overlap(out, c_in) &&
      at::get_overlap_status(out, c_in) != at::MemOverlapStatus::Full) {
    clash = true;
  }
  at::Tensor target = clash ? at::empty(out.sizes(), out.options()) : out;
  if (out.is_complex()) {
    run_complex(target, a_t, a_view, conj_a, b_t, b_view, m, n, k, batch,
                use_cin ? c_in : at::Tensor(), alpha, beta);
    if (bias.defined()) target.add_(bias);
  } else {
    gemm_into(target, a_t, a_view(a_t), b_t, b_view(b_t), m, n, k, batch,
              use_cin ? c_in : at::Tensor(), alpha.real(), use_cin ? beta.real() : 0.0, bias);
  }
  if (clash) out.copy_(target);
}

// ---- mm / addmm -----------------------------------------------------------------------------

void check_mm(const at::Tensor& self, const at::Tensor& mat2) {
  TORCH_CHECK(self.dim() == 2, "self must be a matrix");
  TORCH_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  TORCH_CHECK(self.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (",
              self.size(0), "x", self.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  TORCH_CHECK(self.scalar_type() == mat2.scalar_type(),
              "expected m1 and m2 to have the same dtype, but got: ", self.dtype(),
              " != ", mat2.dtype());
  check_float("mm", self);
  check_float("mm", mat2);
}

at::Tensor& addmm_out(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                      const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  check_same_device("addmm", {&self, &mat1, &mat2, &out});
  check_mm(mat1, mat2);
  TORCH_CHECK(self.scalar_type() == mat2.scalar_type(),
              "self and mat2 must have the same dtype, "
              "but got ",
              self.scalar_type(), " and ", mat2.scalar_type());
  check_out_dtype(out, mat1.scalar_type());
  const int64_t m = mat1.size(0), n = mat2.size(1);
  at::Tensor c_in = self.expand({m, n});
  at::native::resize_output(out, {m, n});
  run(out, mat1, view_of, mat2, view_of, m, n, mat1.size(1), 1, c_in, alpha.toComplexDouble(),
      beta.toComplexDouble());
  return out;
}

at::Tensor addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  check_mm(mat1, mat2);
  at::Tensor out = at::empty({mat1.size(0), mat2.size(1)}, mat1.options());
  return addmm_out(self, mat1, mat2, beta, alpha, out);
}

// residual + bias + mat1 @ mat2 as one GEMM: the residual is C_in (beta 1) and the bias the
// epilogue's unscaled addend, each broadcast to (m, n) by zero strides. torch.compile's vkml
// backend turns addmm(bias, x, w) + residual into this call (torch_vkml/_inductor/epilogue.py).
at::Tensor addmm_residual(const at::Tensor& residual, const at::Tensor& bias,
                          const at::Tensor& mat1, const at::Tensor& mat2) {
  const char* op = "addmm_residual";
  check_same_device(op, {&residual, &bias, &mat1, &mat2});
  check_mm(mat1, mat2);
  TORCH_CHECK(residual.scalar_type() == mat1.scalar_type() &&
                  bias.scalar_type() == mat1.scalar_type(),
              op, ": expected residual, bias and the matrices to have one dtype, but got ",
              residual.scalar_type(), ", ", bias.scalar_type(), " and ", mat1.scalar_type());
  const int64_t m = mat1.size(0), n = mat2.size(1);
  at::Tensor out = at::empty({m, n}, mat1.options());
  run(out, mat1, view_of, mat2, view_of, m, n, mat1.size(1), 1,
      residual.expand({m, n}), 1.0, 1.0, bias.expand({m, n}));
  return out;
}

void check_inplace_shape(const at::Tensor& self, c10::IntArrayRef shape) {
  TORCH_CHECK(self.sizes() == shape, "output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", shape);
}

at::Tensor& addmm_(at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  check_mm(mat1, mat2);
  check_inplace_shape(self, {mat1.size(0), mat2.size(1)});
  return addmm_out(self, mat1, mat2, beta, alpha, self);
}

at::Tensor& mm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  check_same_device("mm", {&self, &mat2, &out});
  check_mm(self, mat2);
  check_out_dtype(out, self.scalar_type());
  at::native::resize_output(out, {self.size(0), mat2.size(1)});
  run(out, self, view_of, mat2, view_of, self.size(0), mat2.size(1), self.size(1), 1,
      at::Tensor(), 1.0, 0.0);
  return out;
}

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  check_mm(self, mat2);
  at::Tensor out = at::empty({self.size(0), mat2.size(1)}, self.options());
  return mm_out(self, mat2, out);
}

// ---- bmm / baddbmm / addbmm -----------------------------------------------------------------

void check_bmm(const at::Tensor& b1, const at::Tensor& b2) {
  TORCH_CHECK(b1.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(b2.dim() == 3, "batch2 must be a 3D tensor");
  TORCH_CHECK(b2.size(0) == b1.size(0) && b2.size(1) == b1.size(2),
              "Expected size for first two dimensions of batch2 tensor to be: [", b1.size(0), ", ",
              b1.size(2), "] but got: [", b2.size(0), ", ", b2.size(1), "].");
  TORCH_CHECK(b1.scalar_type() == b2.scalar_type(), "expected scalar type ", b1.scalar_type(),
              " but found ", b2.scalar_type());
  check_float("bmm", b1);
  check_float("bmm", b2);
}

at::Tensor& baddbmm_out(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                        const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  check_same_device("baddbmm", {&self, &b1, &b2, &out});
  check_bmm(b1, b2);
  TORCH_CHECK(!self.defined() || self.scalar_type() == b1.scalar_type(),
              "self and batch1 must have the same dtype, but got ", self.scalar_type(), " and ",
              b1.scalar_type());
  check_out_dtype(out, b1.scalar_type());
  const int64_t bs = b1.size(0), m = b1.size(1), n = b2.size(2);
  at::Tensor c_in = self.defined() ? self.expand({bs, m, n}) : at::Tensor();
  at::native::resize_output(out, {bs, m, n});
  run(out, b1, view_of, b2, view_of, m, n, b1.size(2), bs, c_in, alpha.toComplexDouble(),
      beta.toComplexDouble());
  return out;
}

at::Tensor baddbmm(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  check_bmm(b1, b2);
  at::Tensor out = at::empty({b1.size(0), b1.size(1), b2.size(2)}, b1.options());
  return baddbmm_out(self, b1, b2, beta, alpha, out);
}

at::Tensor& baddbmm_(at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                     const at::Scalar& beta, const at::Scalar& alpha) {
  check_bmm(b1, b2);
  check_inplace_shape(self, {b1.size(0), b1.size(1), b2.size(2)});
  return baddbmm_out(self, b1, b2, beta, alpha, self);
}

at::Tensor& bmm_out(const at::Tensor& b1, const at::Tensor& b2, at::Tensor& out) {
  return baddbmm_out(at::Tensor(), b1, b2, 0.0, 1.0, out);
}

at::Tensor bmm(const at::Tensor& b1, const at::Tensor& b2) {
  check_bmm(b1, b2);
  at::Tensor out = at::empty({b1.size(0), b1.size(1), b2.size(2)}, b1.options());
  return bmm_out(b1, b2, out);
}

// beta * self + alpha * sum_b b1[b] @ b2[b]: one product per batch entry accumulating into
// an fp32 (or f64) buffer, so half-precision sums are rounded once.
at::Tensor& addbmm_out(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                       const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  check_same_device("addbmm", {&self, &b1, &b2, &out});
  check_bmm(b1, b2);
  TORCH_CHECK(self.scalar_type() == b1.scalar_type(),
              "self and batch1 must have the same dtype, "
              "but got ",
              self.scalar_type(), " and ", b1.scalar_type());
  check_out_dtype(out, b1.scalar_type());
  const int64_t bs = b1.size(0), m = b1.size(1), n = b2.size(2);
  at::Tensor c_in = self.expand({m, n});
  at::native::resize_output(out, {m, n});
  if (out.numel() == 0) return out;
  const bool widen = out.scalar_type() == at::kHalf || out.scalar_type() == at::kBFloat16;
  at::Tensor acc = widen ? at::empty({m, n}, out.options().dtype(at::kFloat)) : out;
  const c10::complex<double> a = alpha.toComplexDouble(), b = beta.toComplexDouble();
  at::Tensor cin_acc = c_in;
  if (widen && b != 0.0) {
    cin_acc = at::empty({m, n}, acc.options());
    cin_acc.copy_(c_in);
  }
  if (bs == 0) {
    // No products: beta * self (zeros when beta is 0), through a k = 0 product.
    run(acc, b1, no_view, b2, no_view, m, n, 0, 1, cin_acc, 1.0, b);
  }
  for (int64_t i = 0; i < bs; ++i) {
    at::Tensor x = b1.select(0, i), y = b2.select(0, i);
    const at::Tensor& prev = i == 0 ? cin_acc : acc;
    run(acc, x, view_of, y, view_of, m, n, b1.size(2), 1, prev, a,
        i == 0 ? b : c10::complex<double>(1.0));
  }
  if (!acc.is_same(out)) out.copy_(acc);
  return out;
}

at::Tensor addbmm(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                  const at::Scalar& beta, const at::Scalar& alpha) {
  check_bmm(b1, b2);
  at::Tensor out = at::empty({b1.size(1), b2.size(2)}, b1.options());
  return addbmm_out(self, b1, b2, beta, alpha, out);
}

at::Tensor& addbmm_(at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                    const at::Scalar& beta, const at::Scalar& alpha) {
  check_bmm(b1, b2);
  check_inplace_shape(self, {b1.size(1), b2.size(2)});
  return addbmm_out(self, b1, b2, beta, alpha, self);
}

// ---- mv / addmv / dot / vdot / addr ---------------------------------------------------------

void check_mv(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec) {
  TORCH_CHECK(mat.dim() == 2 && vec.dim() == 1 && self.dim() <= 1,
              "vector + matrix @ vector expected, got ", self.dim(), ", ", mat.dim(), ", ",
              vec.dim());
  TORCH_CHECK(mat.size(1) == vec.size(0) && (mat.size(0) == self.numel() || self.numel() == 1),
              "size mismatch, got input (", self.size(0), "), mat (", mat.size(0), "x", mat.size(1),
              "), vec (", vec.size(0), ")");
  TORCH_CHECK(mat.scalar_type() == vec.scalar_type() && self.scalar_type() == mat.scalar_type(),
              "expected scalar type ", mat.scalar_type(), " but found ",
              mat.scalar_type() == vec.scalar_type() ? self.scalar_type() : vec.scalar_type());
  check_float("mv", mat);
}

at::Tensor& addmv_out(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                      const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  check_same_device("addmv", {&self, &mat, &vec, &out});
  check_mv(self, mat, vec);
  check_out_dtype(out, mat.scalar_type());
  const int64_t m = mat.size(0);
  at::Tensor c_in = self.expand({m});
  at::native::resize_output(out, {m});
  run(out, mat, view_of, vec, view_of, m, 1, mat.size(1), 1, c_in, alpha.toComplexDouble(),
      beta.toComplexDouble());
  return out;
}

at::Tensor addmv(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  check_mv(self, mat, vec);
  at::Tensor out = at::empty({mat.size(0)}, mat.options());
  return addmv_out(self, mat, vec, beta, alpha, out);
}

at::Tensor& addmv_(at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  check_mv(self, mat, vec);
  check_inplace_shape(self, {mat.size(0)});
  return addmv_out(self, mat, vec, beta, alpha, self);
}

at::Tensor& mv_out(const at::Tensor& self, const at::Tensor& vec, at::Tensor& out) {
  TORCH_CHECK(self.dim() == 2 && vec.dim() == 1, "vector + matrix @ vector expected, got 1, ",
              self.dim(), ", ", vec.dim());
  return addmv_out(at::empty({self.size(0)}, self.options()), self, vec, 0.0, 1.0, out);
}

at::Tensor mv(const at::Tensor& self, const at::Tensor& vec) {
  TORCH_CHECK(self.dim() == 2 && vec.dim() == 1, "vector + matrix @ vector expected, got 1, ",
              self.dim(), ", ", vec.dim());
  at::Tensor out = at::empty({self.size(0)}, self.options());
  return addmv_out(out, self, vec, 0.0, 1.0, out);
}

// dot, or vdot (self conjugated) where `conj_self`.
at::Tensor& dot_impl(const char* op, const at::Tensor& self, const at::Tensor& other,
                     bool conj_self, at::Tensor& out) {
  check_same_device(op, {&self, &other, &out});
  TORCH_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(),
              "D and ", other.dim(), "D tensors");
  TORCH_CHECK(self.scalar_type() == other.scalar_type(),
              op, " : expected both vectors to have same dtype, but found ", self.scalar_type(),
              " and ", other.scalar_type());
  TORCH_CHECK(self.numel() == other.numel(), "inconsistent tensor size, expected tensor [",
              self.numel(), "] and src [", other.numel(),
              "] to have the same number of elements, but got ", self.numel(), " and ",
              other.numel(), " elements respectively");
  check_float(op, self);
  check_out_dtype(out, self.scalar_type());
  at::native::resize_output(out, {});
  run(out, self, row_of, other, view_of, 1, 1, self.numel(), 1, at::Tensor(), 1.0, 0.0,
      at::Tensor(), conj_self && self.is_complex());
  return out;
}

at::Tensor& dot_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return dot_impl("dot", self, other, false, out);
}

at::Tensor dot(const at::Tensor& self, const at::Tensor& other) {
  at::Tensor out = at::empty({}, self.options());
  return dot_out(self, other, out);
}

at::Tensor& vdot_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return dot_impl("vdot", self, other, true, out);
}

at::Tensor vdot(const at::Tensor& self, const at::Tensor& other) {
  at::Tensor out = at::empty({}, self.options());
  return vdot_out(self, other, out);
}

at::Tensor& addr_out(const at::Tensor& self, const at::Tensor& vec1, const at::Tensor& vec2,
                     const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  check_same_device("addr", {&self, &vec1, &vec2, &out});
  TORCH_CHECK(vec1.dim() == 1 && vec2.dim() == 1, "addr: Expected 1-D argument vec1, but got ",
              vec1.dim(), "-D");
  TORCH_CHECK(vec1.scalar_type() == vec2.scalar_type() && self.scalar_type() == vec1.scalar_type(),
              "expected scalar type ", vec1.scalar_type(), " but found ",
              vec1.scalar_type() == vec2.scalar_type() ? self.scalar_type() : vec2.scalar_type());
  check_float("addr", vec1);
  check_out_dtype(out, vec1.scalar_type());
  const int64_t m = vec1.numel(), n = vec2.numel();
  at::Tensor c_in = self.expand({m, n});
  at::native::resize_output(out, {m, n});
  run(out, vec1, view_of, vec2, row_of, m, n, 1, 1, c_in, alpha.toComplexDouble(),
      beta.toComplexDouble());
  return out;
}

at::Tensor addr(const at::Tensor& self, const at::Tensor& vec1, const at::Tensor& vec2,
                const at::Scalar& beta, const at::Scalar& alpha) {
  at::Tensor out = at::empty({vec1.size(0), vec2.size(0)}, vec1.options());
  return addr_out(self, vec1, vec2, beta, alpha, out);
}

at::Tensor& addr_(at::Tensor& self, const at::Tensor& vec1, const at::Tensor& vec2,
                  const at::Scalar& beta, const at::Scalar& alpha) {
  check_inplace_shape(self, {vec1.size(0), vec2.size(0)});
  return addr_out(self, vec1, vec2, beta, alpha, self);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("mm", mm);
  m.impl("mm.out", mm_out);
  m.impl("addmm", addmm);
  m.impl("addmm.out", addmm_out);
  m.impl("addmm_", addmm_);
  m.impl("bmm", bmm);
  m.impl("bmm.out", bmm_out);
  m.impl("baddbmm", baddbmm);
  m.impl("baddbmm.out", baddbmm_out);
  m.impl("baddbmm_", baddbmm_);
  m.impl("addbmm", addbmm);
  m.impl("addbmm.out", addbmm_out);
  m.impl("addbmm_", addbmm_);
  m.impl("mv", mv);
  m.impl("mv.out", mv_out);
  m.impl("addmv", addmv);
  m.impl("addmv.out", addmv_out);
  m.impl("addmv_", addmv_);
  m.impl("dot", dot);
  m.impl("dot.out", dot_out);
  m.impl("vdot", vdot);
  m.impl("vdot.out", vdot_out);
  m.impl("addr", addr);
  m.impl("addr.out", addr_out);
  m.impl("addr_", addr_);
}

TORCH_LIBRARY_FRAGMENT(vkml_inductor, m) {
  m.def("addmm_residual(Tensor residual, Tensor bias, Tensor mat1, Tensor mat2) -> Tensor");
}

TORCH_LIBRARY_IMPL(vkml_inductor, PrivateUse1, m) {
  m.impl("addmm_residual", addmm_residual);
}

}  // namespace torch_vkml::ops_blas
