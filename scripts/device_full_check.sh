#!/bin/bash
# On the GPU machine, in one lease: build with the carried toolchain, list devices, run the C++ and
# pytest suites on the GPU, the runtime and GEMM benchmarks next to PyTorch CUDA, and the training
# demo on full Fashion-MNIST (the dataset is carried in .vktc/datasets). Logs go to $OUT.
set -uo pipefail
# The machine's default compiler (/opt/gcc) links libstdc++ statically; use the system one.
unset LDFLAGS CXXFLAGS CFLAGS CC CXX
export CC=/usr/bin/gcc CXX=/usr/bin/g++
export PATH=$PWD/.vktc/usr/bin:$PATH LD_LIBRARY_PATH=$PWD/.vktc/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export VKML_CACHE_DIR=/tmp/vkml-cache PYTHONPATH=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/summary.txt
cmake -S . -B build-h200 -G Ninja -DCMAKE_BUILD_TYPE=Release -DVKML_VULKAN_INCLUDE_HINT=$PWD/.vktc/usr/include \
  -DVKML_GTEST_SOURCE=$PWD/.vktc/googletest -DPython3_EXECUTABLE=$(which python3) > $OUT/build.log 2>&1 \
  && timeout 400 cmake --build build-h200 -j16 >> $OUT/build.log 2>&1 || { grep -m3 -A12 error $OUT/build.log; exit 1; }
./build-h200/vkml-info | head -4
for t in runtime ops; do timeout 300 ./build-h200/tests/vkml_${t}_tests > $OUT/gtest_$t.log 2>&1; \
  echo "gtest $t: $(grep -E '^\[  (PASSED|FAILED)' $OUT/gtest_$t.log | tr '\n' ' ')" | tee -a $OUT/summary.txt; done
grep "^\[  FAILED  \]" $OUT/gtest_*.log | head
./build-h200/bench/bench_runtime | tee -a $OUT/summary.txt
python3 bench/cuda_copy_reference.py 1024 | tee -a $OUT/summary.txt
for dt in float32 float16; do timeout 120 python3 bench/bench_gemm.py --dtype $dt --no-cpu \
  --shapes 4096x4096x4096,8192x8192x8192 2>&1 | tee -a $OUT/summary.txt; done
VKML_FALLBACK=error timeout 420 python3 -m pytest -q -p no:cacheprovider tests/torch \
  --ignore=tests/torch/test_opinfo.py > $OUT/pytest.log 2>&1
echo "pytest: $(tail -1 $OUT/pytest.log)" | tee -a $OUT/summary.txt
grep -E "^FAILED" $OUT/pytest.log | head -20
VKML_FASHION_MNIST=$PWD/.vktc/datasets/fashion-mnist timeout 400 python3 examples/demo.py --full \
  --epochs 2 --plot $OUT/demo_loss.png > $OUT/demo.log 2>&1
tail -22 $OUT/demo.log | tee -a $OUT/summary.txt
