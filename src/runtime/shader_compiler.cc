#include "vkml/shader_compiler.h"

#include "platform.h"

#include <atomic>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>

#if VKML_HAVE_GLSLANG
#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>
#endif

namespace vkml {
namespace {

std::atomic<uint64_t> g_compiles{0}, g_disk_hits{0};

// Bumped when the compile options change, so that stale SPIR-V is never reused.
constexpr const char* kCompilerKey = "glslang-c/vk1.2/spv1.5/1";

// 128-bit FNV-1a (two 64-bit lanes with different offsets): a cache key, not a security hash.
std::string source_hash(const std::string& source) {
  uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  auto mix = [&](const std::string& s) {
    for (unsigned char c : s) {
      a = (a ^ c) * 0x100000001b3ull;
      b = (b ^ c) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
    }
  };
  mix(kCompilerKey);
  mix(source);
  char out[33];
  std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return out;
}

#if VKML_HAVE_GLSLANG
std::string numbered(const std::string& source) {
  std::ostringstream out;
  std::istringstream in(source);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) out << n << ": " << line << "\n";
  return out.str();
}
#endif

bool read_spirv(const std::string& path, std::vector<uint32_t>* words) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  if (bytes.size() < 20 || bytes.size() % 4 != 0) return false;
  words->resize(bytes.size() / 4);
  std::memcpy(words->data(), bytes.data(), bytes.size());
  return (*words)[0] == 0x07230203u;  // the SPIR-V magic number
}

#if VKML_HAVE_GLSLANG
void write_spirv(const std::string& path, const std::vector<uint32_t>& words) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  std::string tmp = path + ".tmp" + std::to_string(platform::process_id());
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) return;
    out.write(reinterpret_cast<const char*>(words.data()),
              static_cast<std::streamsize>(words.size() * 4));
  }
  std::filesystem::rename(tmp, path, ec);  // atomic: other processes never see half a file
}

std::once_flag g_init;

std::vector<uint32_t> run_glslang(const std::string& source) {
  std::call_once(g_init, [] { glslang_initialize_process(); });
  glslang_input_t in{};
  in.language = GLSLANG_SOURCE_GLSL;
  in.stage = GLSLANG_STAGE_COMPUTE;
  in.client = GLSLANG_CLIENT_VULKAN;
  in.client_version = GLSLANG_TARGET_VULKAN_1_2;
  in.target_language = GLSLANG_TARGET_SPV;
  in.target_language_version = GLSLANG_TARGET_SPV_1_5;
  in.code = source.c_str();
  in.default_version = 460;
  in.default_profile = GLSLANG_NO_PROFILE;
  in.messages = GLSLANG_MSG_DEFAULT_BIT;
  in.resource = glslang_default_resource();
  glslang_shader_t* shader = glslang_shader_create(&in);
  std::string log;
  bool ok = glslang_shader_preprocess(shader, &in) && glslang_shader_parse(shader, &in);
  if (!ok) log = glslang_shader_get_info_log(shader);
  glslang_program_t* program = nullptr;
  std::vector<uint32_t> words;
  if (ok) {
    program = glslang_program_create();
    glslang_program_add_shader(program, shader);
    ok = glslang_program_link(program, GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT);
    if (!ok) {
      log = glslang_program_get_info_log(program);
    } else {
      glslang_program_SPIRV_generate(program, GLSLANG_STAGE_COMPUTE);
      words.resize(glslang_program_SPIRV_get_size(program));
      glslang_program_SPIRV_get(program, words.data());
    }
  }
  if (program) glslang_program_delete(program);
  glslang_shader_delete(shader);
  if (!ok) {
    throw ShaderCompileError("vkml: generated shader failed to compile:\n" + log +
                             "\n--- source ---\n" + numbered(source));
  }
  return words;
}
#endif

}  // namespace

bool shader_compiler_available() { return VKML_HAVE_GLSLANG != 0; }

CompiledShader compile_glsl(const std::string& source, const std::string& cache_dir) {
  CompiledShader out;
  std::string path;
  if (!cache_dir.empty()) {
    path = cache_dir + "/spirv/" + source_hash(source) + ".spv";
    if (read_spirv(path, &out.spirv)) {
      out.from_disk = true;
      g_disk_hits++;
      return out;
    }
  }
#if VKML_HAVE_GLSLANG
  out.spirv = run_glslang(source);
  g_compiles++;
  if (!path.empty()) write_spirv(path, out.spirv);
  return out;
#else
  throw NotSupported("vkml: this build has no run-time shader compiler (glslang-dev was not found "
                     "at configure time), so torch.compile cannot generate kernels");
#endif
}

uint64_t shader_compiles() { return g_compiles.load(); }
uint64_t shader_disk_hits() { return g_disk_hits.load(); }

}  // namespace vkml
