#!/bin/bash
# On the GPU machine, one lease (~10 min of device time): build, the implicit-GEMM convolution
# against im2col + GEMM (decides VKML_CONV's GPU default), test_conv.py on the GPU (both paths),
# the ResNets against CUDA with each path, then the memory-bound ops (column reductions' named
# states) and test_reduce.py. Summary to stdout; logs to $OUT.
set -uo pipefail
source scripts/device_build_env.sh
t0=$SECONDS
VKML_FALLBACK=error timeout 120 python3 -m pytest -q -p no:cacheprovider --tb=short \
  tests/torch/test_conv.py > "$OUT/pytest_conv.log" 2>&1
echo "pytest test_conv.py ($((SECONDS - t0)) s): $(tail -1 "$OUT/pytest_conv.log")"
grep -E "^FAILED|^ERROR|^E  " "$OUT/pytest_conv.log" | head -12
for dt in float32 float16; do
  timeout 120 python3 bench/bench_conv_algos.py --dtype $dt --json "$OUT/conv_algos_$dt.json" \
    > "$OUT/conv_algos_$dt.log" 2>&1
  echo "== conv algorithms, $dt ($((SECONDS - t0)) s)"; cat "$OUT/conv_algos_$dt.log"
done
for mode in im2col implicit; do
  VKML_CONV=$mode timeout 150 python3 bench/bench_ops.py --only conv --json "$OUT/conv_$mode.json" \
    > "$OUT/conv_$mode.log" 2>&1
  echo "== conv layers, VKML_CONV=$mode ($((SECONDS - t0)) s)"
  grep -E "fp32" "$OUT/conv_$mode.log" | head -20
done
for mode in im2col implicit; do
  VKML_CONV=$mode timeout 120 python3 bench/bench_models.py --only resnet --repeat 10 \
    --json "$OUT/models_$mode.json" > "$OUT/models_$mode.log" 2>&1
  echo "== ResNets, VKML_CONV=$mode ($((SECONDS - t0)) s)"
  tail -6 "$OUT/models_$mode.log"
done
# Column reductions with named per-column states (reduce_col<W>_*; 0.21-0.27x of CUDA before).
timeout 90 python3 bench/bench_ops.py --only memory --json "$OUT/bench_memory.json" > "$OUT/bench_memory.log" 2>&1
echo "== memory-bound ops ($((SECONDS - t0)) s)"; grep -iE "column|sum|copy|add fp32" "$OUT/bench_memory.log"
VKML_FALLBACK=error timeout 120 python3 -m pytest -q -p no:cacheprovider --tb=short tests/torch/test_reduce.py \
  > "$OUT/pytest_reduce.log" 2>&1
echo "pytest test_reduce.py: $(tail -1 "$OUT/pytest_reduce.log")"
echo "total $((SECONDS - t0)) s after the build"
