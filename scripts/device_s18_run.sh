#!/bin/bash
# On the GPU machine, the eighteenth session (each part under 10 minutes; carry .vktc, .devpy and
# .fmnist):
#   part g: fp16 8192^3 as a check of the GPU's state, the fp32 split against the SIMT kernel on
#           GPT-2's and ViT's few-block weight-gradient shapes (is the 512-block rule right?), the
#           five models beside CUDA with nvidia-smi, then ViT's and GPT-2's kernels profiled.
#   part t: the correctness suites (device_suites.sh), then fp16 8192^3 in the time left.
# Usage: bash scripts/device_s18_run.sh g|t. Summary to stdout; logs to $OUT.
set -uo pipefail
PART=${1:-g}
source scripts/device_build_env.sh
export PYTHONPATH=$PWD:$PWD/.devpy
t0=$SECONDS
if [ "$PART" = g ]; then
  timeout 40 python3 bench/bench_gemm.py --dtype float16 --no-cpu --shapes 8192x8192x8192 | tail -1
  timeout 120 python3 bench/gemm_f32_split_check.py --kchunks 1024 \
    --shapes 2304x4096x768,3072x4096x768,768x4096x3072,768x12608x3072,4096x768x3072,4096x3072x768 \
    > $OUT/f32_split_grad.txt 2>&1
  grep "|" $OUT/f32_split_grad.txt | sed -E 's/ TFLOP\/s//g; s/err max/max/g'
  source scripts/device_models_smi.sh
  left=$((580 - SECONDS))
  [ $left -gt 40 ] && timeout $left python3 bench/bench_models.py --only vit,gpt2 --profile 22 \
    > $OUT/profile.txt 2>&1
  cut -c1-110 $OUT/profile.txt | head -56
fi
if [ "$PART" = t ]; then
  source scripts/device_suites.sh
  left=$((585 - SECONDS))
  [ $left -gt 30 ] && timeout $left python3 bench/bench_gemm.py --dtype float16 --no-cpu \
    --shapes 8192x8192x8192 | tail -1
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
