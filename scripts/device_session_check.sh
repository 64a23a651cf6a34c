#!/bin/bash
# On the GPU machine, one lease: build against its torch, then the parts chosen by STEPS (default
# all): gtest (C++ suites), gemm (torch.mm against cuBLAS), ddp (two ranks sharing the GPU),
# pytest (the torch suite on the GPU), demo (Fashion-MNIST, full set), bench (ops and models
# against CUDA), vit (ViT-B/16 step at batch 256, then a batch sweep to OOM and recovery). A short summary goes to stdout and $OUT/summary.txt, logs to $OUT.
set -uo pipefail
unset LDFLAGS CXXFLAGS CFLAGS CC CXX  # /opt/gcc links libstdc++ statically: use the system g++
export CC=/usr/bin/gcc CXX=/usr/bin/g++
export PATH=$PWD/.vktc/usr/bin:$PATH LD_LIBRARY_PATH=$PWD/.vktc/usr/lib/x86_64-linux-gnu
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export VKML_CACHE_DIR=/tmp/vkml-cache PYTHONPATH=$PWD HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
STEPS=${STEPS:-gtest gemm ddp pytest demo bench vit}
has() { [[ " $STEPS " == *" $1 "* ]]; }
log() { echo "$*" | tee -a $OUT/summary.txt; }
log "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); torch $(python3 -c 'import torch; print(torch.__version__)')"
t0=$SECONDS
cmake -S . -B build-h200 -G Ninja -DCMAKE_BUILD_TYPE=Release -DVKML_VULKAN_INCLUDE_HINT=$PWD/.vktc/usr/include \
  -DVKML_GTEST_SOURCE=$PWD/.vktc/googletest -DVKML_UNITY_BRIDGE=OFF -DPython3_EXECUTABLE=$(which python3) > /tmp/build.log 2>&1 \
  && timeout 400 cmake --build build-h200 -j16 >> /tmp/build.log 2>&1 || { grep -m3 -A12 error /tmp/build.log; exit 1; }
log "build ok ($((SECONDS - t0)) s)"
if has gtest; then
  for t in runtime ops; do timeout 200 ./build-h200/tests/vkml_${t}_tests --gtest_filter="${GTEST_FILTER:-*}" > /tmp/gtest_$t.log 2>&1
    log "gtest $t: $(grep -E '^\[  (PASSED|FAILED)' /tmp/gtest_$t.log | tr '\n' ' ')"
    grep -B8 -A3 "Failure" /tmp/gtest_$t.log | head -60 >> $OUT/gtest_failures.log; done
  grep -h "^\[  FAILED  \]" /tmp/gtest_*.log | head
fi
if has gemm; then
  for dt in float32 float16 bfloat16; do timeout 100 python3 bench/bench_gemm.py --dtype $dt --no-cpu \
    --shapes 1024x1024x1024,4096x4096x4096,8192x8192x8192,4096x4096x4096t 2>&1 | tee -a $OUT/summary.txt; done
fi
if has ddp; then
  # Small model: ranks and single process must agree to 1e-5. Large model (throughput): 50 steps
  # at lr 0.05 amplify the different summation order of half batches, so 1e-3.
  for cfg in "--steps 20 --tol 1e-5" "--steps 50 --batch 1024 --width 2048 --depth 4 --features 1024 --classes 100 --lr 0.05 --tol 1e-3"; do
    VKML_FALLBACK=error timeout 120 python3 -m torch.distributed.run --standalone --nproc_per_node=2 \
      examples/ddp_train.py --check $cfg >> $OUT/ddp.log 2>&1
    log "ddp $cfg: $(grep -E '^(PASS|FAIL)|max \|param' $OUT/ddp.log | tail -2 | tr '\n' ' ')"
  done
fi
if has pytest; then
  VKML_FALLBACK=error timeout ${PYTEST_TIMEOUT:-300} python3 -m pytest -q -p no:cacheprovider tests/torch \
    --ignore=tests/torch/test_opinfo.py ${PYTEST_ARGS:-} ${PYTEST_K:+-k "$PYTEST_K"} > $OUT/pytest.log 2>&1
  log "pytest: $(tail -1 $OUT/pytest.log)"
  grep -E "^FAILED|^ERROR" $OUT/pytest.log | head -20
fi
if has demo; then
  VKML_FASHION_MNIST=$PWD/.vktc/datasets/fashion-mnist timeout ${DEMO_TIMEOUT:-200} python3 examples/demo.py --full \
    --epochs ${DEMO_EPOCHS:-2} --plot $OUT/demo_loss.png > $OUT/demo.log 2>&1
  tail -14 $OUT/demo.log | tee -a $OUT/summary.txt
fi
if has bench; then
  timeout ${MODELS_TIMEOUT:-200} python3 bench/bench_models.py --json $OUT/bench_models.json > /tmp/bench_models.log 2>&1
  tail -16 /tmp/bench_models.log >> $OUT/summary.txt
  timeout ${OPS_TIMEOUT:-200} python3 bench/bench_ops.py --json $OUT/bench_ops.json ${BENCH_OPS_ARGS:-} > /tmp/bench_ops.log 2>&1
  tail -60 /tmp/bench_ops.log >> $OUT/summary.txt
  grep -E "^ +(memory|host|model)" /tmp/bench_ops.log /tmp/bench_models.log | head -30
fi
if has vit; then
  VKML_FALLBACK=error timeout ${VIT_TIMEOUT:-240} python3 scripts/vit_memory_sweep.py > $OUT/vit_sweep.log 2>&1
  log "vit sweep (rc $?):"; tail -6 $OUT/vit_sweep.log | tee -a $OUT/summary.txt
fi
log "total $((SECONDS - t0)) s"
