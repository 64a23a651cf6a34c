#!/bin/bash
# On the GPU machine, the twenty-third session (each part under 10 minutes; carry .vktc, .devpy
# and .fmnist):
#   part a: session 22's final tree: the GEMM tests (its tensor-core kernel's 8-float stores had
#           not been built on the H200), ResNet-50's convolutions layer by layer beside CUDA in
#           fp32 (default; every eligible product through the fp32 split; Winograd off), GPT-2's
#           LM-head input gradient (4096x50257x768) three ways, then the five models beside CUDA.
#   part b: the 64x128 SIMT block over M <= 64 (GEMM and implicit convolution) and the fp32
#           split's split-K over K ranges: the GEMM, split and conv tests, ResNet-50's layers as
#           in part a (default, then the 1x1 layers unfolded: VKML_CONV_FOLD=0), the LM-head
#           shape three ways, then the five models beside CUDA.
#   part c: the final tree (the fp32 split's K padded to a multiple of 8; GPT-2's LM-head input
#           gradient through the split; implicit convolution back on its 64x64 block): the
#           LM-head shape three ways, the five models beside CUDA, then the correctness suites
#           (pytest -n 8, gtests beside it) in the time left.
# Usage: bash scripts/device_s23_run.sh a|b|c (END=seconds bounds the models' end). Summary to stdout; logs to $OUT.
set -uo pipefail
PART=${1:-a}
source scripts/device_build_env.sh
export PYTHONPATH=$PWD:$PWD/.devpy
t0=$SECONDS
END=${END:-585}

if [ "$PART" = a ]; then
  VKML_FALLBACK=error timeout 100 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE --tb=short \
    tests/torch/test_gemm.py tests/torch/test_gemm_f32_split.py > $OUT/pytest_a.log 2>&1
  echo "pytest gemm: $(tail -1 $OUT/pytest_a.log)"; grep -E "^(FAILED|ERROR) " $OUT/pytest_a.log | head
  timeout 60 python3 bench/conv_layers_probe.py > $OUT/conv_f32.txt 2>&1; cut -c1-200 $OUT/conv_f32.txt
  VKML_GEMM_F32_SPLIT=1 timeout 60 python3 bench/conv_layers_probe.py > $OUT/conv_f32_split.txt 2>&1
  sed 's/^/split=1 /' $OUT/conv_f32_split.txt | cut -c1-200
  VKML_CONV_WINOGRAD=0 timeout 50 python3 bench/conv_layers_probe.py > $OUT/conv_f32_nowino.txt 2>&1
  grep -E " 3  " $OUT/conv_f32_nowino.txt | sed 's/^/wino=0 /' | cut -c1-200
  tail -1 $OUT/conv_f32_nowino.txt
  timeout 60 python3 bench/gemm_f32_split_check.py --shapes 4096x50257x768 > $OUT/lmhead.txt 2>&1
  grep -E "TFLOP|Error|x50257" $OUT/lmhead.txt | cut -c1-230
  left=$((END - SECONDS))
  echo "models with $left s left"
  [ $left -gt 40 ] && timeout $left python3 bench/bench_models.py --json $OUT/models_a.json \
    > $OUT/models_a.txt 2>&1
  grep -E "model |loss|fallbacks|Error|submits" $OUT/models_a.txt | cut -c1-200
fi
if [ "$PART" = b ]; then
  VKML_FALLBACK=error timeout 120 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE --tb=short \
    tests/torch/test_gemm.py tests/torch/test_gemm_f32_split.py tests/torch/test_conv.py \
    tests/torch/test_conv_winograd.py > $OUT/pytest_b.log 2>&1
  echo "pytest gemm+conv: $(tail -1 $OUT/pytest_b.log)"; grep -E "^(FAILED|ERROR) " $OUT/pytest_b.log | head
  timeout 40 ./build-h200/tests/vkml_ops_tests --gtest_filter='GemmPlan*:GemmTest.Simt*' 2>&1 | tail -1
  timeout 70 python3 bench/conv_layers_probe.py > $OUT/conv_f32.txt 2>&1; cut -c1-200 $OUT/conv_f32.txt
  VKML_CONV_FOLD=0 timeout 70 python3 bench/conv_layers_probe.py > $OUT/conv_f32_nofold.txt 2>&1
  awk '$3 == 1' $OUT/conv_f32_nofold.txt | sed 's/^/fold=0 /' | cut -c1-200
  timeout 60 python3 bench/gemm_f32_split_check.py \
    --shapes 4096x50257x768,2304x4096x768,768x4096x3072 > $OUT/lmhead.txt 2>&1
  grep -E "TFLOP|Error" $OUT/lmhead.txt | cut -c1-230
  left=$((END - SECONDS))
  echo "models with $left s left"
  [ $left -gt 40 ] && timeout $left python3 bench/bench_models.py --json $OUT/models_b.json \
    > $OUT/models_b.txt 2>&1
  grep -E "model |loss|fallbacks|Error|submits|^gemm|^conv|^kernel" $OUT/models_b.txt | cut -c1-200
fi
if [ "$PART" = c ]; then
  timeout 70 python3 bench/gemm_f32_split_check.py \
    --shapes 4096x50257x768,4096x4100x768,8192x8192x8192 > $OUT/lmhead_c.txt 2>&1
  grep -E "TFLOP|Error" $OUT/lmhead_c.txt | cut -c1-230
  timeout 240 python3 bench/bench_models.py --json $OUT/models_c.json > $OUT/models_c.txt 2>&1
  grep -E "model |loss|fallbacks|Error|submits|^gemm|^conv|^kernel" $OUT/models_c.txt | cut -c1-200
  left=$((END - SECONDS - 15))
  echo "suites with $left s left"
  ( timeout 60 ./build-h200/tests/vkml_runtime_tests > $OUT/gtest_runtime.log 2>&1
    timeout $((left - 70)) ./build-h200/tests/vkml_ops_tests > $OUT/gtest_ops.log 2>&1 ) &
  gtests=$!
  VKML_FASHION_MNIST=$PWD/.fmnist VKML_FALLBACK=error timeout $left python3 -m pytest -q \
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
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
