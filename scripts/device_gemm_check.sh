#!/bin/bash
# On the GPU machine: build vkml (core, tests, torch extension) with the carried toolchain, run the
# gemm and conv suites (cooperative-matrix variants included where the device has them), then
# time torch.mm on vkml against CUDA. Logs go to $OUT. Carry .vktc/usr, .vktc/etc, .vktc/googletest.
set -uo pipefail
# The machine's default compiler (CXX=/opt/gcc/bin/g++) links libstdc++ statically: a second copy
# in _C.so next to torch's shared one mixes locale facet ids and crashes in iostreams. Use the
# system compiler, which links the shared libstdc++ torch uses.
unset LDFLAGS CXXFLAGS CFLAGS CC CXX
export CC=/usr/bin/gcc CXX=/usr/bin/g++
export PATH=$PWD/.vktc/usr/bin:$PATH LD_LIBRARY_PATH=$PWD/.vktc/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git log -1 --oneline 2>/dev/null
cmake -S . -B build-h200 -G Ninja -DCMAKE_BUILD_TYPE=Release -DVKML_VULKAN_INCLUDE_HINT=$PWD/.vktc/usr/include \
  -DVKML_GTEST_SOURCE=$PWD/.vktc/googletest -DVKML_BUILD_PYTHON=ON -DVKML_BUILD_BENCH=OFF \
  -DPython3_EXECUTABLE=$(which python3) > $OUT/configure.log 2>&1 || { tail -20 $OUT/configure.log; exit 1; }
grep "vkml" $OUT/configure.log | grep -v "skipping copy"
timeout 400 cmake --build build-h200 -j16 > $OUT/build.log 2>&1 || { grep -B2 -A12 -m3 "error" $OUT/build.log; exit 1; }
./build-h200/vkml-info | head -30
export VKML_CACHE_DIR=/tmp/vkml-cache
timeout 120 ./build-h200/tests/vkml_ops_tests --gtest_filter='Gemm*:Conv*' > $OUT/ops_tests.log 2>&1
grep -E "FAILED|Failure|PASSED|Expected|Which is|actual" $OUT/ops_tests.log | head -40
if python3 -c "import pytest" 2>/dev/null; then
  PYTHONPATH=. VKML_FALLBACK=error timeout 200 python3 -m pytest -q -x tests/torch/test_gemm.py \
    tests/torch/test_conv.py -p no:cacheprovider > $OUT/pytest.log 2>&1
  tail -15 $OUT/pytest.log
fi
for dt in float32 float16 bfloat16; do
  PYTHONPATH=. timeout 120 python3 bench/bench_gemm.py --dtype $dt --no-cpu \
    --shapes 1024x1024x1024,4096x4096x4096,8192x8192x8192,64x4096x4096t,4096x4096x1 2>&1 | tee -a $OUT/bench.txt
done
# Tile tuning of the vectorised cooperative-matrix kernel, and the general kernel for comparison.
for tile in ${GEMM_TILES:-128x128x4x4x4 128x64x4x4x2 64x64x4x2x2}; do
  echo "tile $tile" | tee -a $OUT/bench.txt
  VKML_GEMM_COOPMAT_TILE=$tile PYTHONPATH=. timeout 60 python3 bench/bench_gemm.py --dtype float16 \
    --no-cpu --shapes ${GEMM_TUNE_SHAPES:-8192x8192x8192} 2>&1 | tail -n +3 | tee -a $OUT/bench.txt
done
echo "general coopmat kernel" | tee -a $OUT/bench.txt
VKML_GEMM_COOPMAT_VEC=0 PYTHONPATH=. timeout 60 python3 bench/bench_gemm.py --dtype float16 --no-cpu \
  --shapes 8192x8192x8192 2>&1 | tail -2 | tee -a $OUT/bench.txt
