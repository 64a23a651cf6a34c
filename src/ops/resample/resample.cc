// The resample family: upsampling and reflection/replication padding (resample.comp) and
// im2col/col2im (unfold.comp), forward and backward.
#include "vkml/resample.h"

#include <string>

#include "ops/nn_util.h"
#include "ops/resample/resample_params.h"
#include "ops/resample/unfold_params.h"
#include "vkml/errors.h"

namespace vkml::ops {

namespace {

constexpr uint32_t kWorkgroup = 256;

bool is_pad(ResampleMode m) {
  return m == ResampleMode::kPadReflect || m == ResampleMode::kPadReplicate;
}
bool one_tap(ResampleMode m) {
  return is_pad(m) || m == ResampleMode::kNearest || m == ResampleMode::kNearestExact;
}

// Fills the spatial part of one side from the trailing `spatial` dims (size 1 for missing dims).
void spatial(const TensorDesc& t, int spatial_dims, int64_t* sizes, int64_t* strides) {
  int lead = t.ndim() - spatial_dims;
  for (int k = 0; k < 3; ++k) {
    int d = lead + k - (3 - spatial_dims);
    sizes[k] = d >= lead ? t.sizes[d] : 1;
    strides[k] = d >= lead ? t.strides[d] : 0;
  }
}

// PyTorch's area_pixel_compute_scale in double (rounded to float later for float math: double
// rounding of one division is innocuous, so this equals the CPU's float computation).
double ratio(int64_t in, int64_t out, bool align_corners, double scale, ResampleMode mode) {
  bool linear = mode == ResampleMode::kLinear || mode == ResampleMode::kCubic;
  if (linear && align_corners) {
    return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  }
  if (scale > 0) return 1.0 / scale;
  return static_cast<double>(in) / static_cast<double>(out);
}

// a = input side, b = output side.
ResampleParams make_params(const ResampleSpec& spec, const TensorDesc& a, const TensorDesc& b,
                           int spatial_dims, bool backward) {
  const char* op = backward ? "resample backward" : "resample";
  if (spatial_dims < 1 || spatial_dims > 3) {
    throw InvalidArgument(std::string("vkml: ") + op + ": 1 to 3 spatial dims, got " +
                          std::to_string(spatial_dims));
  }
  int lead = a.ndim() - spatial_dims;
  if (lead < 0 || b.ndim() != a.ndim() ||
      !std::equal(a.sizes.begin(), a.sizes.begin() + lead, b.sizes.begin())) {
    throw InvalidArgument(std::string("vkml: ") + op + ": input " + a.describe() + " and output " +
                          b.describe() + " do not match");
  }
  ResampleParams p{};
  p.mode = static_cast<uint32_t>(spec.mode);
  p.align_corners = spec.align_corners ? 1 : 0;
  if (!backward && one_tap(spec.mode) && a.dtype == b.dtype) {
    p.raw_bytes = static_cast<uint32_t>(dtype_size(a.dtype));
  } else {
    p.a_dtype = nn::float_code(a, op);
    p.b_dtype = nn::float_code(b, op);
  }
  spatial(a, spatial_dims, p.a_size, p.a_strides);
  spatial(b, spatial_dims, p.b_size, p.b_strides);
  for (int k = 0; k < 3; ++k) {
    bool used = k >= 3 - spatial_dims;
    if (is_pad(spec.mode)) {
      p.pad_before[k] = used ? spec.pad_before[k] : 0;
      if (spec.mode == ResampleMode::kPadReflect &&
          (p.pad_before[k] >= p.a_size[k] || p.b_size[k] - p.a_size[k] - p.pad_before[k] >=
                                                     p.a_size[k])) {
        throw InvalidArgument(std::string("vkml: ") + op +
                              ": reflection padding must be smaller than the input");
      }
    } else {
      double r = ratio(p.a_size[k], p.b_size[k], spec.align_corners, used ? spec.scales[k] : 0,
                       spec.mode);
      p.scale_d[k] = r;
      p.scale_f[k] = static_cast<float>(r);
    }
    if (p.a_size[k] == 0 && p.b_size[k] != 0 && b.numel() != 0) {
      throw InvalidArgument(std::string("vkml: ") + op + ": empty input dims");
    }
  }
  // The CPU's generic upsampling kernel stores linear/cubic weights in the data type (f16/bf16
  // results then differ from float weights by an ulp); its bilinear 2-D kernel keeps them float.
  bool weighted = spec.mode == ResampleMode::kCubic ||
                  (spec.mode == ResampleMode::kLinear && spatial_dims != 2);
  p.round_weights =
      !backward && weighted && (a.dtype == DType::kF16 || a.dtype == DType::kBF16) ? 1 : 0;
  // Leading dims, coalesced over both sides.
  std::vector<int64_t> sizes(a.sizes.begin(), a.sizes.begin() + lead);
  std::vector<int64_t> as(a.strides.begin(), a.strides.begin() + lead);
  std::vector<int64_t> bs(b.strides.begin(), b.strides.begin() + lead);
  sizes = coalesce_dims(sizes, {&as, &bs});
  if (sizes.size() > VKML_RESAMPLE_PLANE_DIMS) {
    throw NotSupported(std::string("vkml: ") + op + " with too many non-mergeable leading dims");
  }
  p.plane_ndim = static_cast<uint32_t>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    p.plane_sizes[d] = sizes[d];
    p.a_plane_strides[d] = as[d];
    p.b_plane_strides[d] = bs[d];
  }
  p.a = a.address;
  p.b = b.address;
  return p;
}

UnfoldParams make_unfold(const TensorDesc& image, const TensorDesc& columns,
                         const UnfoldWindow& w, const char* op) {
  if (image.ndim() != 4 || columns.ndim() != 3) {
    throw InvalidArgument(std::string("vkml: ") + op + ": image must be 4-D and columns 3-D");
  }
  UnfoldParams p{};
  p.batch = image.sizes[0];
  p.channels = image.sizes[1];
  p.height = image.sizes[2];
  p.width = image.sizes[3];
  for (int k = 0; k < 2; ++k) {
    p.kernel[k] = w.kernel[k];
    p.dilation[k] = w.dilation[k];
    p.pad[k] = w.pad[k];
    p.stride[k] = w.stride[k];
    if (w.kernel[k] <= 0 || w.dilation[k] <= 0 || w.stride[k] <= 0 || w.pad[k] < 0) {
      throw InvalidArgument(std::string("vkml: ") + op + ": invalid window");
    }
  }
  int64_t size[2] = {p.height, p.width};
  int64_t blocks[2];
  for (int k = 0; k < 2; ++k) {
    blocks[k] = (size[k] + 2 * w.pad[k] - w.dilation[k] * (w.kernel[k] - 1) - 1) / w.stride[k] + 1;
  }
  p.out_h = blocks[0];
  p.out_w = blocks[1];
  if (columns.sizes[0] != p.batch || columns.sizes[1] != p.channels * p.kernel[0] * p.kernel[1] ||
      columns.sizes[2] != p.out_h * p.out_w || p.out_h <= 0 || p.out_w <= 0) {
    throw InvalidArgument(std::string("vkml: ") + op + ": columns " + columns.describe() +
                          " do not match image " + image.describe());
  }
  for (int k = 0; k < 4; ++k) p.image_strides[k] = image.strides[k];
  for (int k = 0; k < 3; ++k) p.column_strides[k] = columns.strides[k];
  p.image = image.address;
  p.columns = columns.address;
  return p;
}

}  // namespace

void resample(Device& dev, const ResampleSpec& spec, const TensorDesc& out,
              const TensorDesc& input, int spatial_dims) {
  ResampleParams p = make_params(spec, input, out, spatial_dims, false);
  bool fp64 = p.raw_bytes == 0 && nn::needs_fp64(dev, {&input, &out});
  p.numel = out.numel();
  if (p.numel == 0) return;
  MemRange reads[] = {nn::range_of(input)};
  MemRange writes[] = {nn::range_of(out)};
  nn::dispatch_groups(dev, nn::variant(dev, "resample_fwd", fp64, false), kWorkgroup,
                      nn::groups_for(p.numel, kWorkgroup), &p, sizeof(p), reads, writes);
}

void resample_backward(Device& dev, const ResampleSpec& spec, const TensorDesc& grad_input,
                       const TensorDesc& grad_output, int spatial_dims) {
  ResampleParams p = make_params(spec, grad_input, grad_output, spatial_dims, true);
  bool fp64 = nn::needs_fp64(dev, {&grad_input, &grad_output});
  p.numel = grad_input.numel();
  if (p.numel == 0) return;
  MemRange reads[] = {nn::range_of(grad_output)};
  MemRange writes[] = {nn::range_of(grad_input)};
  nn::dispatch_groups(dev, nn::variant(dev, "resample_bwd", fp64, false), kWorkgroup,
                      nn::groups_for(p.numel, kWorkgroup), &p, sizeof(p), reads, writes);
}

void im2col(Device& dev, const TensorDesc& columns, const TensorDesc& image,
            const UnfoldWindow& w) {
  UnfoldParams p = make_unfold(image, columns, w, "im2col");
  bool fp64 = false;
  if (dtype_is_float(image.dtype) || dtype_is_float(columns.dtype)) {
    p.image_dtype = nn::float_code(image, "im2col");
    p.column_dtype = nn::float_code(columns, "im2col");
    fp64 = nn::needs_fp64(dev, {&image, &columns});
  } else {
    if (image.dtype != columns.dtype) throw InvalidArgument("vkml: im2col: dtypes differ");
    p.raw_bytes = static_cast<uint32_t>(dtype_size(image.dtype));
  }
  p.numel = columns.numel();
  if (p.numel == 0) return;
  MemRange reads[] = {nn::range_of(image)};
  MemRange writes[] = {nn::range_of(columns)};
  nn::dispatch_groups(dev, nn::variant(dev, "im2col", fp64, false), kWorkgroup,
                      nn::groups_for(p.numel, kWorkgroup), &p, sizeof(p), reads, writes);
}

void col2im(Device& dev, const TensorDesc& image, const TensorDesc& columns,
            const UnfoldWindow& w) {
  UnfoldParams p = make_unfold(image, columns, w, "col2im");
  bool fp64 = false;
  if (image.dtype == DType::kBool && columns.dtype == DType::kBool) {
    p.raw_bytes = 1;  // overlapping blocks OR together, as the CPU's bool sum does
  } else {
    p.image_dtype = nn::float_code(image, "col2im");
    p.column_dtype = nn::float_code(columns, "col2im");
    fp64 = nn::needs_fp64(dev, {&image, &columns});
  }
  p.numel = image.numel();
  if (p.numel == 0) return;
  MemRange reads[] = {nn::range_of(columns)};
  MemRange writes[] = {nn::range_of(image)};
  nn::dispatch_groups(dev, nn::variant(dev, "col2im", fp64, false), kWorkgroup,
                      nn::groups_for(p.numel, kWorkgroup), &p, sizeof(p), reads, writes);
}

}  // namespace vkml::ops
