#!/bin/bash
# On the GPU machine, one lease (fifth session): build, the correctness files touched this session on
# the GPU, then models and ops against CUDA, the attention paths side by side and the amp profile.
# Summary to stdout; logs to $OUT.
set -uo pipefail
source scripts/device_build_env.sh
t0=$SECONDS
VKML_FALLBACK=error timeout ${PYTEST_TIMEOUT:-240} python3 -m pytest -q -p no:cacheprovider --tb=short \
  ${PYTEST_FILES:-tests/torch/test_attention.py tests/torch/test_attention_gemm.py tests/torch/test_reduce.py tests/torch/test_elementwise_special.py tests/torch/test_fuzz.py tests/torch/test_copies_views.py tests/torch/test_bad_input.py} \
  > "$OUT/pytest.log" 2>&1
echo "pytest ($((SECONDS - t0)) s): $(tail -1 "$OUT/pytest.log")"
grep -E "^FAILED|^ERROR" "$OUT/pytest.log" | head -15
timeout ${MODELS_TIMEOUT:-200} python3 bench/bench_models.py --json "$OUT/bench_models.json" > "$OUT/bench_models.log" 2>&1
tail -12 "$OUT/bench_models.log"
for path in fused auto; do
  VKML_ATTENTION=$path timeout 100 python3 bench/bench_models.py --only vit,gpt --vkml-only > "$OUT/models_$path.log" 2>&1
  echo "attention=$path: $(grep -E 'vit|gpt' "$OUT/models_$path.log" | tr -s ' ' | tr '\n' ';')"
done
timeout ${OPS_TIMEOUT:-150} python3 bench/bench_ops.py --only memory,nn --json "$OUT/bench_ops.json" > "$OUT/bench_ops.log" 2>&1
grep -E "reduce|sdpa|attention|softmax|norm" "$OUT/bench_ops.log" | head -20
timeout 90 python3 bench/bench_models.py --profile 8 --only resnet > "$OUT/resnet_profile.txt" 2>&1
cut -c1-75 "$OUT/resnet_profile.txt" | tail -33
timeout 90 python3 scripts/diag_amp_profile.py --device vkml --top 6 2>&1 | cut -c1-75
echo "total $((SECONDS - t0)) s after the build"
