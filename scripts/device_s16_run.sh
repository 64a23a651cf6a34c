#!/bin/bash
# On the GPU machine, the sixteenth session (each part under 10 minutes; carry .vktc, .devpy and
# .fmnist):
#   part m: the five model benchmarks beside CUDA with nvidia-smi sampling clocks and throttle
#           reasons (the intermittent slow ResNet-50 fp16 state), then fp32 SIMT GEMM tiles with
#           the driver's register counts (VKML_PIPELINE_STATS): 128x128 tiles of 256 threads and
#           512-thread tiles, whose workgroup size caps registers at 128 (twice the warps per SM).
#   part v: bench/variance_probe.py (the same layer's wall, GPU and batched times, allocations and
#           submissions per round) with the default algorithms, with Winograd off and with a polled wait, then the
#           SM clock and power under vkml's GEMM and cuBLAS (bench/gemm_clock_probe.py), then the
#           fp32 tile sweep of part m on two shapes.
#   part t is device_s15_run.sh t (the suites and the fp16 layers under the new default).
#   part w: whether round 0's slowness follows new pipelines or any idle spell (the probe with an
#           empty pipeline cache, again with it filled, then with 2 s idle before each round),
#           then the models of part m (timed after a warm-up of at least 1 s) without the sweep,
#           then the fp16 layers default (Winograd gradients) against implicit, warmed up alike.
#   part r: the first second after an idle spell, vkml against CUDA (bench/idle_ramp_probe.py).
#   part s: fp32 products split into fp16 tensor-core GEMMs (VKML_GEMM_F32_SPLIT): its tests, then
#           speed and error against cuBLAS and the SIMT kernel (bench/gemm_f32_split_check.py),
#           (part r apart).
#   part a: the split at 8192^3 with its main product in K slices of 8192, 2048 and 512
#           (VKML_GEMM_F32_SPLIT_KCHUNK): does its error fall to cuBLAS's with shorter chains?
# Usage: bash scripts/device_s16_run.sh m|v|w|r|s|a. Summary to stdout; logs to $OUT.
set -uo pipefail
PART=${1:-m}
source scripts/device_build_env.sh
export PYTHONPATH=$PWD:$PWD/.devpy
t0=$SECONDS
[ "$PART" != r ] && [ "$PART" != s ] && [ "$PART" != a ] &&
  timeout 40 python3 bench/bench_gemm.py --dtype float16 --no-cpu --shapes 8192x8192x8192 | tail -1
if [ "$PART" = s ]; then
  VKML_FALLBACK=error timeout 40 python3 -m pytest -q -p no:cacheprovider \
    tests/torch/test_gemm_f32_split.py 2>&1 | tail -3
  timeout $((500 - SECONDS)) python3 bench/gemm_f32_split_check.py --json $OUT/f32_split.json \
    --shapes 8192x8192x8192,12608x3072x768,4096x3072x768 2>&1 | tee $OUT/f32_split.txt
fi
if [ "$PART" = a ]; then  # the split's accuracy against the length of its accumulation chains
  for chunk in 0 2048 512; do
    VKML_GEMM_F32_SPLIT_KCHUNK=$chunk timeout 120 python3 bench/gemm_f32_split_check.py \
      --shapes 8192x8192x8192 2>&1 | sed "s/^/[kchunk $chunk] /"
  done
fi
if [ "$PART" = r ]; then
  for idle in 2 0.5; do
    timeout $((590 - SECONDS)) python3 bench/idle_ramp_probe.py --idle $idle 2>&1 | tee -a $OUT/ramp.txt
  done
fi
S=VKML_GEMM_SIMT_TILE
configs="cm1:;cm1-128x128w32x64:$S=128x128x16x32x64x8x8;cm1-128x128w64x32:$S=128x128x16x64x32x8x8"
configs+=";cm1-128x128k8:$S=128x128x8x32x64x8x8;cm1-512t-128x128:$S=128x128x16x32x32x8x4"
configs+=";cm1-256t-128x64:$S=128x64x16x32x32x8x4;cm1-256t-64x128:$S=64x128x16x32x32x4x8"
f32_sweep() {  # shapes
  VKML_PIPELINE_STATS=1 timeout $((585 - SECONDS)) python3 bench/gemm_cm2_sweep.py --dtypes float32 \
    --shapes "$1" --configs "$configs" --json $OUT/gemm_sweep_f32.json > $OUT/gemm_sweep_f32.txt 2>&1
  grep -v "pipeline stats" $OUT/gemm_sweep_f32.txt | grep -v "^ *$"
  grep "pipeline stats: gemm_simt" $OUT/gemm_sweep_f32.txt | sort -u |
    sed -E 's/vkml pipeline stats: //; s/; (Binary Size|Local Memory Size)=[0-9]+//g'
}
if [ "$PART" = v ]; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv -lms 250 > $OUT/smi.csv 2>&1 &
  smi=$!
  timeout 120 python3 bench/variance_probe.py --rounds 8 --calls 30 2>&1 | tee $OUT/variance.txt
  VKML_CONV_WINOGRAD=0 timeout 120 python3 bench/variance_probe.py --rounds 4 --calls 30 2>&1 |
    tee -a $OUT/variance.txt
  VKML_SYNC_SPIN_US=5000 timeout 120 python3 bench/variance_probe.py --rounds 4 --calls 30 2>&1 |
    tee -a $OUT/variance.txt
  kill $smi
  timeout 60 python3 bench/gemm_clock_probe.py --seconds 4 2>&1 | tee $OUT/clock.txt
  f32_sweep 8192x8192x8192,12608x3072x768
elif [ "$PART" = w ]; then
  # Round 0's slowness: new pipelines (an empty cache), or any idle spell (a warm cache, then idle)?
  probe() { timeout 60 python3 bench/variance_probe.py --rounds 3 --calls 10 "$@" 2>&1 |
    tee -a $OUT/variance.txt | grep -E "device|round 0|round 1"; }
  VKML_CACHE_DIR=/tmp/cold-cache probe
  VKML_CACHE_DIR=/tmp/cold-cache probe
  VKML_CACHE_DIR=/tmp/cold-cache probe --idle 2
fi
if [ "$PART" = m ] || [ "$PART" = w ]; then
  source scripts/device_models_smi.sh
  [ "$PART" = m ] && f32_sweep 8192x8192x8192,12608x3072x768,262144x576x64
  [ "$PART" = w ] && timeout $((585 - SECONDS)) python3 bench/bench_conv_algos.py --dtype float16 \
    --algos default,implicit --passes fwd+bwd --json $OUT/conv_algos_f16_default.json 2>&1 |
    grep -E "k3s1|layer"
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
