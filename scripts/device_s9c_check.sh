#!/bin/bash
# On the GPU machine, session 9's last call (under 7 minutes): the per-pass defaults chosen from
# the fp16 layer table (1x1 kernels keep their GEMMs; the input gradient needs 8 channels; the
# implicit weight gradient only over short columns) checked and timed, the models for the record,
# and a forward tile sweep (VKML_CONV_COOP_TILE) on the cooperative-matrix kernel.
# Usage: bash scripts/device_s9c_check.sh. Summary to stdout; logs to $OUT.
set -uo pipefail
source scripts/device_build_env.sh
t0=$SECONDS
timeout 100 ./build-h200/tests/vkml_ops_tests --gtest_filter='Conv*' > "$OUT/gtest_conv.log" 2>&1
echo "gtest Conv* ($((SECONDS - t0)) s): $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gtest_conv.log" | tr '\n' ' ')"
grep -B2 -A6 "Failure" "$OUT/gtest_conv.log" | head -20
VKML_FALLBACK=error timeout 100 python3 -m pytest -q -p no:cacheprovider --tb=line \
  tests/torch/test_conv.py > "$OUT/pytest_conv.log" 2>&1
echo "pytest test_conv.py ($((SECONDS - t0)) s): $(tail -1 "$OUT/pytest_conv.log")"
grep -E "^FAILED|^E  " "$OUT/pytest_conv.log" | cut -c1-300 | head -8
timeout 200 python3 bench/bench_models.py --repeat 10 --json "$OUT/models.json" > "$OUT/models.log" 2>&1
echo "== models ($((SECONDS - t0)) s)"; grep -E "model|first-step|fallbacks" "$OUT/models.log"
timeout 90 python3 bench/bench_conv_algos.py --dtype float16 --json "$OUT/algos16.json" \
  > "$OUT/algos16.log" 2>&1
echo "== fp16 layers ($((SECONDS - t0)) s)"; cat "$OUT/algos16.log"
for tile in 128x128x8x4x2 64x64x4x2x2 128x128x4x4x4 128x64x4x4x2; do
  VKML_CONV_COOP_TILE=$tile timeout 30 python3 bench/bench_conv_algos.py --dtype float16 \
    --passes fwd --algos implicit 2>&1 | awk -v t=$tile 'NR > 1 {print t, $1, $2, $3, $4, $7}'
done
echo "done: $((SECONDS - t0)) s after the build"
