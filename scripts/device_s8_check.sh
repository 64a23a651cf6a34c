#!/bin/bash
# On the GPU machine (one call, under the 10-minute limit): build; the convolution tests on the
# GPU (C++ ConvTest, test_conv.py), which now run the cooperative-matrix implicit kernels (fp16,
# bf16, and fp32 as bf16 pairs); those kernels against im2col + GEMM per ResNet layer; the four
# models against CUDA; one profiled ResNet-18 step. Summary to stdout; logs to $OUT.
set -uo pipefail
source scripts/device_build_env.sh
t0=$SECONDS
timeout 150 ./build-h200/tests/vkml_ops_tests --gtest_filter='ConvTest.*' > "$OUT/gtest_conv.log" 2>&1
echo "gtest ConvTest ($((SECONDS - t0)) s): $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gtest_conv.log" | tr '\n' ' ')"
grep -B2 -A6 "Failure" "$OUT/gtest_conv.log" | head -40
VKML_FALLBACK=error timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short \
  tests/torch/test_conv.py > "$OUT/pytest_conv.log" 2>&1
echo "pytest test_conv.py ($((SECONDS - t0)) s): $(tail -1 "$OUT/pytest_conv.log")"
grep -E "^FAILED|^ERROR|^E  " "$OUT/pytest_conv.log" | head -16
for dt in float32 float16; do
  timeout 100 python3 bench/bench_conv_algos.py --dtype $dt --json "$OUT/conv_algos_$dt.json" \
    > "$OUT/conv_algos_$dt.log" 2>&1
  echo "== conv algorithms, $dt ($((SECONDS - t0)) s)"; cat "$OUT/conv_algos_$dt.log" | tail -28
done
timeout 200 python3 bench/bench_models.py --repeat 10 --json "$OUT/models.json" > "$OUT/models.log" 2>&1
echo "== models ($((SECONDS - t0)) s)"; grep -E "model|first-step|fallbacks" "$OUT/models.log"
timeout 60 python3 bench/bench_models.py --only resnet18 --profile 12 > "$OUT/profile.log" 2>&1
grep -v "^\s*$" "$OUT/profile.log" | head -20
echo "done: $((SECONDS - t0)) s after the build"
