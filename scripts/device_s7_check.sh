#!/bin/bash
# On the GPU machine, two calls of one lease (each under the 10-minute limit; ~15 device minutes):
#   part 1: build, test_conv.py on the GPU (both algorithms), the implicit-GEMM convolution against
#           im2col + GEMM per ResNet layer (fp32, fp16), and the ResNets against CUDA with each
#           path: decides VKML_CONV's GPU default;
#   part 2: the conv layers against CUDA (bench_ops.py) with each path, then the memory-bound ops
#           (column reductions' named states, fp16 sigmoid) and test_reduce.py.
# Usage: bash scripts/device_s7_check.sh 1|2. Summary to stdout; logs to $OUT.
set -uo pipefail
PART=${1:-1}
source scripts/device_build_env.sh
t0=$SECONDS
if [ "$PART" = 1 ]; then
  VKML_FALLBACK=error timeout 120 python3 -m pytest -q -p no:cacheprovider --tb=short \
    tests/torch/test_conv.py > "$OUT/pytest_conv.log" 2>&1
  echo "pytest test_conv.py ($((SECONDS - t0)) s): $(tail -1 "$OUT/pytest_conv.log")"
  grep -E "^FAILED|^ERROR|^E  " "$OUT/pytest_conv.log" | head -12
  for dt in float32 float16; do
    timeout 110 python3 bench/bench_conv_algos.py --dtype $dt --json "$OUT/conv_algos_$dt.json" \
      > "$OUT/conv_algos_$dt.log" 2>&1
    echo "== conv algorithms, $dt ($((SECONDS - t0)) s)"; cat "$OUT/conv_algos_$dt.log"
  done
  for mode in im2col implicit; do
    VKML_CONV=$mode timeout 100 python3 bench/bench_models.py --only resnet --repeat 10 \
      --json "$OUT/models_$mode.json" > "$OUT/models_$mode.log" 2>&1
    echo "== ResNets, VKML_CONV=$mode ($((SECONDS - t0)) s)"
    tail -6 "$OUT/models_$mode.log"
  done
else
  for mode in im2col implicit; do
    VKML_CONV=$mode timeout 150 python3 bench/bench_ops.py --only conv \
      --json "$OUT/conv_$mode.json" > "$OUT/conv_$mode.log" 2>&1
    echo "== conv layers vs CUDA, VKML_CONV=$mode ($((SECONDS - t0)) s)"
    grep -E "float" "$OUT/conv_$mode.log" | head -32
  done
  timeout 90 python3 bench/bench_ops.py --only memory --json "$OUT/bench_memory.json" \
    > "$OUT/bench_memory.log" 2>&1
  echo "== memory-bound ops ($((SECONDS - t0)) s)"; grep -iE "column|sum|copy|add|sigmoid" "$OUT/bench_memory.log"
  VKML_FALLBACK=error timeout 120 python3 -m pytest -q -p no:cacheprovider --tb=short \
    tests/torch/test_reduce.py > "$OUT/pytest_reduce.log" 2>&1
  echo "pytest test_reduce.py: $(tail -1 "$OUT/pytest_reduce.log")"
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
