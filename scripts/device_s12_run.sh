#!/bin/bash
# On the GPU machine, the twelfth session (each part under 10 minutes; carry .vktc and .devpy):
#   part a: the GPU's state (fp16 8192^3 GEMM: about 265 TFLOP/s normally, a quarter of that in
#           the slow state), the fp32 float controls, then the correctness suites: both gtest
#           binaries beside the torch suite (without the OpInfo sweep) in 8 pytest-xdist workers
#           (pure-Python plugin carried in .devpy; the machine has no network).
#   part b: the state again, VKML_CONV_FOLD per 1x1 layer (fp16) and ResNet-50 inference with and
#           without it, ResNet-18 training against CUDA with and without TF32 convolutions, and
#           fp32 GEMM blocks the earlier sweeps left out.
#   part c: the failures of part a again after their fixes (Fashion-MNIST carried in .fmnist for the
#           two examples), ResNet-50 fp16 inference alternating without and with VKML_CONV_FOLD,
#           and each one's ten most expensive kernels.
#   part m: fp32/bf16 GEMM at 8192^3 and the five model benchmarks (JSON to $OUT/models.json).
#   part o: the OpInfo sweep (tests/torch/test_opinfo.py) in 14 workers.
# Usage: bash scripts/device_s12_run.sh a|b|c|m|o. Summary to stdout; logs to $OUT.
set -uo pipefail
PART=${1:-a}
source scripts/device_build_env.sh
export PYTHONPATH=$PWD:$PWD/.devpy
state() { timeout 40 python3 bench/bench_gemm.py --dtype float16 --no-cpu --shapes 8192x8192x8192 | tail -1; }
t0=$SECONDS
state
if [ "$PART" = a ]; then
  ./build-h200/vkml-info | grep "fp32 controls"
  source scripts/device_suites.sh
elif [ "$PART" = m ]; then
  for dt in float32 bfloat16; do
    timeout 40 python3 bench/bench_gemm.py --dtype $dt --no-cpu --shapes 8192x8192x8192 | tail -1
  done
  timeout $((570 - SECONDS)) python3 bench/bench_models.py --json $OUT/models.json 2>&1 |
    grep -E "model|loss|fallbacks"
elif [ "$PART" = o ]; then
  VKML_FALLBACK=error timeout $((580 - SECONDS)) python3 -m pytest -q -p no:cacheprovider -n 14 \
    -rfE --tb=line tests/torch/test_opinfo.py > $OUT/pytest_opinfo.log 2>&1
  echo "opinfo: $(tail -1 $OUT/pytest_opinfo.log)"
  grep -E "^(FAILED|ERROR) " $OUT/pytest_opinfo.log | cut -c1-250 | head -30
elif [ "$PART" = c ]; then
  VKML_FASHION_MNIST=$PWD/.fmnist VKML_FALLBACK=error timeout 200 python3 -m pytest -q -n 8 \
    -p no:cacheprovider -rfE --tb=short tests/torch/test_elementwise.py tests/torch/test_unpool.py \
    tests/torch/test_unique_count.py tests/torch/test_examples.py -k "not classify and not generate and not transcribe and not embed" \
    > $OUT/pytest_c.log 2>&1
  echo "pytest: $(tail -1 $OUT/pytest_c.log)"; grep -E "^(FAILED|ERROR) " $OUT/pytest_c.log | cut -c1-300 | head
  timeout 60 ./build-h200/tests/vkml_ops_tests --gtest_filter='IndexTest.*:ElementwiseTest.*' > $OUT/gtest_c.log 2>&1
  echo "gtest: $(grep -E '^\[  (PASSED|FAILED)' $OUT/gtest_c.log | tr '\n' ' ')"
  for fold in 0 1 0 1; do
    VKML_CONV_FOLD=$fold timeout 60 python3 bench/bench_models.py --only resnet50_infer_b64_float16 \
      --repeat 20 2>&1 | grep -E "^ +model" | sed "s/^/[fold $fold] /"
  done
  for fold in 0 1; do
    VKML_CONV_FOLD=$fold timeout 60 python3 bench/bench_models.py --only resnet50_infer_b64_float16 \
      --profile 10 > $OUT/profile_fold$fold.txt 2>&1; echo "[fold $fold profile]"; head -16 $OUT/profile_fold$fold.txt
  done
else
  timeout 90 python3 bench/bench_conv_fold.py --dtype float16 2>&1 | tee $OUT/conv_fold.txt
  for fold in 0 1; do
    VKML_CONV_FOLD=$fold timeout 100 python3 bench/bench_models.py --only resnet50 2>&1 |
      grep -E "^ +model" | sed "s/^/[fold $fold] /"
  done
  timeout 80 python3 bench/bench_models.py --only resnet18 2>&1 | grep -E "^ +model|loss" | sed "s/^/[tf32 cuda] /"
  timeout 80 python3 bench/bench_models.py --only resnet18 --cuda-no-tf32 2>&1 |
    grep -E "^ +model|loss" | sed "s/^/[fp32 cuda] /"
  timeout $((580 - SECONDS)) python3 bench/gemm32_sweep.py --budget $((520 - SECONDS)) \
    --configs nM16,nL16a,nM8,nM16w,nN16,nXL8 --shapes sq8k,vit1d,rn1,g-fc2,rnW 2>&1 |
    tee $OUT/gemm32_sweep.txt | tail -8
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
