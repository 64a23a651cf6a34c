// The linalg family: LU, triangular solves, row permutations, Cholesky, determinants and
// Householder QR on batched real or complex matrices, one workgroup per matrix (see
// linalg.comp, linalg_jacobi.comp).
#include "vkml/linalg.h"

#include <algorithm>
#include <string>
#include <vector>

#include "ops/linalg/linalg_params.h"
#include "ops/nn_util.h"
#include "vkml/errors.h"

namespace vkml::ops {

namespace {

// Which trailing dims a tensor has after the batch dims.
enum class Kind { kMatrix = 2, kVector = 1, kScalar = 0 };

struct Operand {
  const TensorDesc* t;
  Kind kind;
  int64_t* strides;  // destination in the params block
};

void check_float(const TensorDesc& t, const char* op) {
  if (t.dtype != DType::kF32 && t.dtype != DType::kF64 && !dtype_is_complex(t.dtype)) {
    throw InvalidArgument(std::string("vkml: ") + op +
                          " needs float32, float64, complex64 or complex128 matrices, got " +
                          t.describe());
  }
}

void check_int32(const TensorDesc& t, const char* op) {
  if (t.dtype != DType::kI32) {
    throw InvalidArgument(std::string("vkml: ") + op + " needs int32 pivots/info, got " +
                          t.describe());
  }
}

// Batch dims of `out` (a matrix); every operand must share them. Fills sizes and strides.
void set_batch(LinalgParams& q, const TensorDesc& out, Kind out_kind,
               std::initializer_list<Operand> ops, const char* op) {
  const int nb = out.ndim() - static_cast<int>(out_kind);
  if (nb < 0 || nb > VKML_LINALG_MAX_BATCH) {
    throw InvalidArgument(std::string("vkml: ") + op + ": expected 0 to " +
                          std::to_string(VKML_LINALG_MAX_BATCH) + " batch dims, got " +
                          out.describe());
  }
  q.batch_ndim = static_cast<uint32_t>(nb);
  q.batch = 1;
  for (int d = 0; d < nb; ++d) {
    q.batch_sizes[d] = out.sizes[d];
    q.batch *= out.sizes[d];
  }
  for (const Operand& o : ops) {
    const TensorDesc& t = *o.t;
    if (t.ndim() != nb + static_cast<int>(o.kind) ||
        !std::equal(out.sizes.begin(), out.sizes.begin() + nb, t.sizes.begin())) {
      throw InvalidArgument(std::string("vkml: ") + op + ": batch dims of " + t.describe() +
                            " do not match " + out.describe());
    }
    for (int d = 0; d < t.ndim(); ++d) o.strides[d] = t.strides[d];
  }
}

bool same_view(const TensorDesc& a, const TensorDesc& b) {
  return a.address == b.address && a.strides == b.strides;
}

void check_square(const TensorDesc& t, const char* op) {
  if (t.ndim() < 2 || t.sizes[t.ndim() - 1] != t.sizes[t.ndim() - 2]) {
    throw InvalidArgument(std::string("vkml: ") + op + " needs square matrices, got " +
                          t.describe());
  }
}

int64_t rows(const TensorDesc& t) { return t.sizes[t.ndim() - 2]; }
int64_t cols(const TensorDesc& t) { return t.sizes[t.ndim() - 1]; }

void record(Device& dev, LinalgParams& q, int64_t work, std::vector<const TensorDesc*> reads,
            std::vector<const TensorDesc*> writes, const char* shader = "linalg") {
  if (q.batch == 0) return;
  std::vector<const TensorDesc*> all = reads;
  all.insert(all.end(), writes.begin(), writes.end());
  bool fp64 = false, complex = false;
  for (const TensorDesc* t : all) {
    if (t->dtype == DType::kF64 || t->dtype == DType::kC128) fp64 = true;
    if (dtype_is_complex(t->dtype)) complex = true;
    if (!dev.caps().supports_dtype(t->dtype)) {
      throw NotSupported("vkml: " + dev.caps().name + " does not support " +
                         std::string(dtype_name(t->dtype)) + " tensors");
    }
  }
  std::vector<MemRange> r, w;
  for (const TensorDesc* t : reads) r.push_back(nn::range_of(*t));
  for (const TensorDesc* t : writes) w.push_back(nn::range_of(*t));
  const uint32_t wg = nn::workgroup_for(work, 256);
  const std::string name =
      std::string(shader) + (complex ? "_complex" : "") + (fp64 ? "_f64" : "");
  nn::dispatch_groups(dev, name, wg, q.batch, &q, sizeof(q), r, w);
}

void check_same_dtype(const TensorDesc& a, const TensorDesc& b, const char* op) {
  if (a.dtype != b.dtype) {
    throw InvalidArgument(std::string("vkml: ") + op + ": dtypes differ: " + a.describe() +
                          " and " + b.describe());
  }
}

// `r` (log|det|, eigen or singular values) has the real type of `a`'s elements.
void check_real_of(const TensorDesc& r, const TensorDesc& a, const char* op) {
  const DType real = a.dtype == DType::kC64    ? DType::kF32
                     : a.dtype == DType::kC128 ? DType::kF64
                                               : a.dtype;
  if (r.dtype != real) {
    throw InvalidArgument(std::string("vkml: ") + op + ": " + r.describe() +
                          " is not of the real type of " + a.describe());
  }
}

}  // namespace

void lu_factor(Device& dev, const TensorDesc& lu, const TensorDesc& pivots, const TensorDesc& info,
               const TensorDesc& a, bool pivot) {
  const char* op = "lu_factor";
  check_float(lu, op);
  check_same_dtype(lu, a, op);
  check_int32(pivots, op);
  check_int32(info, op);
  LinalgParams q{};
  set_batch(q, lu, Kind::kMatrix,
            {{&lu, Kind::kMatrix, q.x_strides},
             {&a, Kind::kMatrix, q.a_strides},
             {&pivots, Kind::kVector, q.piv_strides},
             {&info, Kind::kScalar, q.info_strides}},
            op);
  q.m = rows(lu);
  q.n = cols(lu);
  if (rows(a) != q.m || cols(a) != q.n || cols(pivots) != std::min(q.m, q.n)) {
    throw InvalidArgument(std::string("vkml: lu_factor: shapes do not fit: ") + a.describe() +
                          ", " + lu.describe() + ", " + pivots.describe());
  }
  q.a = a.address;
  q.x = lu.address;
  q.piv = pivots.address;
  q.info = info.address;
  q.mode = LINALG_LU;
  q.flags = (pivot ? LINALG_PIVOT : 0u) | (same_view(a, lu) ? 0u : LINALG_COPY);
  record(dev, q, q.m * q.n, {&a}, {&lu, &pivots, &info});
}

void triangular_solve(Device& dev, const TensorDesc& x, const TensorDesc& a, const TensorDesc& b,
                      bool upper, bool unit, bool conj_a) {
  const char* op = "triangular_solve";
  check_float(x, op);
  check_same_dtype(x, a, op);
  check_same_dtype(x, b, op);
  check_square(a, op);
  LinalgParams q{};
  set_batch(q, x, Kind::kMatrix,
            {{&x, Kind::kMatrix, q.x_strides},
             {&a, Kind::kMatrix, q.a_strides},
             {&b, Kind::kMatrix, q.b_strides}},
            op);
  q.n = rows(x);
  q.k = cols(x);
  if (rows(a) != q.n || rows(b) != q.n || cols(b) != q.k) {
    throw InvalidArgument(std::string("vkml: triangular_solve: shapes do not fit: ") +
                          a.describe() + ", " + b.describe() + ", " + x.describe());
  }
  if (q.n == 0 || q.k == 0) return;
  q.a = a.address;
  q.b = b.address;
  q.x = x.address;
  q.mode = LINALG_TRSM;
  q.flags = (upper ? LINALG_UPPER : 0u) | (unit ? LINALG_UNIT : 0u) |
            (conj_a && dtype_is_complex(a.dtype) ? LINALG_CONJ_A : 0u) |
            (same_view(b, x) ? 0u : LINALG_COPY);
  record(dev, q, q.n * q.k, {&a, &b}, {&x});
}

void permute_rows(Device& dev, const TensorDesc& x, const TensorDesc& pivots, bool backward) {
  const char* op = "permute_rows";
  check_float(x, op);
  check_int32(pivots, op);
  LinalgParams q{};
  set_batch(q, x, Kind::kMatrix,
            {{&x, Kind::kMatrix, q.x_strides}, {&pivots, Kind::kVector, q.piv_strides}}, op);
  q.m = cols(pivots);
  q.n = rows(x);
  q.k = cols(x);
  if (q.m > q.n) {
    throw InvalidArgument(std::string("vkml: permute_rows: more pivots than rows: ") +
                          pivots.describe() + ", " + x.describe());
  }
  if (q.m == 0 || q.k == 0) return;
  q.x = x.address;
  q.piv = pivots.address;
  q.mode = LINALG_PERMUTE;
  q.flags = backward ? LINALG_BACKWARD : 0u;
  record(dev, q, q.k, {&pivots}, {&x});
}

void cholesky(Device& dev, const TensorDesc& l, const TensorDesc& info, const TensorDesc& a) {
  const char* op = "cholesky";
  check_float(l, op);
  check_same_dtype(l, a, op);
  check_int32(info, op);
  check_square(a, op);
  check_square(l, op);
  LinalgParams q{};
  set_batch(q, l, Kind::kMatrix,
            {{&l, Kind::kMatrix, q.x_strides},
             {&a, Kind::kMatrix, q.a_strides},
             {&info, Kind::kScalar, q.info_strides}},
            op);
  q.m = q.n = rows(l);
  if (rows(a) != q.n) {
    throw InvalidArgument(std::string("vkml: cholesky: shapes differ: ") + a.describe() + ", " +
                          l.describe());
  }
  q.a = a.address;
  q.x = l.address;
  q.info = info.address;
  q.mode = LINALG_CHOLESKY;
  q.flags = same_view(a, l) ? 0u : LINALG_COPY;
  record(dev, q, q.n * q.n, {&a}, {&l, &info});
}

namespace {

void det_common(Device& dev, const TensorDesc& out0, const TensorDesc* out1, const TensorDesc& lu,
                const TensorDesc& pivots, uint32_t flags) {
  const char* op = "det";
  check_float(lu, op);
  check_same_dtype(out0, lu, op);
  check_int32(pivots, op);
  check_square(lu, op);
  LinalgParams q{};
  set_batch(q, lu, Kind::kMatrix,
            {{&lu, Kind::kMatrix, q.x_strides},
             {&pivots, Kind::kVector, q.piv_strides},
             {&out0, Kind::kScalar, q.a_strides}},
            op);
  if (out1) {
    check_real_of(*out1, lu, op);
    set_batch(q, lu, Kind::kMatrix, {{out1, Kind::kScalar, q.b_strides}}, op);
    q.b = out1->address;
  }
  q.m = q.n = rows(lu);
  if (cols(pivots) != q.n) {
    throw InvalidArgument(std::string("vkml: det: pivots ") + pivots.describe() +
                          " do not fit " + lu.describe());
  }
  q.a = out0.address;
  q.x = lu.address;
  q.piv = pivots.address;
  q.mode = LINALG_DET;
  q.flags = flags;
  if (out1) {
    record(dev, q, 1, {&lu, &pivots}, {&out0, out1});
  } else {
    record(dev, q, 1, {&lu, &pivots}, {&out0});
  }
}

}  // namespace

void lu_det(Device& dev, const TensorDesc& det, const TensorDesc& lu, const TensorDesc& pivots) {
  det_common(dev, det, nullptr, lu, pivots, 0u);
}

void lu_slogdet(Device& dev, const TensorDesc& sign, const TensorDesc& logabsdet,
                const TensorDesc& lu, const TensorDesc& pivots) {
  det_common(dev, sign, &logabsdet, lu, pivots, LINALG_SLOGDET);
}

void geqrf(Device& dev, const TensorDesc& qr, const TensorDesc& tau, const TensorDesc& a) {
  const char* op = "geqrf";
  check_float(qr, op);
  check_same_dtype(qr, a, op);
  check_same_dtype(qr, tau, op);
  LinalgParams q{};
  set_batch(q, qr, Kind::kMatrix,
            {{&qr, Kind::kMatrix, q.x_strides},
             {&a, Kind::kMatrix, q.a_strides},
             {&tau, Kind::kVector, q.piv_strides}},
            op);
  q.m = rows(qr);
  q.n = cols(qr);
  if (rows(a) != q.m || cols(a) != q.n || cols(tau) != std::min(q.m, q.n)) {
    throw InvalidArgument(std::string("vkml: geqrf: shapes do not fit: ") + a.describe() + ", " +
                          qr.describe() + ", " + tau.describe());
  }
  if (q.m == 0 || q.n == 0) return;
  q.a = a.address;
  q.x = qr.address;
  q.piv = tau.address;
  q.mode = LINALG_GEQRF;
  q.flags = same_view(a, qr) ? 0u : LINALG_COPY;
  record(dev, q, std::max(q.m, q.n), {&a}, {&qr, &tau});
}

void householder_product(Device& dev, const TensorDesc& qm, const TensorDesc& reflectors,
                         const TensorDesc& tau) {
  const char* op = "householder_product";
  check_float(qm, op);
  check_same_dtype(qm, reflectors, op);
  check_same_dtype(qm, tau, op);
  LinalgParams q{};
  set_batch(q, qm, Kind::kMatrix,
            {{&qm, Kind::kMatrix, q.x_strides},
             {&reflectors, Kind::kMatrix, q.a_strides},
             {&tau, Kind::kVector, q.piv_strides}},
            op);
  q.m = rows(qm);
  q.n = cols(qm);
  q.k = cols(tau);
  if (rows(reflectors) != q.m || cols(reflectors) < q.k || q.k > q.n || q.n > q.m) {
    throw InvalidArgument(std::string("vkml: householder_product: shapes do not fit: ") +
                          reflectors.describe() + ", " + tau.describe() + ", " + qm.describe());
  }
  if (q.m == 0 || q.n == 0) return;
  q.a = reflectors.address;
  q.x = qm.address;
  q.piv = tau.address;
  q.mode = LINALG_ORGQR;
  record(dev, q, q.n, {&reflectors, &tau}, {&qm});
}

void apply_householder(Device& dev, const TensorDesc& x, const TensorDesc& reflectors,
                       const TensorDesc& tau, const TensorDesc& c, bool transpose,
                       bool conj_tau, bool conj_reflectors) {
  const char* op = "apply_householder";
  check_float(x, op);
  check_same_dtype(x, reflectors, op);
  check_same_dtype(x, tau, op);
  check_same_dtype(x, c, op);
  LinalgParams q{};
  set_batch(q, x, Kind::kMatrix,
            {{&x, Kind::kMatrix, q.x_strides},
             {&reflectors, Kind::kMatrix, q.a_strides},
             {&tau, Kind::kVector, q.piv_strides},
             {&c, Kind::kMatrix, q.b_strides}},
            op);
  q.m = rows(x);
  q.n = cols(x);
  q.k = cols(tau);
  if (rows(reflectors) != q.m || cols(reflectors) < q.k || q.k > q.m || rows(c) != q.m ||
      cols(c) != q.n) {
    throw InvalidArgument(std::string("vkml: apply_householder: shapes do not fit: ") +
                          reflectors.describe() + ", " + tau.describe() + ", " + c.describe());
  }
  if (q.m == 0 || q.n == 0) return;
  q.a = reflectors.address;
  q.b = c.address;
  q.x = x.address;
  q.piv = tau.address;
  q.mode = LINALG_ORMQR;
  const bool complex = dtype_is_complex(x.dtype);
  q.flags = (transpose ? LINALG_BACKWARD : 0u) | (same_view(c, x) ? 0u : LINALG_COPY) |
            (complex && conj_tau ? LINALG_CONJ_TAU : 0u) |
            (complex && conj_reflectors ? LINALG_CONJ_A : 0u);
  record(dev, q, q.n, {&reflectors, &tau, &c}, {&x});
}

void ldl_factor(Device& dev, const TensorDesc& ld, const TensorDesc& pivots,
                const TensorDesc& info, const TensorDesc& a, bool hermitian) {
  const char* op = "ldl_factor";
  check_float(ld, op);
  check_same_dtype(ld, a, op);
  check_int32(pivots, op);
  check_int32(info, op);
  check_square(a, op);
  LinalgParams q{};
  set_batch(q, ld, Kind::kMatrix,
            {{&ld, Kind::kMatrix, q.x_strides},
             {&a, Kind::kMatrix, q.a_strides},
             {&pivots, Kind::kVector, q.piv_strides},
             {&info, Kind::kScalar, q.info_strides}},
            op);
  q.m = q.n = rows(a);
  if (rows(ld) != q.n || cols(ld) != q.n || cols(pivots) != q.n) {
    throw InvalidArgument(std::string("vkml: ldl_factor: shapes do not fit: ") + a.describe() +
                          ", " + ld.describe() + ", " + pivots.describe());
  }
  q.a = a.address;
  q.x = ld.address;
  q.piv = pivots.address;
  q.info = info.address;
  q.mode = LINALG_LDL;
  q.flags = (same_view(a, ld) ? 0u : LINALG_COPY) |
            (hermitian && dtype_is_complex(a.dtype) ? LINALG_HERMITIAN : 0u);
  record(dev, q, q.n * q.n, {&a}, {&ld, &pivots, &info});
}

void ldl_solve(Device& dev, const TensorDesc& x, const TensorDesc& ld, const TensorDesc& pivots,
               const TensorDesc& b, bool hermitian) {
  const char* op = "ldl_solve";
  check_float(x, op);
  check_same_dtype(x, ld, op);
  check_same_dtype(x, b, op);
  check_int32(pivots, op);
  check_square(ld, op);
  LinalgParams q{};
  set_batch(q, x, Kind::kMatrix,
            {{&x, Kind::kMatrix, q.x_strides},
             {&ld, Kind::kMatrix, q.a_strides},
             {&b, Kind::kMatrix, q.b_strides},
             {&pivots, Kind::kVector, q.piv_strides}},
            op);
  q.n = rows(x);
  q.k = cols(x);
  if (rows(ld) != q.n || rows(b) != q.n || cols(b) != q.k || cols(pivots) != q.n) {
    throw InvalidArgument(std::string("vkml: ldl_solve: shapes do not fit: ") + ld.describe() +
                          ", " + b.describe() + ", " + x.describe());
  }
  if (q.n == 0 || q.k == 0) return;
  q.a = ld.address;
  q.b = b.address;
  q.x = x.address;
  q.piv = pivots.address;
  q.mode = LINALG_LDL_SOLVE;
  q.flags = (same_view(b, x) ? 0u : LINALG_COPY) |
            (hermitian && dtype_is_complex(x.dtype) ? LINALG_HERMITIAN : 0u);
  record(dev, q, q.k, {&ld, &b, &pivots}, {&x});
}

void symmetric_eigen(Device& dev, const TensorDesc& values, const TensorDesc* vectors,
                     const TensorDesc& a, const TensorDesc& work, const TensorDesc& rot) {
  const char* op = "symmetric_eigen";
  check_float(a, op);
  check_square(a, op);
  check_real_of(values, a, op);
  for (const TensorDesc* t : {&work, &rot}) check_same_dtype(a, *t, op);
  LinalgParams q{};
  set_batch(q, a, Kind::kMatrix,
            {{&a, Kind::kMatrix, q.a_strides},
             {&work, Kind::kMatrix, q.x_strides},
             {&values, Kind::kVector, q.piv_strides},
             {&rot, Kind::kVector, q.info_strides}},
            op);
  q.m = q.n = rows(a);
  if (rows(work) != q.n || cols(values) != q.n || cols(rot) < q.n + 1) {
    throw InvalidArgument(std::string("vkml: symmetric_eigen: shapes do not fit: ") +
                          a.describe() + ", " + values.describe() + ", " + rot.describe());
  }
  if (vectors) {
    check_same_dtype(a, *vectors, op);
    set_batch(q, a, Kind::kMatrix, {{vectors, Kind::kMatrix, q.b_strides}}, op);
    if (rows(*vectors) != q.n || cols(*vectors) != q.n) {
      throw InvalidArgument("vkml: symmetric_eigen: eigenvectors " + vectors->describe() +
                            " do not fit " + a.describe());
    }
    q.b = vectors->address;
    q.flags = LINALG_VECTORS;
  }
  if (q.n == 0) return;
  q.a = a.address;
  q.x = work.address;
  q.piv = values.address;
  q.info = rot.address;
  q.mode = LINALG_EIGH;
  std::vector<const TensorDesc*> writes = {&values, &work, &rot};
  if (vectors) writes.push_back(vectors);
  record(dev, q, q.n * q.n, {&a}, writes, "linalg_jacobi");
}

void svd_jacobi(Device& dev, const TensorDesc& s, const TensorDesc& u, const TensorDesc* v,
                const TensorDesc& a, const TensorDesc& rot) {
  const char* op = "svd_jacobi";
  check_float(a, op);
  check_real_of(s, a, op);
  for (const TensorDesc* t : {&u, &rot}) check_same_dtype(a, *t, op);
  LinalgParams q{};
  set_batch(q, a, Kind::kMatrix,
            {{&a, Kind::kMatrix, q.a_strides},
             {&u, Kind::kMatrix, q.x_strides},
             {&s, Kind::kVector, q.piv_strides},
             {&rot, Kind::kVector, q.info_strides}},
            op);
  q.m = rows(a);
  q.n = cols(a);
  if (q.m < q.n || rows(u) != q.m || cols(u) != q.n || cols(s) != q.n || cols(rot) < q.n + 1) {
    throw InvalidArgument(std::string("vkml: svd_jacobi: shapes do not fit (m >= n needed): ") +
                          a.describe() + ", " + u.describe() + ", " + s.describe());
  }
  if (v) {
    check_same_dtype(a, *v, op);
    set_batch(q, a, Kind::kMatrix, {{v, Kind::kMatrix, q.b_strides}}, op);
    if (rows(*v) != q.n || cols(*v) != q.n) {
      throw InvalidArgument("vkml: svd_jacobi: V " + v->describe() + " does not fit " +
                            a.describe());
    }
    q.b = v->address;
    q.flags = LINALG_VECTORS;
  }
  if (q.n == 0) return;
  q.a = a.address;
  q.x = u.address;
  q.piv = s.address;
  q.info = rot.address;
  q.mode = LINALG_SVD;
  q.flags |= same_view(a, u) ? 0u : LINALG_COPY;
  std::vector<const TensorDesc*> writes = {&s, &u, &rot};
  if (v) writes.push_back(v);
  record(dev, q, std::max(q.m, q.n) * ((q.n + 1) / 2), {&a}, writes, "linalg_jacobi");
}

}  // namespace vkml::ops
