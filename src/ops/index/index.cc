// The index family: gather/scatter along a dim, index_* ops and advanced indexing, each laid out
// as one IndexLaunch (see index_launch.h).
#include "vkml/index.h"

#include <string>

#include "ops/index/index_launch.h"
#include "vkml/errors.h"

namespace vkml::ops {

namespace {

IndexMode mode_of(ScatterReduce r) {
  switch (r) {
    case ScatterReduce::kNone: return IndexMode::kAssign;
    case ScatterReduce::kSum: return IndexMode::kSum;
    case ScatterReduce::kProd: return IndexMode::kProd;
    case ScatterReduce::kMax: return IndexMode::kMax;
    case ScatterReduce::kMin: return IndexMode::kMin;
  }
  return IndexMode::kAssign;
}

// A 0-dim tensor as a 1-dim tensor of one element: the ops below index dims.
TensorDesc at_least_1d(TensorDesc t) {
  if (t.ndim() == 0) {
    t.sizes = {1};
    t.strides = {1};
  }
  return t;
}

void check_same_dtype(const TensorDesc& a, const TensorDesc& b, const char* op) {
  if (a.dtype != b.dtype) {
    throw InvalidArgument(std::string("vkml: ") + op + ": dtypes differ: " + a.describe() +
                          " vs " + b.describe());
  }
}

// Gather/scatter along `dim`: the iteration shape is the index's; index values replace the
// coordinate along dim in self. Reductions walk dim serially.
IndexLaunch dim_launch(const TensorDesc& self_in, int dim, const TensorDesc& index_in,
                       const char* op) {
  TensorDesc self = at_least_1d(self_in), index = at_least_1d(index_in);
  check_dim(dim, self.ndim(), op);
  check_index_dtype(index, op);
  if (index.ndim() != self.ndim()) {
    throw InvalidArgument(std::string("vkml: ") + op + ": index and self need the same rank");
  }
  for (int d = 0; d < self.ndim(); ++d) {
    if (d != dim && index.sizes[d] > self.sizes[d]) {
      throw InvalidArgument(std::string("vkml: ") + op + ": index " + index.describe() +
                            " is larger than self " + self.describe() + " outside dim");
    }
  }
  IndexLaunch l;
  l.dtype = self.dtype;
  l.sizes = index.sizes;
  l.data = self.address;
  l.data_strides = strides_without(self, dim);
  l.data_range = range_of(self);
  l.indices.push_back(full_index(index, self.sizes[dim], self.strides[dim]));
  return l;
}

}  // namespace

void gather(Device& dev, const TensorDesc& out_in, const TensorDesc& self, int dim,
            const TensorDesc& index, uint64_t error_flag) {
  TensorDesc out = at_least_1d(out_in);
  check_same_dtype(out, self, "gather");
  IndexLaunch l = dim_launch(self, dim, index, "gather");
  if (out.sizes != l.sizes) throw InvalidArgument("vkml: gather: out must have index's shape");
  l.mode = IndexMode::kGather;
  l.values = out.address;
  l.value_strides = out.strides;
  l.values_range = range_of(out);
  l.error_flag = error_flag;
  launch_index(dev, l);
}

void scatter(Device& dev, const TensorDesc& self, int dim, const TensorDesc& index,
             const TensorDesc& src_in, ScatterReduce reduce, uint64_t error_flag) {
  TensorDesc src = at_least_1d(src_in);
  check_same_dtype(self, src, "scatter");
  IndexLaunch l = dim_launch(self, dim, index, "scatter");
  if (src.ndim() != static_cast<int>(l.sizes.size())) {
    throw InvalidArgument("vkml: scatter: src and index need the same rank");
  }
  for (size_t d = 0; d < l.sizes.size(); ++d) {
    if (l.sizes[d] > src.sizes[d]) throw InvalidArgument("vkml: scatter: index larger than src");
  }
  l.mode = mode_of(reduce);
  l.values = src.address;
  l.value_strides = src.strides;
  l.values_range = range_of(src);
  if (reduce != ScatterReduce::kNone) {
    l.serial.assign(l.sizes.size(), false);
    l.serial[dim] = true;
  }
  l.error_flag = error_flag;
  launch_index(dev, l);
}

void scatter_value(Device& dev, const TensorDesc& self, int dim, const TensorDesc& index,
                   Scalar value, ScatterReduce reduce, uint64_t error_flag) {
  IndexLaunch l = dim_launch(self, dim, index, "scatter");
  l.mode = mode_of(reduce);
  l.value_bits = scalar_bits(self.dtype, value);
  if (reduce != ScatterReduce::kNone) {
    l.serial.assign(l.sizes.size(), false);
    l.serial[dim] = true;
  }
  l.error_flag = error_flag;
  launch_index(dev, l);
}

void index_select(Device& dev, const TensorDesc& out_in, const TensorDesc& self_in, int dim,
                  const TensorDesc& index, uint64_t error_flag) {
  TensorDesc self = at_least_1d(self_in), out = at_least_1d(out_in);
  check_same_dtype(out, self, "index_select");
  check_dim(dim, self.ndim(), "index_select");
  check_index_dtype(index, "index_select");
  if (index.ndim() > 1) throw InvalidArgument("vkml: index_select: index must be 1-D");
  std::vector<int64_t> expect = self.sizes;
  expect[dim] = index.numel();
  if (out.sizes != expect) throw InvalidArgument("vkml: index_select: wrong out shape");
  IndexLaunch l;
  l.dtype = self.dtype;
  l.mode = IndexMode::kGather;
  l.sizes = out.sizes;
  l.data = self.address;
  l.data_strides = strides_without(self, dim);
  l.data_range = range_of(self);
  l.values = out.address;
  l.value_strides = out.strides;
  l.values_range = range_of(out);
  l.indices.push_back(vector_index(index, out.ndim(), dim, self.sizes[dim], self.strides[dim]));
  l.error_flag = error_flag;
  launch_index(dev, l);
}

void index_accumulate(Device& dev, const TensorDesc& self_in, int dim, const TensorDesc& index,
                      const TensorDesc& source_in, ScatterReduce reduce,
                      std::optional<Scalar> alpha, uint64_t error_flag) {
  TensorDesc self = at_least_1d(self_in), source = at_least_1d(source_in);
  check_same_dtype(self, source, "index_add");
  check_dim(dim, self.ndim(), "index_add");
  check_index_dtype(index, "index_add");
  if (index.ndim() > 1) throw InvalidArgument("vkml: index_add: index must be 1-D");
  if (source.ndim() != self.ndim() || source.sizes[dim] != index.numel()) {
    throw InvalidArgument("vkml: index_add: source " + source.describe() +
                          " does not match self " + self.describe());
  }
  for (int d = 0; d < self.ndim(); ++d) {
    if (d != dim && source.sizes[d] != self.sizes[d]) {
      throw InvalidArgument("vkml: index_add: source and self differ outside dim");
    }
  }
  IndexLaunch l;
  l.dtype = self.dtype;
  l.mode = mode_of(reduce);
  l.sizes = source.sizes;
  l.data = self.address;
  l.data_strides = strides_without(self, dim);
  l.data_range = range_of(self);
  l.values = source.address;
  l.value_strides = source.strides;
  l.values_range = range_of(source);
  l.indices.push_back(vector_index(index, self.ndim(), dim, self.sizes[dim], self.strides[dim]));
  if (reduce != ScatterReduce::kNone) {
    l.serial.assign(l.sizes.size(), false);
    l.serial[dim] = true;
  }
  if (alpha) {
    l.scale_by_alpha = true;
    l.alpha_f = alpha->is_float ? alpha->f : static_cast<double>(alpha->i);
    l.alpha_im = alpha->im;
    l.alpha_i = alpha->is_float ? static_cast<int64_t>(alpha->f) : alpha->i;
  }
  l.error_flag = error_flag;
  launch_index(dev, l);
}

void index_fill(Device& dev, const TensorDesc& self_in, int dim, const TensorDesc& index,
                Scalar value, const TensorDesc* value_tensor, uint64_t error_flag) {
  TensorDesc self = at_least_1d(self_in);
  check_dim(dim, self.ndim(), "index_fill");
  check_index_dtype(index, "index_fill");
  if (index.ndim() > 1) throw InvalidArgument("vkml: index_fill: index must be 1-D");
  IndexLaunch l;
  l.dtype = self.dtype;
  l.mode = IndexMode::kAssign;
  l.sizes = self.sizes;
  l.sizes[dim] = index.numel();
  l.data = self.address;
  l.data_strides = strides_without(self, dim);
  l.data_range = range_of(self);
  if (value_tensor) {
    if (value_tensor->numel() != 1) throw InvalidArgument("vkml: index_fill: value not scalar");
    check_same_dtype(self, *value_tensor, "index_fill");
    l.values = value_tensor->address;
    l.value_strides.assign(self.ndim(), 0);
    l.values_range = range_of(*value_tensor);
  } else {
    l.value_bits = scalar_bits(self.dtype, value);
  }
  l.indices.push_back(vector_index(index, self.ndim(), dim, self.sizes[dim], self.strides[dim]));
  l.allow_negative = true;
  l.error_flag = error_flag;
  launch_index(dev, l);
}

namespace {

// Where the broadcast index shape goes in the result: in place of the indexed dims when they
// are adjacent, else in front (NumPy's rule).
struct AdvancedLayout {
  std::vector<int64_t> shape;          // result shape
  std::vector<int> self_dim;           // per result dim: the self dim it walks, or -1 (index)
  std::vector<int> index_dim;          // per result dim: the index-shape dim, or -1
  std::vector<int> indexed;            // self dims that are indexed, in order
  std::vector<int64_t> index_sizes;    // the common index shape
};

AdvancedLayout advanced_layout(const TensorDesc& self,
                               const std::vector<std::optional<TensorDesc>>& indices) {
  if (static_cast<int>(indices.size()) > self.ndim()) {
    throw InvalidArgument("vkml: too many indices for tensor of dimension " +
                          std::to_string(self.ndim()));
  }
  AdvancedLayout a;
  bool have = false;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d]) continue;
    check_index_dtype(*indices[d], "index");
    if (have && indices[d]->sizes != a.index_sizes) {
      throw InvalidArgument("vkml: index tensors must be broadcast to one shape first");
    }
    a.index_sizes = indices[d]->sizes;
    have = true;
    a.indexed.push_back(static_cast<int>(d));
  }
  bool adjacent = a.indexed.empty() || a.indexed.back() - a.indexed.front() + 1 ==
                                           static_cast<int>(a.indexed.size());
  int insert_at = a.indexed.empty() ? 0 : (adjacent ? a.indexed.front() : 0);
  auto push_index_dims = [&] {
    for (size_t j = 0; j < a.index_sizes.size(); ++j) {
      a.shape.push_back(a.index_sizes[j]);
      a.self_dim.push_back(-1);
      a.index_dim.push_back(static_cast<int>(j));
    }
  };
  auto is_indexed = [&](int d) {
    return d < static_cast<int>(indices.size()) && indices[d].has_value();
  };
  if (!adjacent) push_index_dims();
  for (int d = 0; d < self.ndim(); ++d) {
    if (adjacent && have && d == insert_at) push_index_dims();
    if (is_indexed(d)) continue;
    a.shape.push_back(self.sizes[d]);
    a.self_dim.push_back(d);
    a.index_dim.push_back(-1);
  }
  return a;
}

IndexLaunch advanced_launch(const TensorDesc& self,
                            const std::vector<std::optional<TensorDesc>>& indices,
                            const AdvancedLayout& a) {
  IndexLaunch l;
  l.dtype = self.dtype;
  l.sizes = a.shape;
  l.data = self.address;
  l.data_range = range_of(self);
  const size_t nd = a.shape.size();
  for (size_t r = 0; r < nd; ++r) {
    l.data_strides.push_back(a.self_dim[r] >= 0 ? self.strides[a.self_dim[r]] : 0);
  }
  for (int d : a.indexed) {
    const TensorDesc& ix = *indices[d];
    IndexOperandLayout op;
    op.address = ix.address;
    op.dtype = ix.dtype;
    for (size_t r = 0; r < nd; ++r) {
      op.strides.push_back(a.index_dim[r] >= 0 ? ix.strides[a.index_dim[r]] : 0);
    }
    op.limit = self.sizes[d];
    op.stride = self.strides[d];
    op.range = range_of(ix);
    l.indices.push_back(op);
  }
  l.allow_negative = true;
  return l;
}

}  // namespace

std::vector<int64_t> advanced_index_shape(const TensorDesc& self,
                                          const std::vector<std::optional<TensorDesc>>& indices) {
  return advanced_layout(self, indices).shape;
}

void advanced_index(Device& dev, const TensorDesc& out, const TensorDesc& self,
                    const std::vector<std::optional<TensorDesc>>& indices, uint64_t error_flag) {
  AdvancedLayout a = advanced_layout(self, indices);
  check_same_dtype(out, self, "index");
  if (out.sizes != a.shape) throw InvalidArgument("vkml: index: wrong out shape");
  IndexLaunch l = advanced_launch(self, indices, a);
  l.mode = IndexMode::kGather;
  l.values = out.address;
  l.value_strides = out.strides;
  l.values_range = range_of(out);
  l.error_flag = error_flag;
  launch_index(dev, l);
}

void advanced_index_put(Device& dev, const TensorDesc& self,
                        const std::vector<std::optional<TensorDesc>>& indices,
                        const TensorDesc& values, bool accumulate, uint64_t error_flag) {
  AdvancedLayout a = advanced_layout(self, indices);
  check_same_dtype(values, self, "index_put");
  if (values.sizes != a.shape) {
    throw InvalidArgument("vkml: index_put: values must be broadcast to the result shape");
  }
  IndexLaunch l = advanced_launch(self, indices, a);
  l.mode = accumulate ? IndexMode::kSum : IndexMode::kAssign;
  l.values = values.address;
  l.value_strides = values.strides;
  l.values_range = range_of(values);
  if (accumulate) {
    // Only positions along the index shape can collide: walk those in order.
    for (size_t r = 0; r < a.shape.size(); ++r) l.serial.push_back(a.index_dim[r] >= 0);
  }
  l.error_flag = error_flag;
  launch_index(dev, l);
}

namespace {

// Iteration over index's shape; operand 0 holds flat positions into self.
IndexLaunch flat_launch(const TensorDesc& self, const TensorDesc& index, const char* op) {
  check_index_dtype(index, op);
  IndexLaunch l;
  l.dtype = self.dtype;
  l.sizes = index.sizes;
  l.data = self.address;
  l.data_strides.assign(index.ndim(), 0);
  l.data_range = range_of(self);
  l.indices.push_back(full_index(index, self.numel(), 1));
  l.flat_sizes = self.sizes;
  l.flat_strides = self.strides;
  l.allow_negative = true;
  return l;
}

}  // namespace

void take(Device& dev, const TensorDesc& out, const TensorDesc& self, const TensorDesc& index,
          uint64_t error_flag) {
  check_same_dtype(out, self, "take");
  if (out.sizes != index.sizes) throw InvalidArgument("vkml: take: out must have index's shape");
  IndexLaunch l = flat_launch(self, index, "take");
  l.mode = IndexMode::kGather;
  l.values = out.address;
  l.value_strides = out.strides;
  l.values_range = range_of(out);
  l.error_flag = error_flag;
  launch_index(dev, l);
}

void put(Device& dev, const TensorDesc& self, const TensorDesc& index, const TensorDesc& source,
         bool accumulate, uint64_t error_flag) {
  check_same_dtype(self, source, "put");
  if (source.sizes != index.sizes) {
    throw InvalidArgument("vkml: put: source must have index's shape");
  }
  IndexLaunch l = flat_launch(self, index, "put");
  l.mode = accumulate ? IndexMode::kSum : IndexMode::kAssign;
  l.values = source.address;
  l.value_strides = source.strides;
  l.values_range = range_of(source);
  if (accumulate) l.serial.assign(l.sizes.size(), true);
  l.error_flag = error_flag;
  launch_index(dev, l);
}

void divide_by_counts(Device& dev, const TensorDesc& self, const TensorDesc& counts) {
  check_same_dtype(self, counts, "divide_by_counts");
  if (self.sizes != counts.sizes) throw InvalidArgument("vkml: divide_by_counts: shapes differ");
  IndexLaunch l;
  l.dtype = self.dtype;
  l.mode = IndexMode::kDiv;
  l.sizes = self.sizes;
  l.data = self.address;
  l.data_strides = self.strides;
  l.data_range = range_of(self);
  l.values = counts.address;
  l.value_strides = counts.strides;
  l.values_range = range_of(counts);
  launch_index(dev, l);
}

}  // namespace vkml::ops
