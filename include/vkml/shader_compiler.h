// GLSL compute shaders compiled to SPIR-V at run time (glslang's C interface), for kernels that
// torch.compile generates. Results are cached on disk by source hash under VKML_CACHE_DIR.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vkml/errors.h"

namespace vkml {

// A shader that does not compile. what() holds glslang's log followed by the numbered source.
class ShaderCompileError : public Error {
 public:
  using Error::Error;
};

struct CompiledShader {
  std::vector<uint32_t> spirv;
  bool from_disk = false;  // found in the disk cache: glslang did not run
};

// Whether this build has a run-time shader compiler.
bool shader_compiler_available();

// Compiles one GLSL compute shader (Vulkan 1.2, SPIR-V 1.5). Looks up and fills the disk cache
// ("<cache_dir>/spirv/<hash>.spv") unless cache_dir is empty. Thread-safe.
CompiledShader compile_glsl(const std::string& source, const std::string& cache_dir);

// Counters for tests: glslang runs and disk-cache hits in this process.
uint64_t shader_compiles();
uint64_t shader_disk_hits();

}  // namespace vkml
