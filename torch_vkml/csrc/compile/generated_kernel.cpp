// Kernels that torch.compile generates (torch_vkml/_inductor): GLSL compiled at run time into a
// pipeline of the device's cache, and launched on a list of tensors and integer arguments.
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include <algorithm>
#include <vector>

#include "common/bridge.h"
#include "vkml/config.h"
#include "vkml/shader_compiler.h"

namespace torch_vkml {
namespace compile_generated_kernel {

// Compiles `source` (or finds its SPIR-V in the disk cache), registers it as shader `name` and
// starts building its pipeline with `workgroup` threads per group. Returns 1 when glslang ran.
int64_t compile(const std::string& name, const std::string& source, int64_t device,
                int64_t workgroup) {
  try {
    vkml::CompiledShader s = vkml::compile_glsl(source, vkml::config().cache_dir);
    bool fresh = !s.from_disk;
    vkml::register_shader_module(name, std::move(s.spirv));
    if (device >= 0) {
      uint32_t spec[] = {static_cast<uint32_t>(workgroup)};
      translate_errors([&] {
        return &core_device(static_cast<c10::DeviceIndex>(device)).pipeline(name, spec);
      });
    }
    return fresh ? 1 : 0;
  } catch (const vkml::ShaderCompileError& e) {
    TORCH_CHECK(false, e.what());
  } catch (const vkml::NotSupported& e) {
    TORCH_CHECK_NOT_IMPLEMENTED(false, e.what());
  }
}

// Bytes from a tensor's first element to one past its last (0 for an empty tensor).
vkml::MemRange extent(const at::Tensor& t) {
  if (t.numel() == 0) return {};
  int64_t last = 0;
  for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * std::abs(t.stride(d));
  return {reinterpret_cast<uint64_t>(t.data_ptr()),
          static_cast<uint64_t>((last + 1) * t.element_size())};
}

// Dispatches `groups` workgroups of shader `name`. Its parameter block holds the tensors' base
// addresses (the first `written` are written, the rest read), then the 64-bit integers.
void launch(const std::string& name, at::TensorList tensors, int64_t written,
            at::IntArrayRef ints, int64_t groups, int64_t workgroup) {
  if (groups <= 0) return;
  TORCH_CHECK(!tensors.empty(), "vkml generated kernel ", name, ": no tensor arguments");
  const c10::Device dev = tensors[0].device();
  std::vector<uint64_t> block;
  block.reserve(tensors.size() + ints.size());
  std::vector<vkml::MemRange> reads, writes;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const at::Tensor& t = tensors[i];
    TORCH_CHECK(t.device() == dev, "vkml generated kernel ", name, ": argument ", i, " is on ",
                t.device(), ", expected ", dev);
    // The kernel adds its own offsets to the storage's element 0 of this view.
    block.push_back(reinterpret_cast<uint64_t>(t.data_ptr()));
    vkml::MemRange r = extent(t);
    if (r.bytes == 0) continue;
    (static_cast<int64_t>(i) < written ? writes : reads).push_back(r);
  }
  for (int64_t v : ints) block.push_back(static_cast<uint64_t>(v));
  if (block.empty()) block.push_back(0);
  translate_errors([&] {
    vkml::Device& d = core_device(dev.index());
    uint32_t spec[] = {static_cast<uint32_t>(workgroup)};
    const vkml::Pipeline& pipe = d.pipeline(name, spec);
    uint64_t addr = d.stream().params(block.data(), block.size() * sizeof(uint64_t));
    uint32_t gx = static_cast<uint32_t>(std::min<int64_t>(groups, 65535));
    d.stream().dispatch(pipe, gx, 1, 1, &addr, sizeof(addr), reads, writes,
                        static_cast<uint64_t>(groups) * workgroup);
    return 0;
  });
}

std::vector<int64_t> stats() {
  return {static_cast<int64_t>(vkml::shader_compiles()),
          static_cast<int64_t>(vkml::shader_disk_hits()),
          vkml::shader_compiler_available() ? 1 : 0};
}

}  // namespace compile_generated_kernel
}  // namespace torch_vkml

TORCH_LIBRARY(vkml_inductor, m) {
  using namespace torch_vkml::compile_generated_kernel;
  m.def("compile(str name, str source, int device, int workgroup) -> int", &compile);
  m.def("launch(str name, Tensor[] tensors, int written, int[] ints, int groups, int workgroup) -> ()",
        &launch);
  m.def("stats() -> int[]", &stats);
}
