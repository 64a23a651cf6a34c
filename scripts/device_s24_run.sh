#!/bin/bash
# On the GPU machine, the twenty-fourth session (each part under 10 minutes; carry .vktc, .devpy
# and .fmnist):
#   part b: SDPA forward + backward at ViT's and GPT-2's shapes (q, k, v as views of one qkv
#           projection): CUDA, vkml by default with its kernels by shape, the fused kernels,
#           and the attention GEMMs under other SIMT tiles.
#   part c: the score scratch's rows padded to 8 elements: the attention probe again with its
#           kernels by shape; the attention GEMMs' work as one tall product (all batches' rows
#           stacked) beside cuBLAS, at K = 64 and N = 197 / 200 / 256; ViT and GPT-2 beside CUDA.
#   part d: the final tree (SIMT stores into unaligned C from one address per 4 outputs; the
#           attention rows passes' rules read once): short-K products beside cuBLAS, the
#           attention probe, the five models beside CUDA, then the correctness suites (pytest -n 8,
#           gtests beside it) in the time left.
#   part e: after reverting the rows passes' hoisted rules: the attention probe, ViT and GPT-2
#           beside CUDA.
#   part a: kernels by op shape (VKML_PROFILE=2) for the five models beside CUDA's kernel tables;
#           GPT-2's SIMT-bound product shapes three ways (cuBLAS, SIMT, fp32 split); GPT-2 and ViT
#           timed (vkml only) by default and with few-block products through the split.
# Usage: bash scripts/device_s24_run.sh a|b|c|d|e (END=seconds bounds the end). Summary to stdout; logs to $OUT.
set -uo pipefail
PART=${1:-a}
source scripts/device_build_env.sh
export PYTHONPATH=$PWD:$PWD/.devpy
t0=$SECONDS
END=${END:-585}
# GPT-2-small's products that run on the SIMT kernel (MxKxN; t: x @ W.T): 4096x768 outputs and
# weight gradients over 4096 tokens.
GPT2_SHAPES=4096x768x768t,4096x3072x768t,4096x2304x768,4096x3072x768,768x4096x2304,768x4096x768,3072x4096x768,768x4096x3072

if [ "$PART" = a ]; then
  VKML_PROFILE=2 timeout 200 python3 bench/bench_models.py --profile 45 > $OUT/profile_shapes.txt 2>&1
  grep -E "^==|all kernels" $OUT/profile_shapes.txt
  timeout 120 python3 bench/gemm_f32_split_check.py --shapes $GPT2_SHAPES > $OUT/gpt2_shapes.txt 2>&1
  grep -E "TFLOP|Error|x" $OUT/gpt2_shapes.txt | cut -c1-200 | head -20
  for mb in default 150 90; do
    left=$((END - SECONDS)); [ $left -lt 40 ] && break
    if [ $mb = default ]; then unset VKML_GEMM_F32_SPLIT_MIN_BLOCKS; else export VKML_GEMM_F32_SPLIT_MIN_BLOCKS=$mb; fi
    timeout $left python3 bench/bench_models.py --only gpt2,vit --vkml-only --no-diagnose \
      > $OUT/models_minblocks_$mb.txt 2>&1
    grep -E "model |Error" $OUT/models_minblocks_$mb.txt | sed "s/^/min_blocks=$mb /" | cut -c1-200
  done
  unset VKML_GEMM_F32_SPLIT_MIN_BLOCKS
fi
if [ "$PART" = b ]; then
  timeout 60 python3 bench/attention_probe.py --device cuda 2>&1 | tee $OUT/attn_cuda.txt
  VKML_PROFILE=2 timeout 60 python3 bench/attention_probe.py --profile 16 > $OUT/attn_vkml.txt 2>&1
  cut -c1-200 $OUT/attn_vkml.txt
  VKML_ATTENTION=fused PROBE_LABEL="fused " timeout 60 python3 bench/attention_probe.py 2>&1 \
    | tee $OUT/attn_fused.txt
  for tile in 64x64x32x32x32x8x4 64x128x16x64x32x8x8 64x64x16x32x32x8x4 32x64x32x32x32x4x8; do
    left=$((END - SECONDS)); [ $left -lt 30 ] && break
    VKML_GEMM_SIMT_TILE=$tile VKML_PROFILE=2 PROBE_LABEL="$tile " timeout $left \
      python3 bench/attention_probe.py --profile 12 > $OUT/attn_tile_$tile.txt 2>&1
    grep -E "simt|fwd\+bwd|Error" $OUT/attn_tile_$tile.txt | cut -c1-200
  done
fi
if [ "$PART" = c ]; then
  VKML_PROFILE=2 timeout 90 python3 bench/attention_probe.py --profile 12 > $OUT/attn_vkml_c.txt 2>&1
  cut -c1-200 $OUT/attn_vkml_c.txt
  timeout 100 python3 bench/bench_gemm.py --no-cpu \
    --shapes 151296x64x197,151296x64x200,151296x64x256,151296x128x197,151296x197x64,151296x200x64 \
    > $OUT/gemm_short_k.txt 2>&1
  cut -c1-200 $OUT/gemm_short_k.txt
  left=$((END - SECONDS - 10))
  timeout $left python3 bench/bench_models.py --only vit,gpt2 --json $OUT/models_c.json \
    > $OUT/models_c.txt 2>&1
  grep -E "model |loss|fallbacks|Error|submits|^gemm|^attention|^kernel" $OUT/models_c.txt | cut -c1-200
fi
if [ "$PART" = d ]; then
  timeout 60 python3 bench/bench_gemm.py --no-cpu \
    --shapes 151296x64x197,151296x64x200,151296x128x197,151296x197x64,4096x768x1001 \
    > $OUT/gemm_short_k_d.txt 2>&1
  cut -c1-200 $OUT/gemm_short_k_d.txt
  VKML_PROFILE=2 timeout 60 python3 bench/attention_probe.py --profile 10 > $OUT/attn_vkml_d.txt 2>&1
  cut -c1-200 $OUT/attn_vkml_d.txt
  timeout 240 python3 bench/bench_models.py --json $OUT/models_d.json > $OUT/models_d.txt 2>&1
  grep -E "model |loss|fallbacks|Error|submits|^gemm|^conv|^attention|^kernel" $OUT/models_d.txt | cut -c1-200
  # Call 5 ran an inline copy of this with its bounds taken from END (375 s left for it).
  source scripts/device_suites.sh
fi
if [ "$PART" = e ]; then
  VKML_PROFILE=2 timeout 50 python3 bench/attention_probe.py --profile 10 > $OUT/attn_vkml_e.txt 2>&1
  grep -E "fwd\+bwd|rows|gemm_simtn.*197x197" $OUT/attn_vkml_e.txt | cut -c1-200
  left=$((END - SECONDS - 5))
  timeout $left python3 bench/bench_models.py --only vit,gpt2 --json $OUT/models_e.json \
    > $OUT/models_e.txt 2>&1
  grep -E "model |loss|fallbacks|Error|^attention" $OUT/models_e.txt | cut -c1-200
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
