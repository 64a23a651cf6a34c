#!/bin/bash
# On the GPU machine, the tenth session's third call (under 10 minutes): the unaligned-operand
# GEMM path, the tiled transposing copy and the 32-bit pooling index, checked (gtests, then the
# torch suites that reach them, VKML_FALLBACK=error) and timed in the ResNet models against CUDA
# in the same command, with the ResNet-50 fp16 kernel profile.
# Usage: bash scripts/device_s10c_check.sh. Summary to stdout; logs to $OUT.
set -uo pipefail
source scripts/device_build_env.sh
t0=$SECONDS
timeout 200 ./build-h200/tests/vkml_ops_tests \
  --gtest_filter='GemmTest.*:GemmPlanTest.*:CopyTest.*:PoolTest.*:ConvTest.*' > "$OUT/gtest.log" 2>&1
echo "gtest ($((SECONDS - t0)) s): $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gtest.log" | tr '\n' ' ')"
grep -E "^\[  FAILED" "$OUT/gtest.log" | head
VKML_FALLBACK=error timeout 200 python3 -m pytest -q -p no:cacheprovider tests/torch/test_gemm.py \
  tests/torch/test_conv.py tests/torch/test_pool.py tests/torch/test_copies_views.py > "$OUT/pytest.log" 2>&1
echo "pytest ($((SECONDS - t0)) s): $(tail -1 "$OUT/pytest.log")"
grep -E "^FAILED|^ERROR" "$OUT/pytest.log" | head
timeout 200 python3 bench/bench_models.py --only resnet --json "$OUT/models.json" > "$OUT/models.txt" 2>&1
tail -12 "$OUT/models.txt"
timeout 60 python3 bench/bench_models.py --profile 12 --only resnet50_infer_b64_float16 2>&1 | cut -c1-90 | tail -16
echo "done: $((SECONDS - t0)) s after the build"
