#!/bin/bash
# On the GPU machine: build the extension and show where `import torch_vkml` + device use crashes.
set -uo pipefail
# The machine's default compiler (CXX=/opt/gcc/bin/g++) links libstdc++ statically: a second copy
# in _C.so next to torch's shared one mixes locale facet ids and crashes in iostreams. Use the
# system compiler, which links the shared libstdc++ torch uses.
unset LDFLAGS CXXFLAGS CFLAGS CC CXX
export CC=/usr/bin/gcc CXX=/usr/bin/g++
export PATH=$PWD/.vktc/usr/bin:$PATH LD_LIBRARY_PATH=$PWD/.vktc/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/out}
cmake -S . -B build-h200 -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVKML_VULKAN_INCLUDE_HINT=$PWD/.vktc/usr/include \
  -DVKML_GTEST_SOURCE=$PWD/.vktc/googletest -DVKML_BUILD_PYTHON=ON -DVKML_BUILD_BENCH=ON -DVKML_BUILD_TESTS=OFF \
  -DPython3_EXECUTABLE=$(which python3) > $OUT/configure.log 2>&1 || { tail -20 $OUT/configure.log; exit 1; }
timeout 400 cmake --build build-h200 -j16 > $OUT/build.log 2>&1 || { grep -B2 -A12 -m3 "error" $OUT/build.log; exit 1; }
cat > /tmp/t.py <<'PY'
import torch, torch_vkml
print("count", torch_vkml.device_count(), flush=True)
print(torch_vkml._C.device_properties(0)["name"], flush=True)
x = torch.randn(4, 4).to("vkml"); print((x @ x).cpu().sum(), flush=True)
PY
PYTHONPATH=. python3 /tmp/t.py 2>&1 | tail -5
PYTHONPATH=. timeout 200 cuda-gdb -batch -ex run -ex bt --args python3 /tmp/t.py 2>&1 | grep -E "^#|signal" | head -40
NV=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib
for lib in $NV/libnvrtc.so.13 /opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so; do
  echo "preload $lib:"; LD_PRELOAD=$lib timeout 60 ./build-h200/bench/bench_runtime --quick 2>&1 | tail -2
done
