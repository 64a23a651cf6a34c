#!/bin/bash
# On the GPU machine, the fourteenth session (each part under 10 minutes; carry .vktc, .devpy and
# .fmnist):
#   part w: Winograd F(2x2, 3x3) for fp32 (VKML_CONV_WINOGRAD): its tests (ConvTest gtests,
#           test_conv_winograd.py, test_conv.py), the fp32 ResNet layers per algorithm
#           (bench_conv_algos.py), ResNet-18 training and ResNet-50 fp32 inference with it off,
#           by the default rule and everywhere, then the CUDA reference.
#   part x: the weight gradient through Winograd too: the conv tests, the fp32 layers' fwd+dw
#           per algorithm, ResNet-18 / ResNet-50 fp32 with VKML_CONV_WINOGRAD=forward,data and
#           =1 (both forced everywhere, the second with the weight gradient), then all five
#           model benchmarks with the defaults beside CUDA (JSON to $OUT/models.json).
#   part f: F(4x4, 3x3) (the default tile now) against F(2x2, 3x3): the conv tests, the fp32 layers
#           (fwd+bwd) per tile and the implicit GEMM, ResNet-18 / ResNet-50 fp32 with the 2x2
#           tile and with the weight gradient off Winograd, then the defaults beside CUDA; then
#           the correctness suites.
#   part h: (next session) Winograd for fp16/bf16 tensors, built after the last call: the conv
#           tests, the fp16 layers per algorithm (default = cooperative matrices, F(2x2), F(4x4)),
#           the same with VKML_CONV_COOPMAT=0 (a GPU without cooperative matrices: SIMT), and
#           ResNet-50 fp16 inference with VKML_CONV_WINOGRAD unset and =1.
#   part t: the correctness suites (scripts/device_suites.sh).
#   part m: fp16/fp32/bf16 GEMM checks, ResNet-18 with the 2x2 Winograd tile, and the five model
#           benchmarks with the defaults (JSON to $OUT/models.json).
# Usage: bash scripts/device_s14_run.sh w|x|f|h|t|m. Summary to stdout; logs to $OUT.
set -uo pipefail
PART=${1:-w}
source scripts/device_build_env.sh
export PYTHONPATH=$PWD:$PWD/.devpy
t0=$SECONDS
# The conv gtests, then the given pytest files (8 workers); summaries to stdout, logs to $OUT.
conv_tests() {
  timeout 120 ./build-h200/tests/vkml_ops_tests --gtest_filter='ConvTest.*' > $OUT/gtest_conv.log 2>&1
  echo "gtest conv: $(grep -E '^\[  (PASSED|FAILED)' $OUT/gtest_conv.log | tr '\n' ' ')"
  VKML_FALLBACK=error timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE --tb=short \
    "$@" > $OUT/pytest_conv.log 2>&1
  echo "pytest conv: $(tail -1 $OUT/pytest_conv.log)"
  grep -E "^(FAILED|ERROR) " $OUT/pytest_conv.log | cut -c1-300 | head -10
}
timeout 40 python3 bench/bench_gemm.py --dtype float16 --no-cpu --shapes 8192x8192x8192 | tail -1
if [ "$PART" = w ]; then
  conv_tests tests/torch/test_conv_winograd.py tests/torch/test_conv.py
  timeout 150 python3 bench/bench_conv_algos.py --algos implicit,winograd --passes fwd,fwd+dx \
    --json $OUT/conv_algos_wino.json 2>&1 | tee $OUT/conv_algos_wino.txt
  for mode in 0 1; do
    VKML_CONV_WINOGRAD=$mode timeout 80 python3 bench/bench_models.py --vkml-only \
      --only resnet18,resnet50_infer_b64_float32 2>&1 | grep -E "^ +model|loss" | sed "s/^/[winograd $mode] /"
  done
  # The default rule, beside CUDA in the same command.
  timeout $((575 - SECONDS)) python3 bench/bench_models.py --only resnet18,resnet50_infer_b64_float32 \
    2>&1 | grep -E "^ +model|loss" | sed "s/^/[default] /"
elif [ "$PART" = x ]; then
  conv_tests tests/torch/test_conv_winograd.py tests/torch/test_conv.py
  timeout 150 python3 bench/bench_conv_algos.py --algos implicit,winograd --passes fwd+dw,fwd+bwd \
    --json $OUT/conv_algos_wgrad.json 2>&1 | tee $OUT/conv_algos_wgrad.txt
  for mode in forward,data 1; do
    VKML_CONV_WINOGRAD=$mode timeout 80 python3 bench/bench_models.py --vkml-only \
      --only resnet18,resnet50_infer_b64_float32 2>&1 | grep -E "^ +model" | sed "s/^/[winograd $mode] /"
  done
  timeout $((575 - SECONDS)) python3 bench/bench_models.py --json $OUT/models.json 2>&1 |
    grep -E "model|loss|fallbacks"
elif [ "$PART" = f ]; then
  conv_tests tests/torch/test_conv_winograd.py
  timeout 120 python3 bench/bench_conv_algos.py --algos implicit,winograd2,winograd4 \
    --passes fwd,fwd+bwd --json $OUT/conv_algos_tiles.json 2>&1 | tee $OUT/conv_algos_tiles.txt |
    grep -E "k3s1|layer"
  for setting in "VKML_CONV_WINOGRAD_TILE=2" "VKML_CONV_WINOGRAD=forward,data"; do
    env $setting timeout 60 python3 bench/bench_models.py --vkml-only \
      --only resnet18,resnet50_infer_b64_float32 2>&1 | grep -E "^ +model" | sed "s/^/[$setting] /"
  done
  timeout 100 python3 bench/bench_models.py --only resnet18,resnet50_infer_b64_float32 \
    --json $OUT/models_f4.json 2>&1 | grep -E "^ +model|loss" | sed "s/^/[default] /"
  source scripts/device_suites.sh
elif [ "$PART" = h ]; then
  conv_tests tests/torch/test_conv_winograd.py tests/torch/test_conv.py
  timeout 150 python3 bench/bench_conv_algos.py --dtype float16 --algos default,winograd2,winograd4 \
    --passes fwd,fwd+bwd --json $OUT/conv_algos_f16.json 2>&1 | tee $OUT/conv_algos_f16.txt |
    grep -E "k3s1|layer"
  VKML_CONV_COOPMAT=0 timeout 150 python3 bench/bench_conv_algos.py --dtype float16 \
    --algos default,winograd4 --passes fwd,fwd+bwd 2>&1 | tee $OUT/conv_algos_f16_simt.txt |
    grep -E "k3s1|layer" | sed "s/^/[no coopmat] /"
  for mode in "" 1; do
    VKML_CONV_WINOGRAD=$mode timeout 60 python3 bench/bench_models.py \
      --only resnet50_infer_b64_float16 2>&1 | grep -E "^ +model" | sed "s/^/[winograd '$mode'] /"
  done
elif [ "$PART" = t ]; then
  source scripts/device_suites.sh
elif [ "$PART" = m ]; then
  timeout 40 python3 bench/bench_gemm.py --dtype float16 --no-cpu --shapes 4096x4096x4096 | tail -1
  for dt in float32 bfloat16; do
    timeout 40 python3 bench/bench_gemm.py --dtype $dt --no-cpu --shapes 8192x8192x8192 | tail -1
  done
  VKML_CONV_WINOGRAD_TILE=2 timeout 60 python3 bench/bench_models.py --vkml-only --only resnet18 \
    2>&1 | grep -E "^ +model" | sed "s/^/[tile 2] /"
  timeout $((570 - SECONDS)) python3 bench/bench_models.py --json $OUT/models.json 2>&1 |
    grep -E "model|loss|fallbacks"
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
