#!/bin/bash
# On the GPU machine, session 9's second look (one call, under 10 minutes): the cooperative-matrix
# convolution's channel octets (VKML_CONV_COOPMAT_B=octets, the default where channels per group
# are a multiple of 8) and the fp16/bf16 forward on that kernel by default.
#   ConvTest (every B gather, fp32 as bf16 pairs too); test_conv.py with the defaults and with
#   fp32 on tensor cores; fp16 layers per algorithm and per gradient; fp32 layers on tensor cores;
#   the ResNets with the defaults and with VKML_CONV_COOPMAT=1; the conv layers against CUDA.
# Usage: bash scripts/device_s9b_check.sh. Summary to stdout; logs to $OUT.
set -uo pipefail
source scripts/device_build_env.sh
t0=$SECONDS
timeout 150 ./build-h200/tests/vkml_ops_tests --gtest_filter='Conv*' > "$OUT/gtest_conv.log" 2>&1
echo "gtest Conv* ($((SECONDS - t0)) s): $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gtest_conv.log" | tr '\n' ' ')"
grep -B2 -A6 "Failure" "$OUT/gtest_conv.log" | head -30
for cfg in "" "VKML_CONV_COOPMAT=1"; do
  env $cfg VKML_FALLBACK=error timeout 120 python3 -m pytest -q -p no:cacheprovider --tb=line \
    tests/torch/test_conv.py > "$OUT/pytest_conv.log" 2>&1
  echo "pytest test_conv.py [$cfg] ($((SECONDS - t0)) s): $(tail -1 "$OUT/pytest_conv.log")"
  grep -E "^FAILED|^E  " "$OUT/pytest_conv.log" | cut -c1-300 | head -8
done
for cfg in "" "VKML_CONV_COOPMAT=1"; do
  env $cfg timeout 100 python3 bench/bench_models.py --only resnet --repeat 10 > "$OUT/models.log" 2>&1
  echo "== ResNets [$cfg] ($((SECONDS - t0)) s)"; grep -E "model|first-step|fallbacks" "$OUT/models.log"
done
timeout 120 python3 bench/bench_conv_algos.py --dtype float16 --json "$OUT/algos16.json" \
  > "$OUT/conv_algos16.log" 2>&1
echo "== fp16 layers ($((SECONDS - t0)) s)"; tail -53 "$OUT/conv_algos16.log"
VKML_CONV_COOPMAT=1 timeout 100 python3 bench/bench_conv_algos.py --dtype float32 \
  > "$OUT/conv_algos32.log" 2>&1
echo "== fp32 layers, VKML_CONV_COOPMAT=1 ($((SECONDS - t0)) s)"; tail -53 "$OUT/conv_algos32.log"
timeout 100 python3 bench/bench_ops.py --only conv --json "$OUT/bench_conv.json" > "$OUT/bench_conv.log" 2>&1
echo "== conv layers against CUDA ($((SECONDS - t0)) s)"; grep -E "conv " "$OUT/bench_conv.log" | head -40
echo "done: $((SECONDS - t0)) s after the build"
