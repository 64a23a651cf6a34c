#!/bin/bash
# On the GPU machine, the fifteenth session (each part under 10 minutes; carry .vktc, .devpy and
# .fmnist):
#   part g: fp16/bf16 GEMM settings in one process (bench/gemm_cm2_sweep.py): the coopmat1 kernel
#           at its default and two 8-subgroup tiles, the VK_NV_cooperative_matrix2 kernel with
#           grouped tile order (its 16-byte reference variant, timed in call 1, is gone), unroll 8, and BK 32/16
#           tiles, each checked against CUDA's product; then the GEMM gtests under coopmat2 with
#           grouping; then the fp16 Winograd layers and ResNet-50 fp16 (device_s14_run.sh h
#           without its tests).
#   part t: the correctness suites (scripts/device_suites.sh), then the fp16 ResNet layers with
#           the new default (Winograd gradients) against the implicit GEMM alone.
#   part m: the five model benchmarks beside CUDA with nvidia-smi sampling clocks and throttle
#           reasons (to catch the intermittent slow state), then fp32 SIMT GEMM tiles.
# Usage: bash scripts/device_s15_run.sh g|t|m. Summary to stdout; logs to $OUT.
set -uo pipefail
PART=${1:-g}
source scripts/device_build_env.sh
export PYTHONPATH=$PWD:$PWD/.devpy
t0=$SECONDS
timeout 40 python3 bench/bench_gemm.py --dtype float16 --no-cpu --shapes 8192x8192x8192 | tail -1
if [ "$PART" = g ]; then
  T=VKML_GEMM_CM2_TILE
  configs="cm1:;cm1-256x128:VKML_GEMM_COOPMAT_TILE=256x128x8x4x4x16"
  configs+=";cm1-128x256:VKML_GEMM_COOPMAT_TILE=128x256x8x4x4x16"
  configs+=";cm2:;cm2-g8:VKML_GEMM_CM2_GROUP=8"
  configs+=";cm2-u8:VKML_GEMM_CM2_UNROLL=8;cm2-k32:$T=256x128x256x32"
  configs+=";cm2-k32-g8:$T=256x128x256x32,VKML_GEMM_CM2_GROUP=8"
  configs+=";cm2-128n-k32:$T=256x128x128x32;cm2-k16:$T=256x128x256x16"
  configs+=";cm2-128t-k32:$T=128x128x128x32;cm2-256m-k32:$T=256x256x128x32"
  timeout 200 python3 bench/gemm_cm2_sweep.py --configs "$configs" --json $OUT/gemm_sweep_f16.json \
    2>&1 | tee $OUT/gemm_sweep_f16.txt | grep -v "^ *$"
  timeout 90 python3 bench/gemm_cm2_sweep.py --dtypes bfloat16 --shapes 8192x8192x8192 \
    --configs "cm1:;cm2:;cm2-g8:VKML_GEMM_CM2_GROUP=8;cm2-k32:$T=256x128x256x32" \
    --json $OUT/gemm_sweep_bf16.json 2>&1 | tee $OUT/gemm_sweep_bf16.txt
  VKML_COOPMAT2=1 VKML_GEMM_CM2_GROUP=8 timeout 100 ./build-h200/tests/vkml_ops_tests \
    --gtest_filter='*Gemm*' > $OUT/gtest_gemm_cm2.log 2>&1
  echo "gtest *Gemm* (coopmat2, grouped): $(grep -E '^\[  (PASSED|FAILED)' $OUT/gtest_gemm_cm2.log | tr '\n' ' ')"
  timeout 150 python3 bench/bench_conv_algos.py --dtype float16 --algos default,winograd2,winograd4 \
    --passes fwd,fwd+bwd --json $OUT/conv_algos_f16.json 2>&1 | tee $OUT/conv_algos_f16.txt |
    grep -E "k3s1|layer"
  for mode in "" 1; do
    VKML_CONV_WINOGRAD=$mode timeout 60 python3 bench/bench_models.py \
      --only resnet50_infer_b64_float16 2>&1 | grep -E "^ +model" | sed "s/^/[winograd '$mode'] /"
  done
elif [ "$PART" = t ]; then
  source scripts/device_suites.sh
  timeout $((585 - SECONDS)) python3 bench/bench_conv_algos.py --dtype float16 \
    --algos default,implicit --passes fwd+bwd --json $OUT/conv_algos_f16_default.json 2>&1 |
    tee $OUT/conv_algos_f16_default.txt | grep -E "k3s1|layer"
elif [ "$PART" = m ]; then
  source scripts/device_models_smi.sh
  S=VKML_GEMM_SIMT_TILE
  timeout $((585 - SECONDS)) python3 bench/gemm_cm2_sweep.py --dtypes float32 \
    --shapes 8192x8192x8192,12608x3072x768,262144x576x64 \
    --configs "cm1:;cm1-128x128w32x64:$S=128x128x16x32x64x8x8;cm1-128x128w64x32:$S=128x128x16x64x32x8x8;cm1-128x128k8:$S=128x128x8x32x64x8x8" \
    --json $OUT/gemm_sweep_f32.json 2>&1 | tee $OUT/gemm_sweep_f32.txt
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
