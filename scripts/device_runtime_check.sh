#!/bin/bash
# On the GPU machine: build the core with the carried toolchain, list devices, run the runtime
# tests and the runtime benchmark next to PyTorch CUDA's copy bandwidth. Results go to $OUT.
set -uo pipefail
# The machine's default compiler (CXX=/opt/gcc/bin/g++) links libstdc++ statically: a second copy
# in _C.so next to torch's shared one mixes locale facet ids and crashes in iostreams. Use the
# system compiler, which links the shared libstdc++ torch uses.
unset LDFLAGS CXXFLAGS CFLAGS CC CXX
export CC=/usr/bin/gcc CXX=/usr/bin/g++
export PATH=$PWD/.vktc/usr/bin:$PATH LD_LIBRARY_PATH=$PWD/.vktc/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
git rev-parse --short HEAD 2>/dev/null | tee -a $OUT/gpu.txt
cmake -S . -B build-h200 -G Ninja -DCMAKE_BUILD_TYPE=Release -DVKML_VULKAN_INCLUDE_HINT=$PWD/.vktc/usr/include \
  -DVKML_GTEST_SOURCE=$PWD/.vktc/googletest -DVKML_BUILD_PYTHON=${VKML_BUILD_PYTHON:-OFF} \
  -DPython3_EXECUTABLE=$(which python3) > $OUT/configure.log 2>&1 || { tail -20 $OUT/configure.log; exit 1; }
grep "vkml" $OUT/configure.log
cmake --build build-h200 -j16 > $OUT/build.log 2>&1 || { grep -B2 -A10 error $OUT/build.log | head -60; exit 1; }
./build-h200/vkml-info | tee $OUT/vkml-info.txt
VKML_CACHE_DIR=/tmp/vkml-cache ./build-h200/tests/vkml_runtime_tests > $OUT/runtime_tests.log 2>&1; tail -3 $OUT/runtime_tests.log
VKML_CACHE_DIR=/tmp/vkml-cache ./build-h200/tests/vkml_ops_tests > $OUT/ops_tests.log 2>&1; tail -3 $OUT/ops_tests.log
./build-h200/bench/bench_runtime | tee $OUT/bench.txt
python3 bench/cuda_copy_reference.py 1024 | tee -a $OUT/bench.txt
