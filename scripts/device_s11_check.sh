#!/bin/bash
# On the GPU machine, for the session after the tenth (each part under 10 minutes):
#   part 1: the diagnosis of ResNet-50 fp16 inference's 34 ms over 15 ms of kernels (recording time,
#           wall time and kernel sum per step with VKML_GEMM_UNALIGNED_VEC and
#           VKML_COPY_TRANSPOSE switched off in turn), then all five models against CUDA.
#   part 2: the vectorised coopmat GEMM's tiles (VKML_GEMM_COOPMAT_TILE): 128x256 and 256x128
#           blocks at BK 16 against the 128x128 default, correctness at odd shapes against CUDA,
#           then 8192^3 fp16/bf16 and convolution-shaped GEMMs, with register counts.
#   part 3: 1x1 convolutions over 7x7 planes with the narrow-side blocks, gtests, models, pytest.
#   part 4: gtests, max pool against CUDA, ResNet-50 fp16 with its profile, the torch suite.
# Usage: bash scripts/device_s11_check.sh 1|2|3|4. Summary to stdout; logs to $OUT.
# The timings in docs/performance.md (eleventh session) came from this script at commit a20a7b2;
# its inline helpers now time through bench/timing.py with the same warm-up and samples.
set -uo pipefail
PART=${1:-1}
source scripts/device_build_env.sh
t0=$SECONDS
if [ "$PART" = 1 ]; then
  for cfg in "X=1" "VKML_GEMM_UNALIGNED_VEC=0" "VKML_COPY_TRANSPOSE=0"; do
    env $cfg timeout 45 python3 scripts/diag_host_vs_gpu.py --only resnet50_infer_b64_float16 --repeat 5 2>&1 |
      grep -E "record|Error" | sed "s/^/[$cfg] /"
  done
  echo "diag: $((SECONDS - t0)) s"
  timeout 330 python3 bench/bench_models.py --json "$OUT/models.json" > "$OUT/models.txt" 2>&1
  grep -E "model|loss|fallbacks" "$OUT/models.txt"
elif [ "$PART" = 2 ]; then
  # Bigger block tiles halve L2 traffic per FLOP; BK 16 keeps two stages within 48 KiB.
  check='import os,torch,torch_vkml
g=torch.Generator().manual_seed(1)
for m,k,n,t in [(1000,520,1030,0),(777,1032,1290,1),(256,2304,520,0)]:
  for dt in (torch.float16,torch.bfloat16):
    a=torch.randn(m,k,generator=g).to(dt); b=(torch.randn(n,k,generator=g).to(dt).t() if t else torch.randn(k,n,generator=g).to(dt))
    ref=(a.cuda().float()@b.cuda().float()).cpu(); got=(a.to("vkml")@b.to("vkml")).cpu().float()
    err=((got-ref).abs().max()/ref.abs().max()).item(); assert err<2e-2,(m,k,n,t,dt,err)
print("tile",os.environ.get("VKML_GEMM_COOPMAT_TILE",""),"correct")'
  shapes=8192x8192x8192,8192x8192x8192t,4096x4096x4096,256x2304x6272,64x576x100352
  for tile in "" 128x256x8x4x4x16 256x128x8x4x4x16 128x256x8x2x8x16 256x128x8x8x2x16 128x128x4x4x4x16; do
    export VKML_GEMM_COOPMAT_TILE=$tile
    timeout 30 python3 -c "$check" 2>&1 | tail -1
    VKML_PIPELINE_STATS=1 timeout 60 python3 bench/bench_gemm.py --dtype float16 --no-cpu --shapes $shapes 2>&1 |
      grep -E "^ *[0-9]|gemm_coopmatv" | sed -E "s/vkml pipeline stats: //; s/; Binary.*Shared/ shared/" |
      sed "s/^/[$tile] /"
    timeout 30 python3 bench/bench_gemm.py --dtype bfloat16 --no-cpu --shapes 8192x8192x8192 2>&1 |
      grep -E "^ *[0-9]" | sed "s/^/[$tile bf16] /"
  done
  unset VKML_GEMM_COOPMAT_TILE
elif [ "$PART" = 3 ]; then
  # Narrow 1x1 convolutions (N = 49 per sample) with 128x64 blocks against the old 128x128, each
  # checked against CUDA; then the gtests, the torch suite and the five models.
  cat > /tmp/conv1x1.py <<'PY'
import os, torch, torch_vkml
import torch.nn.functional as F
from bench.timing import median_seconds
def med(fn, device):  # ms: 3 warm-up calls, the median of 15 samples of 4 calls
    return median_seconds(fn, device, warmup=3, repeat=15, inner=4, min_seconds=0) * 1e3
g = torch.Generator().manual_seed(0)
for cin, cout, hw, st in [(2048, 512, 7, 1), (512, 2048, 7, 1), (1024, 2048, 14, 2), (1024, 256, 14, 1)]:
    x = torch.randn(64, cin, hw, hw, generator=g).half(); w = (torch.randn(cout, cin, 1, 1, generator=g) * 0.03).half()
    xv, wv, xc, wc = x.to("vkml"), w.to("vkml"), x.cuda(), w.cuda()
    ref = F.conv2d(xc.float(), wc.float(), stride=st).cpu()
    row = f"{cin}->{cout} 1x1/{st} @{hw}:"
    for tile in ("", "128x128x4x4x4"):
        os.environ["VKML_GEMM_COOPMAT_TILE"] = tile
        err = ((F.conv2d(xv, wv, stride=st).cpu().float() - ref).abs().max() / ref.abs().max()).item()
        assert err < 1e-2, (row, tile, err)
        row += f" [{tile or 'default'}] {med(lambda: F.conv2d(xv, wv, stride=st), 'vkml'):.3f} ms"
    os.environ.pop("VKML_GEMM_COOPMAT_TILE")
    row += f" [cuda] {med(lambda: F.conv2d(xc, wc, stride=st), 'cuda'):.3f} ms"
    print(row, flush=True)
PY
  timeout 60 python3 /tmp/conv1x1.py 2>&1 | tail -5
  for t in runtime ops; do timeout 120 ./build-h200/tests/vkml_${t}_tests > $OUT/gtest_$t.log 2>&1
    echo "gtest $t: $(grep -E '^\[  (PASSED|FAILED)' $OUT/gtest_$t.log | tr '\n' ' ')"; done
  grep -h "^\[  FAILED  \]" $OUT/gtest_*.log | head
  echo "tests: $((SECONDS - t0)) s"
  timeout 110 python3 bench/bench_models.py --json "$OUT/models.json" > "$OUT/models.txt" 2>&1
  grep -E "model|loss|fallbacks" "$OUT/models.txt"
  VKML_FALLBACK=error timeout $((560 - SECONDS)) python3 -m pytest -q -x -p no:cacheprovider tests/torch \
    --ignore=tests/torch/test_opinfo.py > $OUT/pytest.log 2>&1
  echo "pytest: $(tail -1 $OUT/pytest.log)"; grep -E "^FAILED|^ERROR" $OUT/pytest.log | head
elif [ "$PART" = 4 ]; then
  # The session's last call: gtests, the max pool's 32-bit window walk against CUDA, ResNet-50
  # fp16 with its kernel profile, then the torch suite.
  for t in runtime ops; do timeout 120 ./build-h200/tests/vkml_${t}_tests > $OUT/gtest_$t.log 2>&1
    echo "gtest $t: $(grep -E '^\[  (PASSED|FAILED)' $OUT/gtest_$t.log | tr '\n' ' ')"; done
  grep -h -B3 -A6 "Failure" $OUT/gtest_*.log | head -30
  cat > /tmp/maxpool.py <<'PY'
import torch, torch_vkml
import torch.nn.functional as F
from bench.timing import median_seconds
def med(fn, device):  # ms: 3 warm-up calls, the median of 15 samples of 4 calls
    return median_seconds(fn, device, warmup=3, repeat=15, inner=4, min_seconds=0) * 1e3
g = torch.Generator().manual_seed(0)
bwd = torch.ops.aten.max_pool2d_with_indices_backward
for dt in (torch.float16, torch.float32):
    x = torch.randn(64, 64, 112, 112, generator=g).to(dt)
    row = f"max_pool2d 3x3/2 [64,64,112,112] {dt}:"
    for dev in ("vkml", "cuda"):
        xd = x.to(dev)
        y, i = F.max_pool2d(xd, 3, 2, 1, return_indices=True)
        gy = torch.ones_like(y)
        gx = bwd(gy, xd, [3, 3], [2, 2], [1, 1], [1, 1], False, i)
        if dev == "vkml": ref = (y.cpu(), i.cpu(), gx.cpu())
        else: assert torch.equal(ref[0], y.cpu()) and torch.equal(ref[1], i.cpu()) and torch.equal(ref[2], gx.cpu()), "mismatch"
        row += f" [{dev}] fwd {med(lambda: F.max_pool2d(xd, 3, 2, 1, return_indices=True), dev):.3f} ms"
        row += f" bwd {med(lambda: bwd(gy, xd, [3, 3], [2, 2], [1, 1], [1, 1], False, i), dev):.3f} ms"
    print(row, "(equal to CUDA)", flush=True)
PY
  timeout 60 python3 /tmp/maxpool.py 2>&1 | tail -3
  timeout 60 python3 bench/bench_models.py --only resnet50_infer_b64_float16 --json "$OUT/r50.json" 2>&1 |
    grep -E "model"
  timeout 40 python3 bench/bench_models.py --only resnet50_infer_b64_float16 --profile 10 > $OUT/profile.txt 2>&1
  head -16 $OUT/profile.txt
  echo "before pytest: $((SECONDS - t0)) s"
  VKML_FALLBACK=error timeout $((540 - SECONDS)) python3 -m pytest -q -p no:cacheprovider tests/torch \
    --ignore=tests/torch/test_opinfo.py > $OUT/pytest.log 2>&1
  echo "pytest: $(tail -1 $OUT/pytest.log)"; grep -E "^FAILED|^ERROR" $OUT/pytest.log | head
fi
echo "part $PART: $((SECONDS - t0)) s after the build"
