#!/bin/bash
# On the GPU machine, the thirteenth session (each part under 10 minutes; carry .vktc and .devpy):
#   part a: the GPU's state, then which part of the GEMM K loop bounds its rate
#           (bench/gemm_probe.py: VKML_GEMM_PROBE 0-3, fp16/bf16/fp32 at 8192^3) with the
#           registers of each probe's pipeline; ResNet-50 fp16 inference run eight times with
#           nvidia-smi sampling clocks, power and throttle reasons every 200 ms (the intermittent
#           slow state); ResNet-18 training's most expensive kernels.
#   part k: fp32 GEMM and ResNet-18 with A's 4x4-block loads off and on, the fp32 probes, then
#           part t.
#   part s: (next session) fp32 tiles with a 32-deep K step against the default, GEMM shapes and
#           ResNet-18 / ResNet-50 fp32.
#   part t: the correctness suites (gtests beside pytest without OpInfo, 8 workers).
#   part m: the weight gradient's workgroup target swept on ResNet-18 (VKML_CONV_WGRAD_BLOCKS),
#           then with the best: fp32/bf16 GEMM at 8192^3 and the five model benchmarks (JSON to
#           $OUT/models.json).
# Usage: bash scripts/device_s13_run.sh a|t|m. Summary to stdout; logs to $OUT.
set -uo pipefail
PART=${1:-a}
source scripts/device_build_env.sh
export PYTHONPATH=$PWD:$PWD/.devpy
state() { timeout 40 python3 bench/bench_gemm.py --dtype float16 --no-cpu --shapes 8192x8192x8192 | tail -1; }
smi_fields=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active
nvidia-smi --query-gpu=$smi_fields --format=csv -lms 200 > $OUT/smi.csv 2>&1 &
smi=$!
t0=$SECONDS
state
if [ "$PART" = a ]; then
  timeout 200 python3 bench/gemm_probe.py --size 8192 2>&1 | tee $OUT/gemm_probe.txt
  for probe in 0 1 2; do
    VKML_PIPELINE_STATS=1 VKML_GEMM_PROBE=$probe timeout 60 python3 bench/gemm_probe.py --child \
      --size 1024 2>&1 | grep -E "pipeline stats: gemm_(coopmatv|simtn)" | cut -c1-220 |
      sed "s/^/[probe $probe] /"
  done
  for i in 1 2 3 4 5 6 7 8; do
    echo "$(date +%T.%N | cut -c1-12) run $i start" >> $OUT/r50_runs.txt
    timeout 60 python3 bench/bench_models.py --only resnet50_infer_b64_float16 --repeat 20 2>&1 |
      grep -E "^ +model" | sed "s/^/[r50 $i $(date +%T)] /" | tee -a $OUT/r50_runs.txt
  done
  timeout 90 python3 bench/bench_models.py --only resnet18 --profile 14 > $OUT/profile_r18.txt 2>&1
  head -18 $OUT/profile_r18.txt
elif [ "$PART" = k ]; then
  # A's 4x4-block loads (VKML_GEMM_SIMT_KVEC) off and on: fp32 GEMM shapes, probes, ResNet-18.
  shapes=8192x8192x8192,4096x4096x4096,262144x576x64,12608x768x2304t,12608x3072x768t,4096x3072x768t
  for kv in 0 1 0 1; do
    VKML_GEMM_SIMT_KVEC=$kv timeout 60 python3 bench/bench_gemm.py --dtype float32 --no-cpu \
      --shapes $shapes 2>&1 | grep -E "^ +[0-9]" | sed "s/^/[kvec $kv] /"
  done | tee $OUT/kvec_gemm.txt
  timeout 100 python3 bench/gemm_probe.py --size 8192 --dtypes float32 2>&1 | tee $OUT/gemm_probe_kvec.txt
  for kv in 0 1; do
    VKML_GEMM_SIMT_KVEC=$kv timeout 100 python3 bench/bench_models.py --only resnet18 2>&1 |
      grep -E "^ +model" | sed "s/^/[kvec $kv] /"
  done
  PART=t
fi
if [ "$PART" = s ]; then
  # Not run in session 13 (device time spent): the 32-deep K step the unpadded block rows allow,
  # against the default 128x64x16, on the fp32 shapes, and B in 4x4 blocks (`ab`) for x @ W^T
  # (nt shapes). A tile that does not fit a shape's layout falls back to the default.
  timeout $((570 - SECONDS)) python3 bench/gemm32_sweep.py --budget $((520 - SECONDS)) \
    --configs nM16,nM32,nN32,nN16ab,nN32ab --shapes sq8k,sq4knn,vit1d,vit1f,vit4f,rn1,g-fc2,g-head,rnW 2>&1 |
    tee $OUT/gemm32_sweep.txt | tail -12
  for tile in 128x64x16x32x64x8x8 128x64x32x32x64x8x8; do
    VKML_GEMM_SIMT_TILE=$tile timeout 100 python3 bench/bench_models.py --only resnet18,resnet50_infer_b64_float32 \
      --vkml-only 2>&1 | grep -E "^ +model" | sed "s/^/[tile $tile] /"
  done
fi
if [ "$PART" = t ]; then
  source scripts/device_suites.sh
elif [ "$PART" = m ]; then
  # The weight gradient's workgroup target (split-K) swept on ResNet-18; the best one is kept
  # for the model runs below.
  best=256; best_ms=1e9
  for wb in 256 512 1024 2048; do
    ms=$(VKML_CONV_WGRAD_BLOCKS=$wb timeout 60 python3 bench/bench_models.py --only resnet18 \
      --vkml-only 2>&1 | awk '/^ +model/ { print $3 }')
    echo "[wgrad blocks $wb] resnet18 ${ms:-err} ms"
    if [ -n "$ms" ] && awk "BEGIN { exit !($ms < $best_ms) }"; then best=$wb; best_ms=$ms; fi
  done
  export VKML_CONV_WGRAD_BLOCKS=$best
  echo "models with VKML_CONV_WGRAD_BLOCKS=$best"
  timeout 40 python3 bench/bench_gemm.py --dtype float16 --no-cpu --shapes 4096x4096x4096 | tail -1
  for dt in float32 bfloat16; do
    timeout 40 python3 bench/bench_gemm.py --dtype $dt --no-cpu --shapes 8192x8192x8192 | tail -1
  done
  timeout $((570 - SECONDS)) python3 bench/bench_models.py --json $OUT/models.json 2>&1 |
    grep -E "model|loss|fallbacks"
fi
kill $smi 2>/dev/null
# Samples whose clocks or throttle reasons stand out (the SM clock column, then the reasons).
awk -F', ' 'NR > 1 { n++; c[$2]++; r[$7]++ } END { for (k in c) print "sm clock", k, c[k];
  for (k in r) print "reasons", k, r[k] }' $OUT/smi.csv | sort | head -20
echo "part $PART: $((SECONDS - t0)) s after the build"
