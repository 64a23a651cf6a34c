#!/bin/bash
# On the GPU machine, for the session after the eighth (two calls, each under 10 minutes):
#   part 1: build; ConvTest on the GPU (it also runs fp32 as bf16 pairs and both B layouts of
#           the cooperative-matrix kernel); test_conv.py with the defaults, with the [k][n] B
#           layout (VKML_CONV_COOPMAT_KROWS=1) and with fp32 on cooperative matrices too; the
#           ResNets with the defaults (the SIMT gather now adds column and tap offsets) and with
#           the cooperative-matrix variants; decides VKML_CONV_COOPMAT_KROWS's default.
#   part 2: fp16 layers per algorithm with the [k][n] layout; the conv layers against CUDA
#           (bench_ops.py, whose gradient rows now time CUDA in a child process).
#   part 3: the experimental VK_NV_cooperative_matrix2 GEMM (VKML_COOPMAT2=1): the GEMM tests
#           with it, then fp16/bf16 torch.mm against cuBLAS at 4096^3 and 8192^3 per tile.
# Usage: bash scripts/device_s9_check.sh 1|1a|1b|2|3 (1a: the checks of part 1, 1b: its timings). Summary to stdout; logs to $OUT.
set -uo pipefail
PART=${1:-1}
source scripts/device_build_env.sh
t0=$SECONDS
if [ "$PART" = 1 ] || [ "$PART" = 1a ]; then
  timeout 150 ./build-h200/tests/vkml_ops_tests --gtest_filter='ConvTest.*' > "$OUT/gtest_conv.log" 2>&1
  echo "gtest ConvTest ($((SECONDS - t0)) s): $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gtest_conv.log" | tr '\n' ' ')"
  grep -B2 -A6 "Failure" "$OUT/gtest_conv.log" | head -30
  for cfg in "" "VKML_CONV_COOPMAT_KROWS=1" "VKML_CONV_COOPMAT=1 VKML_CONV_COOPMAT_KROWS=1"; do
    env $cfg VKML_FALLBACK=error timeout 120 python3 -m pytest -q -p no:cacheprovider --tb=line \
      tests/torch/test_conv.py > "$OUT/pytest_conv.log" 2>&1
    echo "pytest test_conv.py [$cfg] ($((SECONDS - t0)) s): $(tail -1 "$OUT/pytest_conv.log")"
    grep -E "^FAILED|^E  " "$OUT/pytest_conv.log" | cut -c1-300 | head -8
  done
fi
if [ "$PART" = 1 ] || [ "$PART" = 1b ]; then
  for cfg in "" "VKML_CONV_COOPMAT_KROWS=1 VKML_CONV=implicit" \
             "VKML_CONV_COOPMAT=1 VKML_CONV_COOPMAT_KROWS=1"; do
    env $cfg timeout 100 python3 bench/bench_models.py --only resnet --repeat 10 > "$OUT/models.log" 2>&1
    echo "== ResNets [$cfg] ($((SECONDS - t0)) s)"; grep -E "model|first-step" "$OUT/models.log"
  done
fi
if [ "$PART" = 3 ]; then
  export VKML_COOPMAT2=1
  ./build-h200/vkml-info > "$OUT/info.log" 2>&1; echo "vkml-info with VKML_COOPMAT2=1: rc $?"
  timeout 150 ./build-h200/tests/vkml_ops_tests --gtest_filter='*Gemm*' > "$OUT/gtest_gemm.log" 2>&1
  echo "gtest *Gemm* ($((SECONDS - t0)) s): $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gtest_gemm.log" | tr '\n' ' ')"
  grep -B2 -A6 "Failure" "$OUT/gtest_gemm.log" | head -20
  VKML_FALLBACK=error timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=line \
    tests/torch/test_gemm.py tests/torch/test_attention_gemm.py > "$OUT/pytest_gemm.log" 2>&1
  echo "pytest test_gemm.py test_attention_gemm.py ($((SECONDS - t0)) s): $(tail -1 "$OUT/pytest_gemm.log")"
  grep -E "^FAILED|^E  " "$OUT/pytest_gemm.log" | cut -c1-300 | head -8
  VKML_COOPMAT2=0 timeout 60 python3 bench/bench_gemm.py --dtype float16 --no-cpu \
    --shapes 4096x4096x4096,8192x8192x8192 2>&1 | grep -E "^ *[0-9]" | sed "s/^/[coopmat1] /"
  for tile in "" 256x128x128x64 256x256x128x64; do
    for dt in float16 bfloat16; do
      VKML_GEMM_CM2_TILE=$tile timeout 60 python3 bench/bench_gemm.py --dtype $dt --no-cpu \
        --shapes 4096x4096x4096,8192x8192x8192 2>&1 | grep -E "^ *[0-9]" | sed "s/^/[$tile] /"
    done
  done
fi
if [ "$PART" = 2 ]; then
  VKML_CONV_COOPMAT_KROWS=1 timeout 150 python3 bench/bench_conv_algos.py --dtype float16 \
    > "$OUT/conv_algos.log" 2>&1
  echo "== fp16 layers, [k][n] layout ($((SECONDS - t0)) s)"; tail -27 "$OUT/conv_algos.log"
  timeout 250 python3 bench/bench_ops.py --only conv --json "$OUT/bench_conv.json" > "$OUT/bench_conv.log" 2>&1
  echo "== conv layers against CUDA ($((SECONDS - t0)) s)"; grep -E "conv " "$OUT/bench_conv.log" | head -40
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
