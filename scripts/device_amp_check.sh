#!/bin/bash
# On the GPU machine: build against its torch (2.11, CUDA wheel), then run the amp and optim
# GoogleTest suites and pytest files on the NVIDIA Vulkan driver. Logs go to $OUT.
set -uo pipefail
# The system compiler links the shared libstdc++ torch uses (see device_debug_python.sh).
unset LDFLAGS CXXFLAGS CFLAGS CC CXX
export CC=/usr/bin/gcc CXX=/usr/bin/g++
export PATH=$PWD/.vktc/usr/bin:$PATH LD_LIBRARY_PATH=$PWD/.vktc/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/out}
python3 -c "import torch; print('torch', torch.__version__)" | tee $OUT/versions.txt
cmake -S . -B build-h200 -G Ninja -DCMAKE_BUILD_TYPE=Release -DVKML_VULKAN_INCLUDE_HINT=$PWD/.vktc/usr/include \
  -DVKML_GTEST_SOURCE=$PWD/.vktc/googletest -DVKML_BUILD_PYTHON=ON -DVKML_BUILD_TESTS=ON \
  -DPython3_EXECUTABLE=$(which python3) > $OUT/configure.log 2>&1 || { tail -20 $OUT/configure.log; exit 1; }
cmake --build build-h200 -j16 > $OUT/build.log 2>&1 || { grep -B2 -A12 -m5 "error" $OUT/build.log; exit 1; }
echo "build ok"
VKML_CACHE_DIR=/tmp/vkml-cache ./build-h200/tests/vkml_ops_tests --gtest_filter="${GTEST_FILTER:-Amp*:Optim*}" \
  > $OUT/ops_tests.log 2>&1; tail -3 $OUT/ops_tests.log; grep -A8 "Failure" $OUT/ops_tests.log | head -40
python3 -m pytest --version > /dev/null 2>&1 || pip install -q pytest > /dev/null 2>&1
PYTHONPATH=. VKML_FALLBACK=error VKML_CACHE_DIR=/tmp/vkml-cache timeout 300 python3 -m pytest -q -x \
  -p no:cacheprovider ${PYTEST_FILES:-tests/torch/test_amp.py tests/torch/test_optim.py} > $OUT/pytest.log 2>&1
tail -15 $OUT/pytest.log
