#!/bin/bash
# On the GPU machine, for the session after the ninth (each part under 10 minutes):
#   part 1: ConvTest with a 64-deep K step (VKML_CONV_COOP_TILE's optional BK) and with split-K
#           for the forward-style passes (VKML_CONV_SPLITK), then split-K timed per layer.
#   part 3: the cooperative-matrix convolution's tiles, K step included, on the fp16 forward and
#           on each gradient, three processes per tile (single runs differed by up to a third).
#   part 2: the coopmat2 GEMM (VKML_COOPMAT2=1): the gemm gtests, then a tile sweep at 4096^3
#           and 8192^3 with B row-major and K-contiguous, next to the coopmat1 kernel and cuBLAS;
#           ResNet-50's 3x3 convolutions as plain GEMMs of the same size.
# Usage: bash scripts/device_s10_check.sh 1|2|3. Summary to stdout; logs to $OUT.
set -uo pipefail
PART=${1:-1}
source scripts/device_build_env.sh
t0=$SECONDS
if [ "$PART" = 1 ]; then
  # The driver's statistics of the GEMM and convolution kernels (VKML_PIPELINE_STATS): registers,
  # shared memory and spills, one line per pipeline as each is first created.
  export VKML_CACHE_DIR=/tmp/vkml-stats-cache  # a cold cache, so every pipeline is compiled
  for dt in float16 float32; do
    VKML_PIPELINE_STATS=1 timeout 60 python3 bench/bench_gemm.py --dtype $dt --no-cpu \
      --shapes 4096x4096x4096,4096x4096x4096t 2>&1 | grep "pipeline stats" >> "$OUT/stats.txt"
    VKML_PIPELINE_STATS=1 timeout 90 python3 bench/bench_conv_algos.py --dtype $dt \
      --passes fwd,fwd+bwd --algos default 2>&1 | grep "pipeline stats" >> "$OUT/stats.txt"
  done
  sort -u "$OUT/stats.txt" | grep -E "gemm|conv" | cut -c21-400 | head -40
  export VKML_CACHE_DIR=/tmp/vkml-cache
  VKML_CONV_COOP_TILE=64x64x4x2x2x64 timeout 120 ./build-h200/tests/vkml_ops_tests \
    --gtest_filter='ConvTest.*' > "$OUT/gtest_conv.log" 2>&1
  echo "gtest ConvTest, BK 64 ($((SECONDS - t0)) s): $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gtest_conv.log" | tr '\n' ' ')"
  # Split-K for the forward-style passes (VKML_CONV_SPLITK): ConvTest on the GPU, then timed.
  VKML_CONV_SPLITK=3 timeout 100 ./build-h200/tests/vkml_ops_tests \
    --gtest_filter='ConvTest.*' > "$OUT/gtest_splitk.log" 2>&1
  echo "gtest ConvTest, VKML_CONV_SPLITK=3 ($((SECONDS - t0)) s): $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gtest_splitk.log" | tr '\n' ' ')"
  for cfg in "VKML_CONV_SPLITK=1" "VKML_CONV_SPLITK=2" "VKML_CONV_SPLITK=4" "VKML_CONV_SPLITK=4 VKML_CONV_COOP_TILE=128x128x8x4x2"; do
    for dt in float16 float32; do
      env $cfg timeout 60 python3 bench/bench_conv_algos.py --dtype $dt --passes fwd,fwd+dx \
        --algos implicit 2>&1 | awk -v t="[$cfg $dt]" 'NR > 1 {print t, $1, $2, $3, $4, $5, $7}'
    done
  done
elif [ "$PART" = 3 ]; then
  for tile in "" 128x128x8x4x2 64x64x4x2x2 64x64x4x2x2x64 128x128x4x4x4 128x64x4x4x2 64x128x4x2x4; do
    for rep in 1 2 3; do
      VKML_CONV_COOP_TILE=$tile timeout 60 python3 bench/bench_conv_algos.py --dtype float16 \
        --passes fwd,fwd+dx,fwd+dw --algos implicit 2>&1 |
        awk -v t="[$tile]" -v r=$rep 'NR > 1 {print t, r, $1, $2, $3, $4, $5, $7}'
    done
  done
else
  export VKML_COOPMAT2=1
  timeout 150 ./build-h200/tests/vkml_ops_tests --gtest_filter='*Gemm*' > "$OUT/gtest_gemm.log" 2>&1
  echo "gtest *Gemm* ($((SECONDS - t0)) s): $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gtest_gemm.log" | tr '\n' ' ')"
  VKML_COOPMAT2=0 timeout 60 python3 bench/bench_gemm.py --dtype float16 --no-cpu \
    --shapes 4096x4096x4096,8192x8192x8192,8192x8192x8192t 2>&1 | grep -E "^ *[0-9]" | sed "s/^/[coopmat1] /"
  # ResNet-50's 3x3 layers at batch 32 as plain GEMMs (M = Cout, K = Cin x 9, N = batch x
  # positions): how far the convolution kernel is from a GEMM of the same size.
  for cm2 in 0 1; do
    VKML_COOPMAT2=$cm2 timeout 60 python3 bench/bench_gemm.py --dtype float16 --no-cpu \
      --shapes 64x576x100352,128x1152x25088,256x2304x6272,512x4608x1568 2>&1 |
      grep -E "^ *[0-9]" | sed "s/^/[conv shapes, coopmat2=$cm2] /"
  done
  for tile in "" 256x128x128x64 256x128x256x32 128x128x128x64 256x256x128x32; do
    VKML_GEMM_CM2_TILE=$tile timeout 60 python3 bench/bench_gemm.py --dtype float16 --no-cpu \
      --shapes 2048x2048x2048,4096x4096x4096,8192x8192x8192,8192x8192x8192t 2>&1 |
      grep -E "^ *[0-9]" | sed "s/^/[$tile] /"
  done
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
