// Helpers for the GEMM tests: device capabilities like a CPU implementation's and a tensor-core
// GPU's, and problem descriptors for the planner (which needs no GPU).
#pragma once
#include <string>

#include "vkml/gemm.h"

namespace vkml::testing {

using ops::GemmDesc;
using ops::GemmKernel;
using ops::GemmPlan;
using ops::MatrixView;

inline DeviceCaps cpu_like() {
  DeviceCaps c;
  c.kind = DeviceKind::kCpu;
  c.device_class = DeviceClass::kCpu;
  c.subgroup_size = 8;
  c.max_shared_memory = 32768;
  c.max_workgroup_invocations = 1024;
  c.storage_16bit = c.fp64_math = c.int64_math = true;
  return c;
}

inline DeviceCaps tensor_gpu_like() {
  DeviceCaps c = cpu_like();
  c.kind = DeviceKind::kDiscrete;
  c.device_class = DeviceClass::kGeneric;
  c.subgroup_size = 32;
  c.max_shared_memory = 49152;
  c.coopmat = c.coopmat_bf16 = true;
  c.coopmat_shapes = {{16, 16, 16, DType::kF16, DType::kF16, DType::kF32, DType::kF32},
                      {16, 8, 16, DType::kF16, DType::kF16, DType::kF16, DType::kF16},
                      {16, 16, 16, DType::kBF16, DType::kBF16, DType::kF32, DType::kF32}};
  return c;
}

// The same GPU in the NVIDIA and AMD device classes (the policies are keyed by class).
inline DeviceCaps nvidia_like() {
  DeviceCaps c = tensor_gpu_like();
  c.vendor_id = kVendorNvidia;
  c.device_class = DeviceClass::kNvidia;
  return c;
}
inline DeviceCaps amd_like() {
  DeviceCaps c = tensor_gpu_like();
  c.vendor_id = kVendorAmd;
  c.device_class = DeviceClass::kAmd;
  return c;
}

// Row-major m x n x k problem descriptor (addresses are irrelevant to the chooser).
inline GemmDesc shape(int64_t m, int64_t n, int64_t k, DType in = DType::kF32,
                      DType out = DType::kF32) {
  GemmDesc d;
  d.m = m, d.n = n, d.k = k;
  d.in_dtype = in, d.out_dtype = out;
  d.a = {0x1000, k, 1};
  d.b = {0x2000, n, 1};
  d.c = {0x3000, n, 1};
  return d;
}

inline bool all_shaders(const std::string&) { return true; }

inline bool no_coopmat(const std::string& s) { return s.find("coopmat") == std::string::npos; }
// Neither the vectorised nor the SIMT fp32 kernel: the scalar tiled one.
inline bool scalar_tiled(const std::string& s) {
  return s.find("tiledv") == std::string::npos && s.find("simt") == std::string::npos;
}

}  // namespace vkml::testing
