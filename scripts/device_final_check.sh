#!/bin/bash
# One lease at the end of a session: build, the torch tests of the families changed in the
# session (on the GPU, where cooperative matrices, fp64 and large sorts take other paths than on
# lavapipe), then the model benchmarks against CUDA. TESTS overrides the list.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
STEPS=none OUT=$OUT bash scripts/device_session_check.sh 2>&1 | tail -2
export PATH=$PWD/.vktc/usr/bin:$PATH LD_LIBRARY_PATH=$PWD/.vktc/usr/lib/x86_64-linux-gnu
export VKML_CACHE_DIR=/tmp/vkml-cache PYTHONPATH=$PWD
T=tests/torch
TESTS=${TESTS:-"$T/test_ctc.py $T/test_shape.py $T/test_sort.py $T/test_large.py $T/test_norm.py
  $T/test_norm_fast.py $T/test_conv.py $T/test_linalg.py $T/test_special_functions.py
  $T/test_composite_ops.py $T/test_attention.py $T/test_distributed.py::test_collectives_two_ranks
  $T/test_models.py"}
VKML_FALLBACK=error timeout ${PYTEST_TIMEOUT:-230} python3 -m pytest -q -p no:cacheprovider $TESTS \
  > $OUT/pytest.log 2>&1
echo "pytest: $(tail -1 $OUT/pytest.log)"; grep -E "^FAILED|^ERROR" $OUT/pytest.log | head -20
timeout ${MODELS_TIMEOUT:-200} python3 bench/bench_models.py --json $OUT/bench_models.json \
  > $OUT/bench_models.log 2>&1
grep -E "model |loss|fallbacks" $OUT/bench_models.log
