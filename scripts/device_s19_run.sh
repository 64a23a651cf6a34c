#!/bin/bash
# On the GPU machine, the nineteenth session (each part under 10 minutes; carry .vktc, .devpy and
# .fmnist):
#   part a: fp16 8192^3 as a check of the GPU's state, the five models beside CUDA while
#           nvidia-smi samples every 100 ms, each vkml model followed by a diagnostic round
#           (wall/host/back-to-back/GPU time, top kernels) and the smi samples inside its timing
#           window; then the ResNet-50s again with the CUDA child run after vkml, not before.
#   part t: the correctness suites (device_suites.sh), then the ResNet-50s beside CUDA with the
#           same diagnostics, three times, each in a new process with an empty pipeline cache
#           (the first call builds every pipeline while the GPU idles; warm-up now starts after
#           it), in the time left.
#   part f: fp16 and fp32 8192^3 beside cuBLAS (TF32 off), then the five models beside CUDA with
#           the diagnostics, on a fresh machine (pipelines built in the first call).
#   part g: the SIMT kernel's split-K block target (VKML_GEMM_SIMT_SPLITK_BLOCKS, 256 by default)
#           at 256/512/1024/2048 on GPT-2's and ViT's few-block products beside cuBLAS
#           (bench/gemm32_sweep.py), then ViT and GPT-2 (vkml alone) at 256, 1024 and 2048.
#   part h: with the SIMT split-K target of 1024 on NVIDIA (the new default): the GEMM gtests and
#           the GEMM, split and model pytest files, then the five models beside CUDA.
#   part n (for the next session): slices of at least 1024 for the raised SIMT target
#           (VKML_GEMM_SIMT_SPLITK_MIN_SLICE) on GPT-2's, ViT's and ResNet-50's shapes beside
#           cuBLAS, then ResNet-50 fp32, ViT and GPT-2 (vkml alone) with and without it.
# Usage: bash scripts/device_s19_run.sh a|t|f|g|h|n. Summary to stdout; logs to $OUT.
set -uo pipefail
PART=${1:-a}
source scripts/device_build_env.sh
export PYTHONPATH=$PWD:$PWD/.devpy
t0=$SECONDS

models() {  # models LABEL TIMEOUT ARGS...: bench_models with smi sampling, then the windows' samples
  local label=$1 limit=$2; shift 2
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv -lms 100 > $OUT/smi_$label.csv 2>&1 &
  local smi=$!
  timeout $limit python3 bench/bench_models.py "$@" > $OUT/models_$label.txt 2>&1
  kill $smi
  grep -E "model |loss|fallbacks|diagnose|wall|Error" $OUT/models_$label.txt | cut -c1-150
  python3 scripts/smi_windows.py $OUT/smi_$label.csv $OUT/models_$label.txt
}

if [ "$PART" = a ]; then
  timeout 40 python3 bench/bench_gemm.py --dtype float16 --no-cpu --shapes 8192x8192x8192 | tail -1
  models all 400 --json $OUT/models.json
  left=$((585 - SECONDS))
  [ $left -gt 40 ] && models r50last $left --only resnet50 --reference-last
fi
if [ "$PART" = t ]; then
  source scripts/device_suites.sh
  for i in 1 2 3; do
    left=$((585 - SECONDS))
    [ $left -gt 50 ] || break
    rm -rf $VKML_CACHE_DIR
    models r50_$i $left --only resnet50
  done
fi
if [ "$PART" = f ]; then
  timeout 40 python3 bench/bench_gemm.py --dtype float16 --no-cpu --shapes 8192x8192x8192 | tail -1
  timeout 60 python3 bench/bench_gemm.py --dtype float32 --no-cpu --shapes 8192x8192x8192 | tail -1
  models all $((585 - SECONDS)) --json $OUT/models.json
fi
if [ "$PART" = g ]; then
  timeout 150 python3 bench/gemm32_sweep.py --configs nsk256,nsk512,nsk1024,nsk2048 \
    --shapes g-qkvW,g-projW,g-fcW,g-fc2W,g-qkvD,g-proj,g-fc2,vit1w,vit2w,vit3w,vit4w \
    --budget 140 --drop-after 99 > $OUT/splitk_sweep.txt 2>&1
  grep -v "^ *$" $OUT/splitk_sweep.txt | tail -22 | cut -c1-120
  for b in 256 1024 2048; do
    left=$((560 - SECONDS))
    [ $left -gt 30 ] || break
    VKML_GEMM_SIMT_SPLITK_BLOCKS=$b timeout $((left < 110 ? left : 110)) python3 bench/bench_models.py \
      --only vit,gpt2 --vkml-only --no-diagnose 2>&1 | grep -E "model |Error" | sed "s/^/splitk $b /"
  done
fi
if [ "$PART" = h ]; then
  timeout 60 ./build-h200/tests/vkml_ops_tests --gtest_filter='Gemm*' > $OUT/gtest_gemm.log 2>&1
  echo "gtest Gemm*: $(grep -E '^\[  (PASSED|FAILED)' $OUT/gtest_gemm.log | tr '\n' ' ')"
  VKML_FASHION_MNIST=$PWD/.fmnist VKML_FALLBACK=error timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE --tb=short \
    tests/torch/test_gemm.py tests/torch/test_gemm_f32_split.py tests/torch/test_models.py \
    tests/torch/test_attention_gemm.py > $OUT/pytest_gemm.log 2>&1
  echo "pytest gemm/split/models/attention: $(tail -1 $OUT/pytest_gemm.log)"
  grep -E "^(FAILED|ERROR) " $OUT/pytest_gemm.log | cut -c1-300 | head -10
  models all $((330 - SECONDS)) --json $OUT/models.json
fi
if [ "$PART" = n ]; then
  timeout 150 python3 bench/gemm32_sweep.py --configs nsk256,nsk1024,nsk1024d,nsk2048d \
    --shapes g-qkvW,g-projW,g-fcW,g-fc2W,g-qkvD,g-proj,g-fc2,vit1w,vit2w,vit3w,vit4w,r50c5,r50c4 \
    --budget 140 --drop-after 99 > $OUT/splitk_slices.txt 2>&1
  grep -v "^ *$" $OUT/splitk_slices.txt | tail -24 | cut -c1-120
  for slice in "" 1024 ""; do
    left=$((560 - SECONDS))
    [ $left -gt 30 ] || break
    VKML_GEMM_SIMT_SPLITK_MIN_SLICE=$slice timeout $((left < 120 ? left : 120)) python3 \
      bench/bench_models.py --only resnet50_infer_b64_float32,vit,gpt2 --vkml-only --no-diagnose \
      2>&1 | grep -E "model |Error" | sed "s/^/min slice ${slice:-512} /"
  done
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
