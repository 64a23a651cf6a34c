#!/bin/bash
# On the GPU machine, for the session after the tenth (each part under 10 minutes):
#   part 1: the diagnosis of ResNet-50 fp16 inference's 34 ms over 15 ms of kernels (recording time,
#           wall time and kernel sum per step with VKML_GEMM_UNALIGNED_VEC and
#           VKML_COPY_TRANSPOSE switched off in turn), then all five models against CUDA.
#   part 2: the vectorised coopmat GEMM's tiles (VKML_GEMM_COOPMAT_TILE) on ResNet's narrow
#           convolution-shaped GEMMs, where 128x128 blocks leave multiprocessors idle, with the
#           driver's register counts (VKML_PIPELINE_STATS) of each tile.
# Usage: bash scripts/device_s11_check.sh 1|2. Summary to stdout; logs to $OUT.
set -uo pipefail
PART=${1:-1}
source scripts/device_build_env.sh
t0=$SECONDS
if [ "$PART" = 1 ]; then
  for cfg in "X=1" "VKML_GEMM_UNALIGNED_VEC=0" "VKML_COPY_TRANSPOSE=0"; do
    env $cfg timeout 45 python3 scripts/diag_host_vs_gpu.py --only resnet50_infer_b64_float16 --repeat 5 2>&1 |
      grep -E "record|Error" | sed "s/^/[$cfg] /"
  done
  echo "diag: $((SECONDS - t0)) s"
  timeout 330 python3 bench/bench_models.py --json "$OUT/models.json" > "$OUT/models.txt" 2>&1
  grep -E "model|loss|fallbacks" "$OUT/models.txt"
else
  shapes=256x2304x6272,512x4608x1568,64x576x100352,128x1152x65536,256x1024x6272,8192x8192x8192
  for tile in "" 64x128x4x2x4 128x64x4x4x2 64x64x4x2x2 64x64x2x2x4 128x128x8x4x2; do
    VKML_CACHE_DIR=/tmp/vkml-s11-$RANDOM VKML_PIPELINE_STATS=1 VKML_GEMM_COOPMAT_TILE=$tile timeout 60 \
      python3 bench/bench_gemm.py --dtype float16 --no-cpu --shapes $shapes 2>&1 |
      grep -E "^ *[0-9]|gemm_coopmatv" | sed -E "s/vkml pipeline stats: //; s/; Binary.*Shared/ shared/" |
      sed "s/^/[$tile] /"
  done
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
