#!/bin/bash
# On the GPU machine, the eighteenth session (each part under 10 minutes; carry .vktc, .devpy and
# .fmnist):
#   part g: fp16 8192^3 as a check of the GPU's state, the fp32 split against the SIMT kernel on
#           GPT-2's and ViT's few-block weight-gradient shapes (is the 512-block rule right?), the
#           five models beside CUDA with nvidia-smi, then ViT's and GPT-2's kernels profiled.
#   part s: the split with few-block products as split-K GEMMs, now on by default for them: the
#           split against SIMT and cuBLAS on weight-gradient and mid-sized shapes, the five
#           models with nvidia-smi, ResNet-50 inference rounds (bench/variance_probe.py: is the
#           36.5 ms fp16 state on the GPU or the host?), then ViT and GPT-2 under session 17's
#           rule (VKML_GEMM_F32_SPLIT_MIN_BLOCKS=512, vkml alone) in the time left.
#   part m: the five models with nvidia-smi, ViT and GPT-2 with the split from 128 output blocks
#           (vkml alone), GPT-2's kernels profiled (nll and embedding backward rewritten), then the opt-in few-block split-K (slices of 1024 and more)
#           against SIMT on weight-gradient shapes, in the time left (MAX seconds, default 300).
#   part r: ResNet-50 inference fp32 then fp16 in one process, rounds with kernel profiles
#           (bench/variance_probe.py), then bench_models' ResNets alone: does the 36.5-39.8 ms
#           fp16 state come after the fp32 model, and on which kernels?
#   part t: the correctness suites (device_suites.sh), then fp16 8192^3 in the time left.
# Usage: bash scripts/device_s18_run.sh g|s|m|r|t [MAX]. Summary to stdout; logs to $OUT.
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
if [ "$PART" = s ]; then
  timeout 40 python3 bench/bench_gemm.py --dtype float16 --no-cpu --shapes 8192x8192x8192 | tail -1
  timeout 150 python3 bench/gemm_f32_split_check.py --kchunks 1024 \
    --shapes 2304x4096x768,3072x4096x768,768x4096x3072,768x4096x768,4096x3072x768,768x12608x3072,768x12608x768,2304x12608x768,1024x1024x1024,2048x2048x2048 \
    > $OUT/f32_split_few.txt 2>&1
  grep "|" $OUT/f32_split_few.txt | sed -E 's/ TFLOP\/s//g; s/err max/max/g'
  tail -3 $OUT/f32_split_few.txt | grep -i -E "error|Traceback" 
  source scripts/device_models_smi.sh
  for dt in float16 float32 float16; do
    timeout 60 python3 bench/variance_probe.py --model resnet50 --dtype $dt --rounds 5 --calls 20 \
      2>&1 | grep -E "round|Error" | cut -c1-150
  done
  left=$((575 - SECONDS))
  [ $left -gt 60 ] && VKML_GEMM_F32_SPLIT_MIN_BLOCKS=512 timeout $left python3 \
    bench/bench_models.py --only vit,gpt2 --vkml-only 2>&1 | grep -E "model"
fi
if [ "$PART" = m ]; then
  MAX=${2:-300}
  source scripts/device_models_smi.sh
  VKML_GEMM_F32_SPLIT_MIN_BLOCKS=128 timeout $((MAX - 100 - SECONDS > 20 ? MAX - 100 - SECONDS : 20)) \
    python3 bench/bench_models.py --only vit,gpt2 --vkml-only 2>&1 | grep -E "model" | sed 's/^/min128 /'
  timeout $((MAX - 60 - SECONDS > 20 ? MAX - 60 - SECONDS : 20)) python3 bench/bench_models.py \
    --only gpt2 --profile 12 > $OUT/profile.txt 2>&1
  cut -c1-100 $OUT/profile.txt | head -16
  left=$((MAX - 5 - SECONDS))
  [ $left -gt 20 ] && VKML_GEMM_F32_SPLIT_FEW_BLOCKS=1024 timeout $left python3 \
    bench/gemm_f32_split_check.py --kchunks 1024 \
    --shapes 2304x4096x768,3072x4096x768,768x4096x768,768x12608x3072 > $OUT/f32_few.txt 2>&1
  grep "|" $OUT/f32_few.txt | sed -E 's/ TFLOP\/s//g; s/err max/max/g'
fi
if [ "$PART" = r ]; then
  timeout 40 python3 bench/variance_probe.py --model resnet50 --dtype float32,float16 --rounds 3 \
    --calls 20 2>&1 | grep -v "^device" | cut -c1-140
  timeout $((150 - SECONDS > 10 ? 150 - SECONDS : 10)) python3 bench/bench_models.py \
    --only resnet --vkml-only 2>&1 | grep -E "model"
fi
if [ "$PART" = t ]; then
  source scripts/device_suites.sh
  left=$((585 - SECONDS))
  [ $left -gt 30 ] && timeout $left python3 bench/bench_gemm.py --dtype float16 --no-cpu \
    --shapes 8192x8192x8192 | tail -1
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
