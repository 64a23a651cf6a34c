// Matrix products on the device: C[b] = alpha * A[b] @ B[b] + beta * C_in[b] + bias[b].
// Every operand is a strided matrix view (row, column and up to two batch strides, in elements),
// so transposes, slices and broadcasts (stride 0) need no copies. fp16/bf16 accumulate in fp32,
// f64 in f64. The kernel is chosen by choose_gemm_plan(), a function of the descriptor, DeviceCaps
// and the settings (vkml/config.h).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vkml/device.h"
#include "vkml/runtime.h"

namespace vkml::ops {

constexpr int kGemmBatchDims = 2;

// One strided matrix: element (b0, b1, r, c) lives at
// address + (b0 * batch_stride[0] + b1 * batch_stride[1] + r * row_stride + c * col_stride) * size.
struct MatrixView {
  uint64_t address = 0;  // 0: operand absent (only C_in and bias may be absent)
  int64_t row_stride = 0, col_stride = 0;
  int64_t batch_stride[kGemmBatchDims] = {0, 0};

  // The view of the transposed matrix (same memory).
  MatrixView transposed() const {
    MatrixView t = *this;
    t.row_stride = col_stride;
    t.col_stride = row_stride;
    return t;
  }
};

struct GemmDesc {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch[kGemmBatchDims] = {1, 1};  // outer, inner batch sizes
  DType in_dtype = DType::kF32;            // A and B
  DType out_dtype = DType::kF32;           // C, C_in and bias
  MatrixView a;                            // m x k
  MatrixView b;                            // k x n
  MatrixView c;                            // m x n, written
  MatrixView c_in;                         // m x n, read when beta != 0 (may alias c exactly)
  MatrixView bias;                         // m x n (usually one stride 0), added unscaled
  double alpha = 1.0, beta = 0.0;
  // fp32 products may trade a little accuracy for speed, as CUDA's TF32 does: the bridge sets it
  // from torch's float32 matmul precision ("high" or "medium"); the split GEMM then skips its K
  // slices (gemm_f32_split.cc).
  bool fp32_relaxed = false;
  // Split-K slices at most this deep (0: the planner's choice), cutting K even where the output
  // alone fills the device: the split fp32 GEMM bounds its tensor-core accumulation chains so.
  int64_t max_k_slice = 0;
};

enum class GemmKernel : uint8_t { kTiled, kGemv, kCoopMat, kCoopMatVec, kTiledVec, kSimt };

// What choose_gemm_plan decided: the shader, its specialization constants and the problem as the
// kernel sees it (possibly transposed: C^T = B^T A^T, to make C row-major or N the 1-wide side).
struct GemmPlan {
  GemmKernel kernel = GemmKernel::kTiled;
  std::string shader;
  std::vector<uint32_t> spec;       // spec[0] is the workgroup size
  uint32_t tile_m = 1, tile_n = 1;  // output block of one workgroup
  uint32_t shared_bytes = 0;
  // Split-K: the K range is cut into split_k slices of k_chunk, whose partial products a
  // second pass sums (deterministically) before the epilogue. 1 = no split.
  uint32_t split_k = 1;
  int64_t k_chunk = 0;
  GemmDesc problem;
  bool transposed = false;
};

// Depends only on the descriptor, the capabilities, the settings and which shaders exist in this
// build.
GemmPlan choose_gemm_plan(
    const GemmDesc& desc, const DeviceCaps& caps,
    const std::function<bool(const std::string&)>& shader_exists = has_shader);

// The SIMT fp32 kernels' extra specialization constants (ids 12-14, gemm_simt.comp): the
// diagnostic probe (VKML_GEMM_PROBE, 0 outside diagnostic builds), then how A and B are read (0
// scalar loads; 1 4x4 blocks of 16-byte loads; 2 blocks with unpadded shared rows), B's only where
// it is not 0. Empty when all are off, so the pipelines keep their 12 constants.
std::vector<uint32_t> simt_extra_spec(uint32_t a_blocks, uint32_t b_blocks = 0);
// Whether an fp32 A (m x k) may be read in 4x4 blocks by a tile with `a_units_per_thread`
// 4-element units of A per thread: k-contiguous, 16-byte aligned, K % 4 == 0, and
// VKML_GEMM_SIMT_KVEC not 0.
bool simt_a_blocks_ok(const MatrixView& a, int64_t m, int64_t k, uint32_t a_units_per_thread);

// Split-K partial sums may take at most this much scratch (the planner halves its slices to fit):
// VKML_GEMM_SPLITK_SCRATCH bytes (tests reach the limit with small products).
int64_t split_k_scratch_bytes();

// Whether the device multiplies 16x16x16 cooperative matrices of `in` (f16 or bf16) into fp32.
bool coopmat_shape_ok(const DeviceCaps& caps, DType in);

// Checks the descriptor (throws InvalidArgument / NotSupported) without recording anything.
void validate_gemm(const GemmDesc& desc, const DeviceCaps& caps);

// Records the product on the device's stream (never waits).
void gemm(Device& dev, const GemmDesc& desc);

// The split-K second pass (gemm_splitk_reduce_<out>): C = alpha * (the slices' partial sums, in
// slice order) + beta * C_in + bias for `batches` m x n outputs, whose GemmParams (with splits and
// partial set) are at params_addr. One thread per output over (columns, rows, batches).
void record_splitk_reduce(Device& dev, DType out, uint64_t params_addr, int64_t m, int64_t n,
                          int64_t batches, std::span<const MemRange> reads,
                          const MemRange& written);

// Byte range an operand of rows x cols touches over the batch (for hazard tracking).
MemRange matrix_range(const MatrixView& v, DType t, int64_t rows, int64_t cols,
                      const int64_t* batch);

}  // namespace vkml::ops
