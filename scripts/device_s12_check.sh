#!/bin/bash
# On the GPU machine, for the session after the eleventh (each part under 10 minutes):
#   part 1: the GPU's state first (fp16 8192^3 GEMM: about 265 TFLOP/s normally, a quarter of
#           that in the slow state that spoiled three earlier calls), the fp32 float controls,
#           the tests that failed in the eleventh session's last call (bf16 sigmoid/silu over
#           every value, two examples) with their messages, then VKML_CONV_FOLD per 1x1 layer
#           (fp16, fp32) and ResNet-50 inference with and without it.
#   part 2: the gtest and torch suites (without the OpInfo sweep), which that call cut short.
# Usage: bash scripts/device_s12_check.sh 1|2. Summary to stdout; logs to $OUT.
set -uo pipefail
PART=${1:-1}
source scripts/device_build_env.sh
t0=$SECONDS
if [ "$PART" = 1 ]; then
  timeout 40 python3 bench/bench_gemm.py --dtype float16 --no-cpu --shapes 8192x8192x8192 | tail -1
  ./build-h200/vkml-info | grep "fp32 controls"
  VKML_FALLBACK=error timeout 150 python3 -m pytest -q -p no:cacheprovider \
    -k "half_sigmoid_silu or train_vit or amp_training" tests/torch/test_elementwise.py \
    tests/torch/test_examples.py > $OUT/pytest_k.log 2>&1
  echo "pytest: $(tail -1 $OUT/pytest_k.log)"; grep -E "^E " $OUT/pytest_k.log | head -12
  for dt in float16 float32; do timeout 90 python3 bench/bench_conv_fold.py --dtype $dt; done
  for fold in 0 1; do
    VKML_CONV_FOLD=$fold timeout 100 python3 bench/bench_models.py --only resnet50 2>&1 |
      grep -E "^ +model" | sed "s/^/[fold $fold] /"
  done
else
  for t in runtime ops; do timeout 200 ./build-h200/tests/vkml_${t}_tests > $OUT/gtest_$t.log 2>&1
    echo "gtest $t: $(grep -E '^\[  (PASSED|FAILED)' $OUT/gtest_$t.log | tr '\n' ' ')"; done
  grep -h -B3 -A6 "Failure" $OUT/gtest_*.log | head -30
  VKML_FALLBACK=error timeout $((560 - SECONDS)) python3 -m pytest -q -p no:cacheprovider \
    tests/torch --ignore=tests/torch/test_opinfo.py > $OUT/pytest.log 2>&1
  echo "pytest: $(tail -1 $OUT/pytest.log)"; grep -E "^FAILED|^ERROR" $OUT/pytest.log | head -20
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
