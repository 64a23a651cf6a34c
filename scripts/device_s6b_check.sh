#!/bin/bash
# On the GPU machine (sixth session, second lease): build, values near the top of the float range
# against the CPU, the special-function and attention tests, ViT/GPT-2 against CUDA with the
# attention default now "auto". Summary to stdout; logs to $OUT.
set -uo pipefail
source scripts/device_build_env.sh
t0=$SECONDS
VKML_FALLBACK=error timeout 60 python3 scripts/diag_overflow.py 2>&1 | tee "$OUT/diag_overflow.txt"
VKML_FALLBACK=error timeout ${PYTEST_TIMEOUT:-150} python3 -m pytest -q -p no:cacheprovider --tb=short \
  tests/torch/test_elementwise_special.py tests/torch/test_attention_gemm.py tests/torch/test_attention.py \
  > "$OUT/pytest.log" 2>&1
echo "pytest ($((SECONDS - t0)) s): $(tail -1 "$OUT/pytest.log")"
grep -E "^FAILED|^ERROR|^E  " "$OUT/pytest.log" | head -24
timeout ${MODELS_TIMEOUT:-120} python3 bench/bench_models.py --only vit,gpt --repeat 5 > "$OUT/bench_models.log" 2>&1
tail -6 "$OUT/bench_models.log"
echo "total $((SECONDS - t0)) s after the build"
