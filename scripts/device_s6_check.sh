#!/bin/bash
# On the GPU machine, one lease (sixth session, ~15 min of device time): build, the attention paths
# side by side (decides VKML_ATTENTION's default), the GPU-unverified test files, models vs CUDA.
# Summary to stdout; logs to $OUT.
set -uo pipefail
source scripts/device_build_env.sh
t0=$SECONDS
for path in fused auto; do
  VKML_ATTENTION=$path timeout 80 python3 bench/bench_models.py --only vit,gpt --vkml-only --repeat 5 > "$OUT/models_$path.log" 2>&1
  echo "attention=$path: $(grep -iE 'vit|gpt' "$OUT/models_$path.log" | tr -s ' ' | tr '\n' ';')"
done
VKML_FALLBACK=error timeout ${PYTEST_TIMEOUT:-170} python3 -m pytest -q -p no:cacheprovider --tb=short \
  tests/torch/test_attention_gemm.py tests/torch/test_foreach.py tests/torch/test_reduce.py \
  tests/torch/test_elementwise_special.py tests/torch/test_attention.py > "$OUT/pytest.log" 2>&1
echo "pytest ($((SECONDS - t0)) s): $(tail -1 "$OUT/pytest.log")"
grep -E "^FAILED|^ERROR" "$OUT/pytest.log" | head -15
timeout ${MODELS_TIMEOUT:-170} python3 bench/bench_models.py --repeat 5 --json "$OUT/bench_models.json" > "$OUT/bench_models.log" 2>&1
tail -12 "$OUT/bench_models.log"
echo "total $((SECONDS - t0)) s after the build"
