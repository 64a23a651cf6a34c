// SPIR-V modules compiled from src/ops/**/*.comp at build time and embedded (generated index).
#pragma once
#include <cstddef>
#include <cstdint>

namespace vkml {

struct EmbeddedShader {
  const char* name;
  const uint32_t* code;
  size_t bytes;
};

extern const EmbeddedShader kEmbeddedShaders[];
extern const size_t kEmbeddedShaderCount;
extern const char* const kSkippedShaders[];  // "name: reason"
extern const size_t kSkippedShaderCount;

const EmbeddedShader* find_embedded_shader(const char* name);

}  // namespace vkml
