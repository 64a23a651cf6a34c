#!/bin/bash
# On the GPU machine, the seventeenth session (each part under 10 minutes; carry .vktc, .devpy and
# .fmnist):
#   part e: the GEMM tests (the tensor-core epilogue adds alpha, beta * C_in and bias 8 outputs
#           at a time; the split takes addmm and linear epilogues in its last pass), fp16 8192^3
#           as a check of the GPU's state, then the fp32 split GEMM with its main product in K
#           slices of 0 (all), 256 and 1024 at square and model shapes, its kernels timed alone
#           (bench/gemm_f32_split_check.py).
#   part f: the split with its coalescing split and scaling passes, now on by default for large
#           fp32 products on NVIDIA (slices of 1024): the check at 8192^3, 4096^3 and a narrow
#           row-major B, fp32 8192^3 through bench_gemm, then the suites (device_suites.sh), then
#           ViT-B/16 and GPT-2 training beside CUDA in the time left.
#   part t: the suites (device_suites.sh), then the five models beside CUDA with nvidia-smi.
#   part g: the split against the SIMT kernel on GPT-2's and ViT's few-block weight-gradient
#           shapes (is the 512-block rule right?), then the five models beside CUDA.
# Usage: bash scripts/device_s17_run.sh e|f|t|g. Summary to stdout; logs to $OUT.
set -uo pipefail
PART=${1:-e}
source scripts/device_build_env.sh
export PYTHONPATH=$PWD:$PWD/.devpy
t0=$SECONDS
timeout 40 python3 bench/bench_gemm.py --dtype float16 --no-cpu --shapes 8192x8192x8192 | tail -1
if [ "$PART" = e ]; then
  VKML_FALLBACK=error timeout 90 python3 -m pytest -q -p no:cacheprovider -x \
    tests/torch/test_gemm.py tests/torch/test_gemm_f32_split.py 2>&1 | tail -3
  timeout $((420 - SECONDS)) python3 bench/gemm_f32_split_check.py --kchunks 0,256,1024 \
    --profile --json $OUT/f32_split.json \
    --shapes 8192x8192x8192,4096x4096x4096,12608x3072x768t,12608x768x2304t,4096x3072x768t \
    > $OUT/f32_split.txt 2>&1
  grep -A9 "^8192x8192x8192 split" $OUT/f32_split.txt | head -40
  grep "|" $OUT/f32_split.txt | sed -E 's/ TFLOP\/s//g; s/err max/max/g'
fi
if [ "$PART" = f ]; then
  timeout 150 python3 bench/gemm_f32_split_check.py --kchunks 0,1024 --profile \
    --shapes 8192x8192x8192,4096x4096x4096,12608x3072x768 > $OUT/f32_split.txt 2>&1
  grep -A5 "split" $OUT/f32_split.txt | grep -E "split[0-9]+:|gemm_|all kernels" | head -24
  grep "|" $OUT/f32_split.txt | sed -E 's/ TFLOP\/s//g; s/err max/max/g'
  timeout 60 python3 bench/bench_gemm.py --dtype float32 --no-cpu --shapes 8192x8192x8192 | tail -2
  source scripts/device_suites.sh
  left=$((570 - SECONDS))
  [ $left -gt 60 ] && timeout $left python3 bench/bench_models.py --only vit,gpt2 \
    --json $OUT/models.json 2>&1 | grep -E "model|loss|fallbacks|vit|gpt"
fi
if [ "$PART" = g ]; then
  timeout 200 python3 bench/gemm_f32_split_check.py --kchunks 1024 \
    --shapes 2304x4096x768,3072x4096x768,768x4096x3072,768x12608x3072,4096x768x3072,4096x3072x768 \
    > $OUT/f32_split_grad.txt 2>&1
  grep "|" $OUT/f32_split_grad.txt | sed -E 's/ TFLOP\/s//g; s/err max/max/g'
  source scripts/device_models_smi.sh
fi
if [ "$PART" = t ]; then
  source scripts/device_suites.sh
  source scripts/device_models_smi.sh
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
