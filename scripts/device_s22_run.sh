#!/bin/bash
# On the GPU machine, the twenty-second session (each part under 10 minutes; carry .vktc, .devpy
# and .fmnist):
#   part g: the GEMM tests (the cooperative-matrix kernel's split-K partials now stored 8 at a
#           time), the weight-gradient shapes through the fp32 split with and without its split-K
#           (VKML_GEMM_F32_SPLIT_FEW_BLOCKS=1024) beside SIMT and cuBLAS, ViT and GPT-2 training
#           steps with and without it, then bench/unary_probe.py (wall and kernel time per call of
#           memory-bound elementwise ops beside CUDA).
#   part m: after the idle-GPU submit rule and the fp32 split for long-K weight gradients: the
#           stream, GEMM and device tests, unary_probe.py, the five models beside CUDA, then
#           bench_ops' memory and activation groups in the time left.
#   part f: the final tree (batches ramp up after a host wait instead of the idle-GPU rule; the
#           elementwise kernels' lanes past the end load nothing): unary_probe.py with the grid
#           as before and spread (VKML_EW_SPREAD=2048), the correctness suites (gtest ops cut at
#           300 s), then the five models beside CUDA in the time left.
# Usage: bash scripts/device_s22_run.sh g|m|f (f: END=seconds bounds the models' end). Summary to stdout; logs to $OUT.
set -uo pipefail
PART=${1:-g}
source scripts/device_build_env.sh
export PYTHONPATH=$PWD:$PWD/.devpy
t0=$SECONDS
WGRAD=768x12608x3072,3072x12608x768,2304x12608x768,768x12608x768,768x4096x2304,768x4096x768,3072x4096x768

if [ "$PART" = g ]; then
  VKML_FALLBACK=error timeout 100 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE --tb=short \
    tests/torch/test_gemm.py tests/torch/test_gemm_f32_split.py > $OUT/pytest_g.log 2>&1
  echo "pytest gemm: $(tail -1 $OUT/pytest_g.log)"; grep -E "^(FAILED|ERROR) " $OUT/pytest_g.log | head
  for few in 0 1024; do
    VKML_GEMM_F32_SPLIT_FEW_BLOCKS=$few timeout 110 python3 bench/gemm_f32_split_check.py \
      --shapes $WGRAD > $OUT/split_few$few.txt 2>&1
    sed "s/^/few=$few /" $OUT/split_few$few.txt | grep -E "TFLOP|Error" | cut -c1-230
  done
  for few in 0 1024; do
    VKML_GEMM_F32_SPLIT_FEW_BLOCKS=$few timeout 80 python3 bench/bench_models.py --vkml-only \
      --no-diagnose --only vit,gpt2 > $OUT/models_few$few.txt 2>&1
    grep -E "model |Error" $OUT/models_few$few.txt | cut -c1-150 | sed "s/^/few=$few /"
  done
  left=$((585 - SECONDS))
  [ $left -gt 30 ] && timeout $left python3 bench/unary_probe.py > $OUT/unary.txt 2>&1
  cat $OUT/unary.txt | cut -c1-150
fi
if [ "$PART" = m ]; then
  timeout 60 ./build-h200/tests/vkml_runtime_tests --gtest_filter='Pipeline*:Stream*' 2>&1 | tail -1
  timeout 30 ./build-h200/tests/vkml_ops_tests --gtest_filter='GemmF32*:GemmPlan*' 2>&1 | tail -1
  VKML_FALLBACK=error timeout 100 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE --tb=short \
    tests/torch/test_gemm.py tests/torch/test_gemm_f32_split.py tests/torch/test_device_api.py \
    > $OUT/pytest_m.log 2>&1
  echo "pytest gemm+device_api: $(tail -1 $OUT/pytest_m.log)"
  grep -E "^(FAILED|ERROR) " $OUT/pytest_m.log | head
  timeout 100 python3 bench/unary_probe.py > $OUT/unary_m.txt 2>&1; cut -c1-150 $OUT/unary_m.txt
  timeout 300 python3 bench/bench_models.py --json $OUT/models_m.json > $OUT/models_m.txt 2>&1
  grep -E "model |loss|fallbacks|Error|submits" $OUT/models_m.txt | cut -c1-200
  left=$((585 - SECONDS))
  [ $left -gt 30 ] && timeout $left python3 bench/bench_ops.py --only memory,activation \
    > $OUT/ops_m.txt 2>&1
  grep -E "memory|reduce|activation|Error" $OUT/ops_m.txt | cut -c1-130
fi
if [ "$PART" = f ]; then
  END=${END:-588}  # seconds after the start by which the models must end (the device budget)
  CASES="add out=,neg out=,exp out="
  for spread in 0 2048; do
    VKML_EW_SPREAD=$spread timeout 60 python3 bench/unary_probe.py --only "$CASES" \
      > $OUT/unary_spread$spread.txt 2>&1
    sed "s/^/spread=$spread /" $OUT/unary_spread$spread.txt | tail -3 | cut -c1-150
  done
  ( timeout 60 ./build-h200/tests/vkml_runtime_tests > $OUT/gtest_runtime.log 2>&1
    timeout 200 ./build-h200/tests/vkml_ops_tests > $OUT/gtest_ops.log 2>&1 ) &
  gtests=$!
  VKML_FASHION_MNIST=$PWD/.fmnist VKML_FALLBACK=error timeout 250 python3 -m pytest -q \
    -p no:cacheprovider -n 8 -rfE --tb=short tests/torch --ignore=tests/torch/test_opinfo.py \
    > $OUT/pytest.log 2>&1
  echo "pytest (-n 8): $(tail -1 $OUT/pytest.log)"
  grep -E "^(FAILED|ERROR) " $OUT/pytest.log | cut -c1-300 | head -24
  wait $gtests
  for t in runtime ops; do
    echo "gtest $t: $(grep -c '^\[       OK \]' $OUT/gtest_$t.log) ok, $(grep -c '^\[  FAILED  \]' \
      $OUT/gtest_$t.log) failed lines; $(grep -E '^\[  (PASSED|FAILED)|tests ran' $OUT/gtest_$t.log \
      | tr '\n' ' ')"
  done
  grep -h -B2 -A6 "Failure" $OUT/gtest_*.log | head -30
  left=$((END - SECONDS))
  echo "models with $left s left"
  [ $left -gt 40 ] && timeout $left python3 bench/bench_models.py --json $OUT/models_f.json \
    > $OUT/models_f.txt 2>&1
  grep -E "model |loss|fallbacks|Error|submits" $OUT/models_f.txt | cut -c1-200
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
