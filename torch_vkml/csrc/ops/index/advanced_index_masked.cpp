// Advanced (NumPy) indexing and mask ops: index.Tensor, _index_put_impl_ (index_put_),
// masked_fill_, masked_scatter_, masked_select, nonzero, nonzero_static and where.
// Index tensors may come from the CPU (PyTorch allows it): those are range-checked on the CPU
// and uploaded; device index tensors are checked by the kernel (see BadIndexCheck). Boolean
// masks become index tensors through nonzero, whose output size needs one host sync.
// complex64 tensors run on the same kernels as kC64 elements (nonzero: either part nonzero);
// complex128 indexing runs on (real, imaginary) double pairs.
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TensorAdvancedIndexingUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/result_type.h>
#include <ATen/ops/view_as_complex.h>
#include <ATen/ops/view_as_real.h>
#include <ATen/ops/where.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "common/index_util.h"

namespace torch_vkml::ops_advanced_index_masked {

// ---- nonzero and friends (mask scans) -----------------------------------------------------

// A byte scratch tensor on self's device for a mask scan over numel elements.
at::Tensor scan_scratch(const at::Tensor& like, int64_t numel) {
  return at::empty({static_cast<int64_t>(vkml::ops::MaskScan::scratch_bytes(numel))},
                   like.options().dtype(at::kByte));
}

uint64_t address_of(const at::Tensor& t) { return reinterpret_cast<uint64_t>(t.data_ptr()); }

// out (resized to (n, ndim), int64) = nonzero(self).
void nonzero_into(at::Tensor& out, const at::Tensor& self) {
  c10::DeviceGuard guard(self.device());
  check_element_dtype(self);
  vkml::Device& d = core_device(self);
  at::Tensor scratch = scan_scratch(self, self.numel());
  translate_errors([&] {
    vkml::ops::MaskScan scan(d, to_element_desc(self), address_of(scratch));
    int64_t n = scan.total();  // the output size depends on the data: one host sync
    at::native::resize_output(out, {n, self.dim()});
    scan.write_nonzero(to_desc(out));
  });
}

at::Tensor nonzero_kernel(const at::Tensor& self) {
  at::Tensor out = at::empty({0}, self.options().dtype(at::kLong));
  nonzero_into(out, self);
  return out;
}

at::Tensor& nonzero_out(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kLong,
              "nonzero: Expected out tensor to have scalar type Long but got scalar type",
              out.scalar_type());
  check_same_device(self, out, "nonzero");
  nonzero_into(out, self);
  return out;
}

// Boolean masks (and deprecated uint8 ones) become one index tensor per mask dim.
std::vector<at::Tensor> mask_to_indices(const at::Tensor& mask) {
  at::Tensor nz = on_vkml(mask) ? nonzero_kernel(mask) : at::nonzero(mask);
  std::vector<at::Tensor> cols;
  for (int64_t j = 0; j < mask.dim(); ++j) cols.push_back(nz.select(1, j));
  return cols;
}

// nonzero_static(x, size, fill): the first `size` coordinates of nonzero elements in row-major
// order, padded with fill, without reading the count back: each nonzero element's rank (an
// inclusive scan of the mask) is its output row; elements ranked beyond `size`, and zeros, are
// sent to a spare row past the end, which is dropped.
at::Tensor nonzero_static(const at::Tensor& x, int64_t size, int64_t fill_value) {
  TORCH_CHECK(size >= 0, "nonzero_static: 'size' must be an non-negative integer, but got size: ",
              size);
  const int64_t dims = x.dim();
  at::TensorOptions index_options = x.options().dtype(at::kLong);
  at::Tensor rows = at::full({size + 1, dims}, fill_value, index_options);
  if (x.numel() > 0 && dims > 0 && size > 0) {
    at::Tensor mask = at::ne(x, 0).reshape({-1});
    at::Tensor rank = at::cumsum(mask, 0, at::kLong).sub_(1);
    at::Tensor keep = at::logical_and(mask, at::lt(rank, size));
    at::Tensor target = at::where(keep, rank, at::scalar_tensor(size, index_options));
    at::Tensor flat = at::arange(x.numel(), index_options);
    std::vector<at::Tensor> coords;
    int64_t stride = 1;
    coords.resize(dims);
    for (int64_t d = dims - 1; d >= 0; --d) {
      coords[d] = at::remainder(at::div(flat, stride, "floor"), x.size(d));
      stride *= x.size(d);
    }
    rows.index_copy_(0, target, at::stack(coords, 1));
  }
  return rows.narrow(0, 0, size).clone();
}

// ---- advanced indexing --------------------------------------------------------------------

struct PreparedIndices {
  std::vector<std::optional<at::Tensor>> per_dim;  // on self's device, broadcast to one shape
  std::vector<int64_t> dims;                       // self dim of the k-th index operand
  bool device_checks = false;                      // some index came from the device
};

PreparedIndices prepare_indices(const at::Tensor& self,
                                const c10::List<std::optional<at::Tensor>>& indices) {
  at::native::checkIndexTensorTypes(indices, /*allow_int=*/true);
  TORCH_CHECK_INDEX(static_cast<int64_t>(indices.size()) <= self.dim(),
                    "too many indices for tensor of dimension ", self.dim(), " (got ",
                    indices.size(), ")");
  PreparedIndices p;
  std::vector<std::optional<at::Tensor>> expanded;
  for (const std::optional<at::Tensor>& opt : indices) {
    if (!opt.has_value() || !opt->defined()) {
      expanded.emplace_back();
      continue;
    }
    const at::Tensor& ix = *opt;
    if (on_vkml(ix)) check_same_device(self, ix, "index");
    if (ix.scalar_type() == at::kByte || ix.scalar_type() == at::kBool) {
      if (ix.scalar_type() == at::kByte) {
        TORCH_WARN("indexing with dtype torch.uint8 is now deprecated,"
                   " please use a dtype torch.bool instead.");
      }
      for (int64_t j = 0; j < ix.dim(); ++j) {
        int64_t src = static_cast<int64_t>(expanded.size()) + j;
        TORCH_CHECK_INDEX(src < self.dim(), "too many indices for tensor of dimension ",
                          self.dim());
        TORCH_CHECK_INDEX(ix.size(j) == self.size(src), "The shape of the mask ", ix.sizes(),
                          " at index ", j, " does not match the shape of the indexed tensor ",
                          self.sizes(), " at index ", src);
      }
      for (at::Tensor& col : mask_to_indices(ix)) expanded.emplace_back(std::move(col));
    } else {
      expanded.emplace_back(ix);
    }
  }
  TORCH_CHECK_INDEX(static_cast<int64_t>(expanded.size()) <= self.dim(),
                    "too many indices for tensor of dimension ", self.dim());
  // Broadcast the index tensors together (NumPy's rules).
  std::vector<int64_t> shape;
  bool first = true;
  std::string shapes;
  for (const auto& e : expanded) {
    if (!e) continue;
    shapes += (shapes.empty() ? "" : ", ") + c10::str(e->sizes());
  }
  for (const auto& e : expanded) {
    if (!e) continue;
    try {
      shape = first ? e->sizes().vec() : at::infer_size(shape, e->sizes());
    } catch (const std::exception&) {
      TORCH_CHECK_INDEX(false, "shape mismatch: indexing tensors could not be broadcast "
                               "together with shapes ", shapes);
    }
    first = false;
  }
  for (size_t d = 0; d < expanded.size(); ++d) {
    if (!expanded[d]) {
      p.per_dim.emplace_back();
      continue;
    }
    at::Tensor ix = *expanded[d];
    int64_t size = self.size(static_cast<int64_t>(d));
    // As the CPU: any index into an empty dimension is out of bounds, even when the result is
    // empty anyway (no kernel would run to find it).
    TORCH_CHECK_INDEX(size != 0 || ix.numel() == 0,
                      "index is out of bounds for dimension with size 0");
    if (on_vkml(ix)) {
      p.device_checks = true;
    } else {
      check_cpu_index_range(ix, size, true, BadIndexError::kIndex, "", static_cast<int64_t>(d));
      ix = ix.to(self.device());
    }
    p.per_dim.emplace_back(ix.expand(shape));
    p.dims.push_back(static_cast<int64_t>(d));
  }
  return p;
}

std::vector<std::optional<vkml::TensorDesc>> descs_of(const PreparedIndices& p) {
  std::vector<std::optional<vkml::TensorDesc>> out;
  for (const auto& ix : p.per_dim) {
    if (ix) {
      out.emplace_back(to_desc(*ix));
    } else {
      out.emplace_back();
    }
  }
  return out;
}

void raise_bad_index(BadIndexCheck& check, const at::Tensor& self, const PreparedIndices& p) {
  check.raise_if_bad(BadIndexError::kIndex, [&](int64_t v, uint32_t k) {
    int64_t dim = p.dims.at(k);
    return out_of_bounds_message(v, dim, self.size(dim));
  });
}

void index_into(at::Tensor* out, const at::Tensor& self,
                const c10::List<std::optional<at::Tensor>>& indices) {
  check_element_dtype(self);
  c10::DeviceGuard guard(self.device());
  PreparedIndices p = prepare_indices(self, indices);
  auto descs = descs_of(p);
  vkml::Device& d = core_device(self);
  std::vector<int64_t> shape = translate_errors(
      [&] { return vkml::ops::advanced_index_shape(to_element_desc(self), descs); });
  if (out->defined()) {
    prepare_out(*out, self, shape, self.scalar_type());
    at::assert_no_internal_overlap(*out);
    at::assert_no_overlap(*out, self);
  } else {
    *out = at::empty(shape, self.options());
  }
  if (out->numel() == 0) return;
  BadIndexCheck check(self, p.device_checks);
  translate_errors([&] {
    vkml::ops::advanced_index(d, to_element_desc(*out), to_element_desc(self), descs,
                              check.address());
  });
  raise_bad_index(check, self, p);
}

at::Tensor index_tensor(const at::Tensor& self,
                        const c10::List<std::optional<at::Tensor>>& indices) {
  if (self.scalar_type() == at::kComplexDouble) {
    // complex128 values gather as (real, imaginary) double pairs: the pair is a trailing dim.
    at::Tensor pairs = at::view_as_real(self.resolve_conj().resolve_neg());
    return at::view_as_complex(index_tensor(pairs, indices));
  }
  at::Tensor out;
  index_into(&out, self, indices);
  return out;
}

at::Tensor& index_tensor_out(const at::Tensor& self,
                             const c10::List<std::optional<at::Tensor>>& indices,
                             at::Tensor& out) {
  check_same_device(self, out, "index");
  if (self.scalar_type() == at::kComplexDouble || out.scalar_type() == at::kComplexDouble) {
    at::Tensor r = index_tensor(self, indices);
    at::native::resize_output(out, r.sizes());
    return out.copy_(r);
  }
  index_into(&out, self, indices);
  return out;
}

at::Tensor& masked_fill_scalar_(at::Tensor& self, const at::Tensor& mask, const at::Scalar& v);

at::Tensor& index_put_impl_(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                            const at::Tensor& values, bool accumulate, bool unsafe) {
  check_element_dtype(self);
  c10::DeviceGuard guard(self.device());
  if (!accumulate) {
    // A single boolean mask and a one-element CPU value: masked_fill_, no nonzero sync.
    auto [use_mask, mask] = at::native::canDispatchToMaskedFill(self, indices, values);
    if (use_mask) return masked_fill_scalar_(self, mask, values.item());
  }
  at::Tensor v = values;
  if (!on_vkml(v)) {
    TORCH_CHECK(v.numel() == 1 && v.dim() == 0,
                "Expected all tensors to be on the same device, but found at least two devices, ",
                self.device(), " and ", v.device(), "! (index_put_ values)");
    v = v.to(self.device());
  }
  check_same_device(self, v, "index_put_");
  TORCH_CHECK(v.scalar_type() == self.scalar_type(),
              "Index put requires the source and destination dtypes match, got ",
              self.scalar_type(), " for the destination and ", v.scalar_type(),
              " for the source.");
  at::assert_no_overlap(self, v);
  PreparedIndices p = prepare_indices(self, indices);
  for (const auto& ix : p.per_dim) {
    if (ix) at::assert_no_overlap(self, *ix);
  }
  auto descs = descs_of(p);
  vkml::Device& d = core_device(self);
  std::vector<int64_t> shape = translate_errors(
      [&] { return vkml::ops::advanced_index_shape(to_element_desc(self), descs); });
  TORCH_CHECK(at::is_expandable_to(v.sizes(), shape), "shape mismatch: value tensor of shape ",
              v.sizes(), " cannot be broadcast to indexing result of shape ",
              c10::IntArrayRef(shape));
  at::Tensor ve = v.expand(shape);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  if (n == 0) return self;
  BadIndexCheck check(self, p.device_checks);
  translate_errors([&] {
    vkml::ops::advanced_index_put(d, to_element_desc(self), descs, to_element_desc(ve),
                                  accumulate, check.address());
  });
  raise_bad_index(check, self, p);
  return self;
}

// ---- masked_fill_ / masked_scatter_ / masked_select ---------------------------------------

at::Tensor mask_on_self(const at::Tensor& self, const at::Tensor& mask, const char* op) {
  check_same_device(self, mask, op);
  return mask.expand(self.sizes());
}

at::Tensor& masked_fill_scalar_(at::Tensor& self, const at::Tensor& mask, const at::Scalar& v) {
  check_element_dtype(self);
  TORCH_CHECK(mask.scalar_type() == at::kBool,
              "masked_fill_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  at::Tensor m = mask_on_self(self, mask, "masked_fill_");
  if (self.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  vkml::Device& d = core_device(self);
  translate_errors([&] {
    vkml::ops::masked_fill(d, to_element_desc(self), to_desc(m),
                           to_element_scalar(v, self.scalar_type()));
  });
  return self;
}

at::Tensor& masked_fill_tensor_(at::Tensor& self, const at::Tensor& mask,
                                const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0,
              "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  if (!on_vkml(value)) return masked_fill_scalar_(self, mask, value.item());
  check_element_dtype(self);
  check_same_device(self, value, "masked_fill_");
  TORCH_CHECK(mask.scalar_type() == at::kBool,
              "masked_fill_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  at::Tensor m = mask_on_self(self, mask, "masked_fill_");
  if (self.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  at::Tensor vv = value.scalar_type() == self.scalar_type() ? value : value.to(self.scalar_type());
  vkml::Device& d = core_device(self);
  translate_errors([&] {
    vkml::TensorDesc vd = to_element_desc(vv);
    vkml::ops::masked_fill(d, to_element_desc(self), to_desc(m), {}, &vd);
  });
  return self;
}

at::Tensor& masked_scatter_(at::Tensor& self, const at::Tensor& mask, const at::Tensor& source) {
  check_element_dtype(self);
  TORCH_CHECK(mask.scalar_type() == at::kBool,
              "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  TORCH_CHECK(self.scalar_type() == source.scalar_type(),
              "masked_scatter: expected self and source to have same dtypes but got",
              self.scalar_type(), " and ", source.scalar_type());
  check_same_device(self, source, "masked_scatter_");
  at::Tensor m = mask_on_self(self, mask, "masked_scatter_");
  if (self.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  vkml::Device& d = core_device(self);
  at::Tensor scratch = scan_scratch(self, self.numel());
  translate_errors([&] {
    vkml::ops::MaskScan scan(d, to_desc(m), address_of(scratch));
    if (device_index_checks_enabled()) {
      TORCH_CHECK(scan.total() <= source.numel(),
                  "Number of elements of source < number of ones in mask");
    }
    scan.write_scatter(to_element_desc(self), to_element_desc(source));
  });
  return self;
}

void masked_select_into(at::Tensor* out, const at::Tensor& self, const at::Tensor& mask) {
  check_element_dtype(self);
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_select: expected BoolTensor for mask");
  check_same_device(self, mask, "masked_select");
  std::vector<int64_t> shape = at::infer_size(self.sizes(), mask.sizes());
  at::Tensor s = self.expand(shape), m = mask.expand(shape);
  c10::DeviceGuard guard(self.device());
  vkml::Device& d = core_device(self);
  at::Tensor scratch = scan_scratch(self, m.numel());
  translate_errors([&] {
    vkml::ops::MaskScan scan(d, to_desc(m), address_of(scratch));
    int64_t n = scan.total();  // the output size depends on the data: one host sync
    if (out->defined()) {
      prepare_out(*out, self, {n}, self.scalar_type());
    } else {
      *out = at::empty({n}, self.options());
    }
    scan.write_select(to_element_desc(*out), to_element_desc(s));
  });
}

at::Tensor masked_select(const at::Tensor& self, const at::Tensor& mask) {
  at::Tensor out;
  masked_select_into(&out, self, mask);
  return out;
}

at::Tensor& masked_select_out(const at::Tensor& self, const at::Tensor& mask, at::Tensor& out) {
  check_same_device(self, out, "masked_select");
  masked_select_into(&out, self, mask);
  return out;
}

// ---- where --------------------------------------------------------------------------------

// The device tensor among where's operands (CPU 0-dim tensors act as scalars).
const at::Tensor& where_anchor(const at::Tensor& c, const at::Tensor& a, const at::Tensor& b) {
  if (on_vkml(a)) return a;
  if (on_vkml(b)) return b;
  return c;
}

void where_into(at::Tensor* out, const at::Tensor& cond, const at::Tensor& self,
                const at::Tensor& other) {
  TORCH_CHECK(cond.scalar_type() == at::kBool || cond.scalar_type() == at::kByte,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              cond.scalar_type());
  if (cond.scalar_type() == at::kByte) {
    TORCH_WARN_ONCE("where received a uint8 condition tensor. This behavior is deprecated and "
                    "will be removed in a future version of PyTorch. Use a boolean condition "
                    "instead.");
  }
  const at::Tensor& anchor = where_anchor(cond, self, other);
  for (const at::Tensor* t : {&cond, &self, &other}) {
    TORCH_CHECK(on_vkml(*t) ? t->device() == anchor.device() : t->dim() == 0,
                "Expected all tensors to be on the same device, but found at least two "
                "devices, ", anchor.device(), " and ", t->device(), "!");
  }
  at::ScalarType rt = at::result_type(self, other);
  std::vector<int64_t> shape = at::infer_size(at::infer_size(cond.sizes(), self.sizes()),
                                              other.sizes());
  c10::DeviceGuard guard(anchor.device());
  if (at::isComplexType(rt)) {
    // Complex values select as (real, imaginary) float pairs.
    auto pairs = [&](const at::Tensor& t) {
      return at::view_as_real(t.to(anchor.device()).to(rt).resolve_conj().resolve_neg()
                                  .expand(shape));
    };
    at::Tensor c = cond.to(anchor.device()).expand(shape).unsqueeze(-1);
    at::Tensor res = at::view_as_complex(at::where(c, pairs(self), pairs(other)));
    if (!out->defined()) {
      *out = res;
      return;
    }
    TORCH_CHECK(out->scalar_type() == rt, "Expected out type to be ", rt, " but got ",
                out->scalar_type());
    prepare_out(*out, anchor, shape, rt);
    out->copy_(res);
    return;
  }
  TORCH_CHECK_NOT_IMPLEMENTED(is_supported_dtype(rt), "vkml: dtype ", rt, " is not supported");
  if (out->defined()) {
    TORCH_CHECK(out->scalar_type() == rt, "Expected out type to be ", rt, " but got ",
                out->scalar_type());
    prepare_out(*out, anchor, shape, rt);
  } else {
    *out = at::empty(shape, anchor.options().dtype(rt));
  }
  if (out->numel() == 0) return;
  // Device operands in the result dtype, laid out on the result shape; CPU ones as scalars.
  std::vector<at::Tensor> keep;
  std::vector<vkml::TensorDesc> descs(3);
  vkml::ops::SelectOperand ops[3];
  const at::Tensor* ins[3] = {&cond, &self, &other};
  for (int k = 0; k < 3; ++k) {
    const at::Tensor& t = *ins[k];
    if (on_vkml(t)) {
      at::Tensor v = (k == 0 || t.scalar_type() == rt) ? t : t.to(rt);
      keep.push_back(v.expand(shape));
      descs[k] = to_desc(keep.back());
      ops[k].tensor = &descs[k];
    } else {
      vkml::DType dt = k == 0 ? vkml::DType::kU8 : to_core_dtype(rt);
      ops[k].bits = vkml::ops::scalar_bits(dt, to_core_scalar(t.item()));
    }
  }
  vkml::Device& d = core_device(anchor);
  translate_errors([&] { vkml::ops::where(d, to_desc(*out), ops[0], ops[1], ops[2]); });
}

at::Tensor where_self(const at::Tensor& cond, const at::Tensor& self, const at::Tensor& other) {
  at::Tensor out;
  where_into(&out, cond, self, other);
  return out;
}

at::Tensor& where_self_out(const at::Tensor& cond, const at::Tensor& self,
                           const at::Tensor& other, at::Tensor& out) {
  where_into(&out, cond, self, other);
  return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("nonzero", nonzero_kernel);
  m.impl("nonzero.out", nonzero_out);
  m.impl("nonzero_static", nonzero_static);
  m.impl("index.Tensor", index_tensor);
  m.impl("index.Tensor_out", index_tensor_out);
  m.impl("_index_put_impl_", index_put_impl_);
  m.impl("masked_fill_.Scalar", masked_fill_scalar_);
  m.impl("masked_fill_.Tensor", masked_fill_tensor_);
  m.impl("masked_scatter_", masked_scatter_);
  m.impl("masked_select", masked_select);
  m.impl("masked_select.out", masked_select_out);
  m.impl("where.self", where_self);
  m.impl("where.self_out", where_self_out);
}

}  // namespace torch_vkml::ops_advanced_index_masked
