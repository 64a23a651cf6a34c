#!/bin/bash
# On the GPU machine, the twenty-first session (each part under 10 minutes; carry .vktc, .devpy
# and .fmnist):
#   part b: the pipeline and stream tests (copies, fills and uploads now wait behind dispatches
#           whose pipelines build on threads), then cold first calls (driver disk cache off, empty
#           vkml cache) of ResNet-18, ResNet-50 fp16 and ViT with VKML_PIPELINE_THREADS=0 and 8,
#           each build's start and length logged (VKML_PIPELINE_LOG=1) to see whether they overlap.
#   part a: the activations beside CUDA with relu and neg as controls (no math per element).
#   part t: the correctness suites (device_suites.sh), then the five models beside CUDA in the
#           time left.
# Usage: bash scripts/device_s21_run.sh b|a|t. Summary to stdout; logs to $OUT.
set -uo pipefail
PART=${1:-b}
source scripts/device_build_env.sh
export PYTHONPATH=$PWD:$PWD/.devpy
t0=$SECONDS

if [ "$PART" = b ]; then
  timeout 60 ./build-h200/tests/vkml_runtime_tests --gtest_filter='Pipeline*:Stream*' 2>&1 | tail -1
  VKML_PIPELINE_THREADS=8 VKML_FALLBACK=error timeout 90 python3 -m pytest -q -p no:cacheprovider \
    -rfE --tb=short tests/torch/test_device_api.py > $OUT/pytest_b.log 2>&1
  echo "pytest device_api (threads 8): $(tail -1 $OUT/pytest_b.log)"
  for threads in 0 8; do
    rm -rf $VKML_CACHE_DIR ~/.nv/ComputeCache
    __GL_SHADER_DISK_CACHE=0 VKML_PIPELINE_THREADS=$threads VKML_PIPELINE_LOG=1 timeout 170 \
      python3 bench/bench_models.py --vkml-only --no-diagnose --repeat 3 \
      --only resnet18,resnet50_infer_b64_float16,vit > $OUT/cold_t$threads.txt 2>&1
    grep -E "model |first call|Error" $OUT/cold_t$threads.txt | cut -c1-150 \
      | sed "s/^/threads $threads /"
    # Builds' summed length against the span from the first start to the last end.
    python3 - $OUT/cold_t$threads.txt <<'PY'
import re, sys
b = [(float(m[1]), float(m[0])) for m in
     re.findall(r"pipeline build: .* ([\d.]+) ms \(from ([\d.]+) ms\)", open(sys.argv[1]).read())]
if b:
    span = max(s + d for s, d in b) - min(s for s, _ in b)
    print(f"  {len(b)} builds: summed {sum(d for _, d in b) / 1e3:.1f} s over a span of "
          f"{span / 1e3:.1f} s; longest {max(d for _, d in b) / 1e3:.2f} s")
PY
  done
fi
if [ "$PART" = a ]; then
  timeout 200 python3 bench/bench_ops.py --only activation > $OUT/activations.txt 2>&1
  grep -E "activation|fallbacks|Error" $OUT/activations.txt | cut -c1-130
fi
if [ "$PART" = t ]; then
  source scripts/device_suites.sh
  left=$((585 - SECONDS))
  [ $left -gt 60 ] && timeout $left python3 bench/bench_models.py --json $OUT/models.json \
    > $OUT/models.txt 2>&1
  grep -E "model |loss|fallbacks|Error" $OUT/models.txt | cut -c1-150
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
