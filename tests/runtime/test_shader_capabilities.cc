// The SPIR-V capabilities every embedded kernel declares, against the device features that gate
// them. A kernel declaring a capability whose feature the device lacks is reported by the
// validation layer (and may fail on the driver) even where it never executes the instructions,
// so a capability beyond vkml's requirements belongs only in variants that the host picks when
// the feature is present: fp64 variants for float64 tensors or fp64 accumulation, `_sg`
// variants where subgroup arithmetic is supported, cooperative-matrix variants where it is.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/shader_registry.h"

namespace vkml::testing {
namespace {

// SPIR-V capability numbers (SPIR-V specification, "Capability").
enum Capability : uint32_t {
  kShader = 1,
  kFloat16 = 9,
  kFloat64 = 10,
  kInt64 = 11,
  kInt64Atomics = 12,
  kInt16 = 22,
  kInt8 = 39,
  kGroupNonUniform = 61,
  kGroupNonUniformVote = 62,
  kGroupNonUniformArithmetic = 63,
  kGroupNonUniformBallot = 64,
  kGroupNonUniformShuffle = 65,
  kStorageBuffer16BitAccess = 4433,
  kStorageBuffer8BitAccess = 4448,
  kBFloat16TypeKHR = 5116,
  kBFloat16DotProductKHR = 5117,
  kBFloat16CooperativeMatrixKHR = 5118,
  kPhysicalStorageBufferAddresses = 5347,
  kCooperativeMatrixKHR = 6022,
};

constexpr uint32_t kSpirvMagic = 0x07230203u;
constexpr uint32_t kOpCapability = 17;
constexpr size_t kHeaderWords = 5;

// The operands of every OpCapability instruction of a module.
std::vector<uint32_t> capabilities(const EmbeddedShader& s) {
  std::vector<uint32_t> caps;
  const size_t n = s.bytes / 4;
  if (n < kHeaderWords || s.code[0] != kSpirvMagic) return caps;
  for (size_t i = kHeaderWords; i < n;) {
    const uint32_t opcode = s.code[i] & 0xFFFFu, words = s.code[i] >> 16;
    if (words == 0) break;
    if (opcode == kOpCapability && words >= 2) caps.push_back(s.code[i + 1]);
    i += words;
  }
  return caps;
}

// The name's underscore-separated parts: "norm_fwd_f64_sg" -> {norm, fwd, f64, sg}.
std::set<std::string> name_parts(const std::string& name) {
  std::set<std::string> parts;
  std::stringstream in(name);
  for (std::string part; std::getline(in, part, '_');) parts.insert(part);
  return parts;
}

// Kernels built only where glslang compiles cooperative matrices (REQUIRES coopmat).
bool is_coopmat_variant(const std::string& name) {
  return name.find("coopmat") != std::string::npos || name.find("igemmc") != std::string::npos ||
         name.find("flash") != std::string::npos;
}

// Whether `name` may declare `cap`; why names the feature and the variants that may use it.
bool allowed(const std::string& name, uint32_t cap, std::string* why) {
  const std::set<std::string> parts = name_parts(name);
  switch (cap) {
    // Vulkan 1.2 core or required by vkml (a device without them is listed as not usable).
    case kShader:
    case kInt64:
    case kInt16:
    case kInt8:
    case kGroupNonUniform:
    case kStorageBuffer16BitAccess:
    case kStorageBuffer8BitAccess:
    case kPhysicalStorageBufferAddresses:
      return true;
    case kFloat64:
      *why = "fp64 arithmetic: only variants named _f64 or _fp64, chosen for float64 tensors or "
             "where the device has fp64";
      return parts.count("f64") || parts.count("fp64");
    case kGroupNonUniformArithmetic:
      *why = "subgroup arithmetic: only _sg variants, chosen where the device supports it";
      return parts.count("sg") > 0;
    case kFloat16:
      // Every GPU with cooperative matrices is treated as having fp16 arithmetic (no-fp16 masks
      // cooperative matrices too); other kernels store 16-bit floats as bits.
      *why = "fp16 arithmetic: only cooperative-matrix variants";
      return is_coopmat_variant(name);
    case kGroupNonUniformVote:
    case kGroupNonUniformBallot:
    case kGroupNonUniformShuffle:
      // The flash planner checks vote and shuffle (attention_flash.cc); a cooperative-matrix
      // variant using them without such a check is not caught here.
      *why = "subgroup vote, ballot and shuffle: only cooperative-matrix variants";
      return is_coopmat_variant(name);
    case kCooperativeMatrixKHR:
      *why = "cooperative matrices: only coopmat / igemmc variants";
      return is_coopmat_variant(name);
    case kBFloat16TypeKHR:
    case kBFloat16DotProductKHR:
    case kBFloat16CooperativeMatrixKHR:
      *why = "bfloat16 arithmetic: only bf16 cooperative-matrix variants";
      return is_coopmat_variant(name) && parts.count("bf16") > 0;
    default:
      *why = "a capability whose device feature vkml never enables (for example Int64Atomics)";
      return false;
  }
}

TEST(ShaderCapabilities, EveryModuleIsSpirv) {
  ASSERT_GT(kEmbeddedShaderCount, 0u);
  for (size_t i = 0; i < kEmbeddedShaderCount; ++i) {
    const EmbeddedShader& s = kEmbeddedShaders[i];
    ASSERT_GE(s.bytes, kHeaderWords * 4) << s.name;
    EXPECT_EQ(s.code[0], kSpirvMagic) << s.name;
    EXPECT_FALSE(capabilities(s).empty()) << s.name << " declares no capability";
  }
}

TEST(ShaderCapabilities, OptionalFeaturesOnlyInTheVariantsThatNeedThem) {
  size_t fp64_variants = 0;
  for (size_t i = 0; i < kEmbeddedShaderCount; ++i) {
    const EmbeddedShader& s = kEmbeddedShaders[i];
    for (uint32_t cap : capabilities(s)) {
      std::string why;
      EXPECT_TRUE(allowed(s.name, cap, &why))
          << s.name << " declares SPIR-V capability " << cap << ": " << why;
      fp64_variants += cap == kFloat64;
    }
  }
  // The scan sees the float64 kernels at all (a parse that found no capability would pass).
  EXPECT_GT(fp64_variants, 0u);
}

TEST(ShaderCapabilities, TheRulesRejectWhatTheyShould) {
  std::string why;
  EXPECT_FALSE(allowed("index_f32", kFloat64, &why));
  EXPECT_TRUE(allowed("index_f64", kFloat64, &why));
  EXPECT_TRUE(allowed("range_i32_fp64", kFloat64, &why));
  EXPECT_FALSE(allowed("norm_fwd", kGroupNonUniformArithmetic, &why));
  EXPECT_TRUE(allowed("norm_fwd_f64_sg", kGroupNonUniformArithmetic, &why));
  EXPECT_FALSE(allowed("random_float_f16", kFloat16, &why));
  EXPECT_FALSE(allowed("gemm_split_f16", kFloat16, &why));
  EXPECT_FALSE(allowed("gemm_coopmat_f16_f32", kInt64Atomics, &why));
  EXPECT_FALSE(allowed("gemm_coopmat_f16_f32", kBFloat16TypeKHR, &why));
  EXPECT_TRUE(allowed("attention_flash_f16", kCooperativeMatrixKHR, &why));
  EXPECT_FALSE(allowed("attention_rows_fwd", kGroupNonUniformShuffle, &why));
}

}  // namespace
}  // namespace vkml::testing
