#!/bin/bash
# On the GPU machine, the tenth session's last call: why ResNet-50 fp16 inference took 34 ms of
# wall time over 15 ms of kernels after the unaligned-operand GEMM path and the tiled transposes
# (scripts/diag_host_vs_gpu.py: recording time, wall time and kernel sum, with each change
# switched off in turn), then the ResNet-50 models against CUDA with and without the GEMM path.
# Usage: bash scripts/device_s10d_check.sh. Summary to stdout; logs to $OUT.
set -uo pipefail
source scripts/device_build_env.sh
t0=$SECONDS
for cfg in "X=1" "VKML_GEMM_UNALIGNED_VEC=0" "VKML_COPY_TRANSPOSE=0"; do
  env $cfg timeout 45 python3 scripts/diag_host_vs_gpu.py --only resnet50_infer_b64_float16 --repeat 5 2>&1 |
    grep -E "record|Error" | sed "s/^/[$cfg] /"
done
echo "diag: $((SECONDS - t0)) s"
for cfg in "X=1"; do
  env $cfg timeout 80 python3 bench/bench_models.py --only resnet50_infer_b64_float16 --json "$OUT/models_${cfg%%=*}.json" 2>&1 |
    grep -E "model|fallbacks" | sed "s/^/[$cfg] /"
done
echo "done: $((SECONDS - t0)) s after the build"
