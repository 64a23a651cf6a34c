#!/bin/bash
# On the GPU machine, the tenth session's second call (under 10 minutes): where ResNet-18's
# training step and ResNet-50's inference go (kernel profiler), ResNet's convolution shapes as
# plain GEMMs (how far the implicit convolution is from the GEMM kernel on the same sizes), the
# coopmat2 GEMM's pipeline statistics, and the cooperative-matrix convolution's tiles, once each.
# Usage: bash scripts/device_s10b_check.sh. Summary to stdout; logs to $OUT.
set -uo pipefail
source scripts/device_build_env.sh
t0=$SECONDS
timeout 150 python3 bench/bench_models.py --profile 14 --only resnet18,resnet50 > "$OUT/profile.txt" 2>&1
grep -E "^==|^ *[a-z_0-9]+ " "$OUT/profile.txt" | cut -c1-110 | head -70
echo "profile: $((SECONDS - t0)) s"
for cm2 in 0 1; do
  VKML_COOPMAT2=$cm2 timeout 60 python3 bench/bench_gemm.py --dtype float16 --no-cpu \
    --shapes 64x576x262144,128x1152x65536,256x2304x16384,512x4608x4096,64x576x100352,256x2304x6272,512x4608x1568 2>&1 |
    grep -E "^ *[0-9]" | sed "s/^/[conv shapes, coopmat2=$cm2] /"
done
VKML_CACHE_DIR=/tmp/vkml-stats VKML_COOPMAT2=1 VKML_PIPELINE_STATS=1 timeout 60 python3 bench/bench_gemm.py \
  --dtype float16 --no-cpu --shapes 4096x4096x4096,8192x8192x8192,8192x8192x8192t 2>&1 |
  grep -E "pipeline stats|^ *[0-9]" | cut -c1-220
echo "gemm: $((SECONDS - t0)) s"
for tile in "" 64x64x4x2x2x64 128x128x4x4x4 128x64x4x4x2; do
  VKML_CONV_COOP_TILE=$tile timeout 50 python3 bench/bench_conv_algos.py --dtype float16 \
    --passes fwd,fwd+dx,fwd+dw --algos implicit 2>&1 |
    awk -v t="[$tile]" 'NR > 1 {print t, $1, $2, $3, $4, $5, $7}'
done
echo "done: $((SECONDS - t0)) s after the build"
