#!/bin/bash
# On the GPU machine: build vkml with the carried toolchain, run the attention suites (the
# cooperative-matrix forward included: AttentionTest.CoopMatForward forces it), run the torch
# tests (fp16/bf16 forwards pick the coopmat kernel by default), then time SDPA on vkml (coopmat and portable) against
# CUDA. Logs go to $OUT. Carry .vktc/usr, .vktc/etc, .vktc/googletest.
set -uo pipefail
unset LDFLAGS CXXFLAGS CFLAGS CC CXX  # see device_gemm_check.sh: use the shared libstdc++
export CC=/usr/bin/gcc CXX=/usr/bin/g++
export PATH=$PWD/.vktc/usr/bin:$PATH LD_LIBRARY_PATH=$PWD/.vktc/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
git log -1 --oneline 2>/dev/null
cmake -S . -B build-h200 -G Ninja -DCMAKE_BUILD_TYPE=Release -DVKML_VULKAN_INCLUDE_HINT=$PWD/.vktc/usr/include \
  -DVKML_GTEST_SOURCE=$PWD/.vktc/googletest -DVKML_BUILD_PYTHON=ON -DVKML_BUILD_BENCH=OFF \
  -DPython3_EXECUTABLE=$(which python3) > $OUT/configure.log 2>&1 || { tail -20 $OUT/configure.log; exit 1; }
grep "attention" $OUT/configure.log
timeout 400 cmake --build build-h200 -j16 > $OUT/build.log 2>&1 || { grep -B2 -A12 -m3 "error" $OUT/build.log; exit 1; }
export VKML_CACHE_DIR=/tmp/vkml-cache
timeout 120 ./build-h200/tests/vkml_ops_tests --gtest_filter='Attention*' > $OUT/ops_tests.log 2>&1
grep -E "FAILED|Failure|PASSED|SKIPPED|Expected|Which is|actual" $OUT/ops_tests.log | head -40
if python3 -c "import pytest" 2>/dev/null; then
  PYTHONPATH=. VKML_FALLBACK=error timeout 200 python3 -m pytest -q tests/torch/test_attention.py \
    -p no:cacheprovider > $OUT/pytest.log 2>&1
  tail -5 $OUT/pytest.log  # fp16/bf16 forwards take the coopmat kernel by default there
fi
for coop in 1 0; do
  for dt in float16 bfloat16; do
    VKML_SDPA_COOPMAT=$coop PYTHONPATH=. timeout 100 python3 bench/bench_attention.py --dtype $dt \
      2>&1 | tee -a $OUT/bench.txt
  done
done
PYTHONPATH=. timeout 100 python3 bench/bench_attention.py --dtype bfloat16 --backward --causal \
  2>&1 | tee -a $OUT/bench.txt
