#!/bin/bash
# On the GPU machine, after `STEPS=none bash scripts/device_session_check.sh` has built build-h200
# in this lease: the fp32 GEMM kernel sweep (bench/gemm32_sweep.py) against cuBLAS, TF32 off.
# Table on stdout (and $OUT/gemm32_sweep.txt), CSV in $OUT/gemm32_sweep.csv. SWEEP_ARGS passes
# options (e.g. "--configs tiled,L8a --shapes sq8k,vitf"); the sweep stops starting runs after
# --budget seconds (default 270) so that it ends within the 10-minute call; a config below 0.15
# of cuBLAS on 2 shapes is not run again (the 8x8 cliff), see --drop-below / --drop-after.
set -uo pipefail
export PATH=$PWD/.vktc/usr/bin:$PATH LD_LIBRARY_PATH=$PWD/.vktc/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export VKML_CACHE_DIR=/tmp/vkml-cache PYTHONPATH=$PWD OUT
git log -1 --oneline 2>/dev/null
python3 -c "import torch_vkml" || { echo "torch_vkml does not import: run device_session_check.sh first"; exit 1; }
timeout 420 python3 bench/gemm32_sweep.py ${SWEEP_ARGS:-} 2>&1 | tee $OUT/gemm32_sweep.txt
