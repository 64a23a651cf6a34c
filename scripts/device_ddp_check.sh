#!/bin/bash
# On the GPU machine: build against its torch, then two DDP ranks sharing the one GPU through the
# "vkml" torch.distributed backend (each process opens the device itself), compared with
# single-process training on the same global batches; prints PASS/FAIL and samples/s, then the
# distributed pytest file. Logs go to $OUT.
set -uo pipefail
# The system compiler links the shared libstdc++ torch uses (see device_debug_python.sh).
unset LDFLAGS CXXFLAGS CFLAGS CC CXX
export CC=/usr/bin/gcc CXX=/usr/bin/g++
export PATH=$PWD/.vktc/usr/bin:$PATH LD_LIBRARY_PATH=$PWD/.vktc/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export VKML_CACHE_DIR=/tmp/vkml-cache PYTHONPATH=$PWD VKML_FALLBACK=error
python3 -c "import torch; print('torch', torch.__version__)" | tee $OUT/summary.txt
cmake -S . -B build-h200 -G Ninja -DCMAKE_BUILD_TYPE=Release -DVKML_VULKAN_INCLUDE_HINT=$PWD/.vktc/usr/include \
  -DVKML_GTEST_SOURCE=$PWD/.vktc/googletest -DPython3_EXECUTABLE=$(which python3) > $OUT/build.log 2>&1 \
  && timeout 400 cmake --build build-h200 -j16 >> $OUT/build.log 2>&1 || { grep -m3 -A12 error $OUT/build.log; exit 1; }
echo "build ok"
status=0
# Small model (exact agreement expected) and a larger one (GEMM reduction order may differ between
# a half and a whole batch: 1e-4).
for cfg in "--steps 20 --tol 1e-5" \
           "--steps 50 --batch 1024 --width 2048 --depth 4 --features 1024 --classes 100 --lr 0.05 --tol 1e-4"; do
  echo "== ddp_train.py $cfg" | tee -a $OUT/summary.txt
  timeout 240 python3 -m torch.distributed.run --standalone --nproc_per_node=2 examples/ddp_train.py \
    --check $cfg > $OUT/ddp_train.log 2>&1 || status=1
  grep -E "backend|loss|ranks|single|PASS|FAIL" $OUT/ddp_train.log | tee -a $OUT/summary.txt
  grep -q "^PASS" $OUT/ddp_train.log || { status=1; tail -30 $OUT/ddp_train.log; }
done
python3 -m pytest --version > /dev/null 2>&1 || pip install -q pytest > /dev/null 2>&1
timeout 300 python3 -m pytest -q -p no:cacheprovider tests/torch/test_distributed.py > $OUT/pytest.log 2>&1 || status=1
echo "pytest test_distributed.py: $(tail -1 $OUT/pytest.log)" | tee -a $OUT/summary.txt
grep -E "^FAILED" $OUT/pytest.log | head
[ $status -eq 0 ] && echo "device_ddp_check: PASS" || echo "device_ddp_check: FAIL"
exit $status
