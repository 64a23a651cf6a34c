#!/bin/bash
# On the GPU machine (sixth session, third lease, ~4 min): build, memory-bound ops and reductions
# against CUDA (column reductions' new layout), then test_elementwise.py on the GPU.
set -uo pipefail
source scripts/device_build_env.sh
t0=$SECONDS
timeout 75 python3 bench/bench_ops.py --only memory --json "$OUT/bench_ops.json" > "$OUT/bench_ops.log" 2>&1
grep -vE "^\s*$" "$OUT/bench_ops.log" | tail -16
VKML_FALLBACK=error timeout 75 python3 -m pytest -q -p no:cacheprovider --tb=line tests/torch/test_elementwise.py \
  > "$OUT/pytest.log" 2>&1
echo "pytest test_elementwise.py ($((SECONDS - t0)) s): $(tail -1 "$OUT/pytest.log")"
grep -E "^FAILED|^ERROR|^/|^E  " "$OUT/pytest.log" | head -12
