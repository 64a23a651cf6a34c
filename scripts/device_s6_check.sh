#!/bin/bash
# On the GPU machine, one lease (sixth session, ~15 min of device time): build, the attention paths
# side by side (decides VKML_ATTENTION's default), the GPU-unverified test files, models vs CUDA.
# Summary to stdout; logs to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
STEPS=none bash scripts/device_session_check.sh > "$OUT/build.txt" 2>&1 || { cat "$OUT/build.txt"; exit 1; }
head -2 "$OUT/build.txt"
export PATH=$PWD/.vktc/usr/bin:$PATH LD_LIBRARY_PATH=$PWD/.vktc/usr/lib/x86_64-linux-gnu
export PYTHONPATH=$PWD VKML_CACHE_DIR=/tmp/vkml-cache
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
