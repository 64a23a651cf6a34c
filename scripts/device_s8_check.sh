#!/bin/bash
# On the GPU machine (one call, under the 10-minute limit): build; the convolution tests on the
# GPU (C++ ConvTest; test_conv.py with the defaults and with VKML_CONV_COOPMAT=1, which puts fp32
# on the cooperative-matrix kernels as bf16 pairs); fp16 layers per algorithm and with the default
# choice (skipped in the last run: the budget); the four models against CUDA. Summary to stdout; logs to $OUT.
set -uo pipefail
source scripts/device_build_env.sh
t0=$SECONDS
timeout 150 ./build-h200/tests/vkml_ops_tests --gtest_filter='ConvTest.*' > "$OUT/gtest_conv.log" 2>&1
echo "gtest ConvTest ($((SECONDS - t0)) s): $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gtest_conv.log" | tr '\n' ' ')"
grep -B2 -A6 "Failure" "$OUT/gtest_conv.log" | head -30
for coop in "" 1; do
  VKML_CONV_COOPMAT=$coop VKML_FALLBACK=error timeout 150 python3 -m pytest -q -p no:cacheprovider \
    --tb=line tests/torch/test_conv.py > "$OUT/pytest_conv$coop.log" 2>&1
  echo "pytest test_conv.py, VKML_CONV_COOPMAT=$coop ($((SECONDS - t0)) s): $(tail -1 "$OUT/pytest_conv$coop.log")"
  grep -E "^FAILED|^E  |Error" "$OUT/pytest_conv$coop.log" | cut -c1-300 | head -12
done
: timeout 100 python3 bench/bench_conv_algos.py --dtype float16 > "$OUT/conv_algos.log" 2>&1
: echo "== conv algorithms, float16 ($((SECONDS - t0)) s)"; tail -27 "$OUT/conv_algos.log"
timeout 200 python3 bench/bench_models.py --repeat 10 --json "$OUT/models.json" > "$OUT/models.log" 2>&1
echo "== models ($((SECONDS - t0)) s)"; grep -E "model|first-step|fallbacks" "$OUT/models.log"
echo "done: $((SECONDS - t0)) s after the build"
