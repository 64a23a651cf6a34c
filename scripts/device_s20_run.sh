#!/bin/bash
# On the GPU machine, the twentieth session (each part under 10 minutes; carry .vktc, .devpy and
# .fmnist):
#   part p: the fp32 activations beside CUDA (bench_ops --only activation: GELU's erf path is now
#           branch-free), one step of ViT and GPT-2 profiled kernel by kernel on vkml and on CUDA
#           (bench_models --profile), then ViT and GPT-2 timed beside CUDA.
#   part c: on a fresh machine (empty shader caches), the five models beside CUDA with each first
#           call's pipeline builds and driver allocations counted, then one step of ViT, GPT-2
#           and ResNet-50 fp32 profiled kernel by kernel on vkml and on CUDA (a child process).
#   part l: on a fresh machine, each pipeline's build time (VKML_PIPELINE_LOG=1) in the first
#           calls of ResNet-18, ResNet-50 fp16 and ViT (vkml alone), the 25 slowest; then as t.
#   part v (for the next session): the GELU/erf tests that failed in part l before the fix, the
#           threaded-build tests, then cold first calls (driver disk cache off, empty vkml cache)
#           of ResNet-18, ResNet-50 fp16 and ViT without and with VKML_PIPELINE_THREADS=8.
#   part t: the correctness suites (device_suites.sh), then the five models beside CUDA in the
#           time left.
# Usage: bash scripts/device_s20_run.sh p|c|l|v|t. Summary to stdout; logs to $OUT.
set -uo pipefail
PART=${1:-p}
source scripts/device_build_env.sh
export PYTHONPATH=$PWD:$PWD/.devpy
t0=$SECONDS

if [ "$PART" = p ]; then
  timeout 90 python3 bench/bench_ops.py --only activation > $OUT/activations.txt 2>&1
  grep -E "activation|fallbacks|Error" $OUT/activations.txt | cut -c1-130
  timeout 150 python3 bench/bench_models.py --only vit,gpt2 --profile 28 > $OUT/profile.txt 2>&1
  echo "profile: $(grep -c . $OUT/profile.txt) lines in profile.txt"
  grep -E "^== |all kernels|Error" $OUT/profile.txt | cut -c1-130
  timeout $((560 - SECONDS)) python3 bench/bench_models.py --only vit,gpt2 --json $OUT/models.json \
    > $OUT/models.txt 2>&1
  grep -E "model |loss|fallbacks|Error|gelu|erf" $OUT/models.txt | cut -c1-150
fi
if [ "$PART" = c ]; then
  timeout 330 python3 bench/bench_models.py --json $OUT/models.json > $OUT/models.txt 2>&1
  grep -E "model |loss|fallbacks|Error|first call" $OUT/models.txt | cut -c1-150
  timeout $((560 - SECONDS)) python3 bench/bench_models.py --profile 16 \
    --only vit,gpt2,resnet50_infer_b64_float32 > $OUT/profile.txt 2>&1
  grep -E "^== |all kernels|Error" $OUT/profile.txt | cut -c1-130
fi
if [ "$PART" = l ]; then
  VKML_PIPELINE_LOG=1 timeout 120 python3 bench/bench_models.py --vkml-only --no-diagnose \
    --repeat 3 --only resnet18,resnet50_infer_b64_float16,vit > $OUT/pipeline_log.txt 2>&1
  grep -E "model |first call|Error" $OUT/pipeline_log.txt | cut -c1-150
  echo "pipelines built: $(grep -c 'pipeline build' $OUT/pipeline_log.txt); slowest:"
  grep "pipeline build" $OUT/pipeline_log.txt | sort -t' ' -k6 -g -r | head -25 | cut -c21-150
  PART=t
fi
if [ "$PART" = v ]; then
  VKML_FALLBACK=error timeout 120 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short \
    tests/torch/test_elementwise.py tests/torch/test_device_api.py > $OUT/pytest_v.log 2>&1
  echo "pytest elementwise/device_api: $(tail -1 $OUT/pytest_v.log)"
  grep -E "^(FAILED|ERROR) " $OUT/pytest_v.log | cut -c1-300 | head -10
  timeout 60 ./build-h200/tests/vkml_runtime_tests --gtest_filter='Pipeline*:Stream*' 2>&1 | tail -1
  for threads in 0 8; do
    rm -rf $VKML_CACHE_DIR ~/.nv/ComputeCache
    __GL_SHADER_DISK_CACHE=0 VKML_PIPELINE_THREADS=$threads timeout 150 python3 \
      bench/bench_models.py --vkml-only --no-diagnose --repeat 3 \
      --only resnet18,resnet50_infer_b64_float16,vit 2>&1 | grep -E "model |first call|Error" \
      | cut -c1-150 | sed "s/^/threads $threads /"
  done
  left=$((585 - SECONDS))
  [ $left -gt 40 ] && timeout $left python3 bench/bench_ops.py --only activation 2>&1 \
    | grep -E "activation|fallbacks|Error" | cut -c1-130
fi
if [ "$PART" = t ]; then
  source scripts/device_suites.sh
  left=$((585 - SECONDS))
  [ $left -gt 60 ] && timeout $left python3 bench/bench_models.py --json $OUT/models.json \
    > $OUT/models.txt 2>&1
  grep -E "model |loss|fallbacks|Error" $OUT/models.txt | cut -c1-150
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
