#!/bin/bash
# On the GPU machine: build with the carried toolchain (.vktc), run the sort family's tests (both
# radix variants: shared-memory ranking and the CPU devices' serial counting), then time sorts of
# 2^10..2^24 float32 / int64 through the bitonic network and the radix sort next to torch CUDA.
set -uo pipefail
unset LDFLAGS CXXFLAGS CFLAGS CC CXX
export CC=/usr/bin/gcc CXX=/usr/bin/g++
export PATH=$PWD/.vktc/usr/bin:$PATH LD_LIBRARY_PATH=$PWD/.vktc/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/out}
export VKML_CACHE_DIR=/tmp/vkml-cache
cmake -S . -B build-h200 -G Ninja -DCMAKE_BUILD_TYPE=Release -DVKML_VULKAN_INCLUDE_HINT=$PWD/.vktc/usr/include \
  -DVKML_GTEST_SOURCE=$PWD/.vktc/googletest -DVKML_BUILD_PYTHON=ON \
  -DPython3_EXECUTABLE=$(which python3) > $OUT/configure.log 2>&1 || { tail -20 $OUT/configure.log; exit 1; }
cmake --build build-h200 -j16 > $OUT/build.log 2>&1 || { grep -B2 -A10 error $OUT/build.log | head -60; exit 1; }
VKML_VALIDATION=${VKML_VALIDATION:-0} ./build-h200/tests/vkml_ops_tests --gtest_filter='Sort*:Reduce*' > $OUT/ops_tests.log 2>&1
grep -E "FAILED|PASSED" $OUT/ops_tests.log | head -20
VKML_FALLBACK=error PYTHONPATH=$PWD python3 -m pytest -q -p no:cacheprovider tests/torch/test_sort.py \
  tests/torch/test_large.py > $OUT/pytest.log 2>&1; tail -5 $OUT/pytest.log
VKML_FALLBACK=error PYTHONPATH=$PWD python3 - <<'PY' 2>&1 | grep -v Warn | tee $OUT/sort_timing.txt
import os, time, torch, torch_vkml
def median_time(fn, reps=5):
    fn(); torch.vkml.synchronize()
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); fn(); torch.vkml.synchronize(); ts.append(time.perf_counter() - t)
    return sorted(ts)[len(ts) // 2] * 1e3
def cuda_time(fn, reps=5):
    fn(); torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); fn(); torch.cuda.synchronize(); ts.append(time.perf_counter() - t)
    return sorted(ts)[len(ts) // 2] * 1e3
print("dtype log2n bitonic_ms radix_ms cuda_ms")
for dtype in (torch.float32, torch.int64):
    for lg in (10, 12, 13, 14, 15, 16, 18, 20, 22, 24):
        x = (torch.randn(1 << lg) * 1e4).to(dtype)
        xv, xc = x.to("vkml"), x.cuda()
        os.environ["VKML_SORT_RADIX_MIN"] = str(1 << 40)
        b = median_time(lambda: torch.sort(xv, stable=True)) if lg <= 20 else float("nan")
        os.environ["VKML_SORT_RADIX_MIN"] = "1"
        r = median_time(lambda: torch.sort(xv, stable=True))
        c = cuda_time(lambda: torch.sort(xc, stable=True))
        print(f"{str(dtype)[6:]} {lg} {b:.3f} {r:.3f} {c:.3f}", flush=True)
PY
