"""fp32 GEMM kernel sweep: every fp32 kernel and SIMT tile of vkml against cuBLAS (TF32 off).

    PYTHONPATH=. python3 bench/gemm32_sweep.py [--configs a,b] [--shapes x,y] [--budget 270]

For each shape and kernel configuration (set through VKML_GEMM_F32_KERNEL / VKML_GEMM_SIMT_TILE,
which the planner reads on every call) it times torch.mm on vkml (median of >= 10 samples after
warm-up, each sample `inner` calls then torch_vkml.synchronize) and checks the result against a
float64 product computed by CUDA (worst error relative to the largest reference value). cuBLAS
fp32 is timed in the same process. Prints one table of TFLOP/s (rows: shapes; columns: configs),
then per config the geometric mean of vkml / cuBLAS and the worst error. A full CSV goes to
--csv. Without CUDA (a developer machine) only vkml runs and errors are against the CPU.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time

import torch

import torch_vkml
import torch_vkml.profiler

from bench.timing import warm_up

# name -> environment. "simt" alone lets the planner pick the tile (its built-in table).
CONFIGS = {
    "tiled": {"VKML_GEMM_F32_KERNEL": "tiled"},
    "vec": {"VKML_GEMM_F32_KERNEL": "vec"},
    "vec64": {"VKML_GEMM_F32_KERNEL": "vec", "VKML_GEMM_F32_TILE": "64x64"},  # diagnosis
    "simt": {"VKML_GEMM_F32_KERNEL": "simt"},
}
# BMxBNxBKxWMxWNxTMxTN (block, K step, warp tile, thread tile). The first H200 sweep
# (2026-12-01) ran every 8x8 thread tile at 2.3 TFLOP/s and the 4x8/8x4 ones at 16-34.
SIMT_TILES = {
    "L8a": "128x128x8x32x64x8x8",  # 8x8 thread tiles: the slow control
    "L8b": "128x128x8x64x32x8x8",
    "L16a": "128x128x16x32x64x8x8",
    "L16b": "128x128x16x64x32x8x8",
    "M8": "128x64x8x64x32x8x8",
    "M16": "128x64x16x32x64x8x8",
    "XL8": "256x128x8x64x32x8x8",
    "S16": "64x64x16x32x32x4x8",
    "S16b": "64x64x16x32x32x8x4",  # the GPU default since that sweep
    "W16": "64x128x16x32x64x8x4",
    # Thread tiles of 32 accumulators on bigger blocks: more threads instead of bigger tiles.
    "X4a": "128x128x16x32x32x4x8",  # 512 threads
    "X8a": "128x128x16x32x32x8x4",  # 512 threads
    "M84": "128x64x16x32x32x8x4",  # 256 threads
    "W16c": "64x128x16x32x32x8x4",  # 256 threads, warps of 32x32
    "S32b": "64x64x32x32x32x8x4",  # K step 32
    "M16w": "128x64x16x64x32x8x8",  # the default block with warps of 64x32
    "N16": "64x128x16x32x64x8x8",  # the default turned around
    # K step 32 in 48 KiB: fits only where A is read in 4x4 blocks (its shared rows unpadded).
    "M32": "128x64x32x32x64x8x8",
    "N32": "64x128x32x32x64x8x8",
}
for _name, _tile in SIMT_TILES.items():
    CONFIGS[_name] = {"VKML_GEMM_F32_KERNEL": "simt", "VKML_GEMM_SIMT_TILE": _tile}
# gemm_simtn: the same kernel with named accumulator blocks (constant indices only), which tells
# whether the 8x8 cliff is the accumulator array left in memory by the driver.
for _name in SIMT_TILES:
    CONFIGS["n" + _name] = {
        "VKML_GEMM_F32_KERNEL": "simtn",
        "VKML_GEMM_SIMT_TILE": SIMT_TILES[_name],
    }
# B (k-contiguous, x @ W^T) in 4x4 blocks on tiles that give each thread whole blocks.
for _name in ("N16", "M32", "N32"):
    CONFIGS["n" + _name + "ab"] = dict(CONFIGS["n" + _name], VKML_GEMM_SIMT_KVEC="ab")
# The SIMT kernel's split-K block target (VKML_GEMM_SIMT_SPLITK_BLOCKS; 256 by default): few-block
# products (weight gradients over many tokens) cut K into more slices to fill the GPU.
for _blocks in (256, 512, 1024, 2048):
    CONFIGS[f"nsk{_blocks}"] = {"VKML_GEMM_F32_KERNEL": "simtn",
                                "VKML_GEMM_SIMT_SPLITK_BLOCKS": str(_blocks)}
# The same with slices of at least 1024 (VKML_GEMM_SIMT_SPLITK_MIN_SLICE; 512 by default).
for _blocks in (1024, 2048):
    CONFIGS[f"nsk{_blocks}d"] = dict(CONFIGS[f"nsk{_blocks}"],
                                     VKML_GEMM_SIMT_SPLITK_MIN_SLICE="1024")
DEFAULT_CONFIGS = [
    "tiled",
    "S16b",
    "L8a",
    "nS16b",
    "nL8a",
    "nL16b",
    "nM16",
    "X4a",
    "X8a",
    "M84",
    "W16c",
    "S32b",
]

# Shader name prefix each VKML_GEMM_F32_KERNEL value should run.
EXPECTED = {
    "tiled": "gemm_tiled_",
    "vec": "gemm_tiledv_",
    "simt": "gemm_simt_",
    "simtn": "gemm_simtn_",
}


def linear_shapes(tag: str, m: int, layers: list[tuple[int, int]]) -> list[str]:
    """Forward (x @ W^T), input gradient (g @ W) and weight gradient (g^T @ x) of nn.Linear."""
    out = []
    for i, (k, n) in enumerate(layers, 1):  # names must be unique: results are keyed by them
        t = f"{tag}{i}"
        out += [f"{t}f:{m}x{k}x{n}:nt", f"{t}d:{m}x{n}x{k}:nn", f"{t}w:{n}x{m}x{k}:tn"]
    return out


# name:MxKxN:layout, layout = A then B, n = row-major, t = a transposed view (A m-fast, B k-fast).
VIT = linear_shapes("vit", 12608, [(768, 2304), (768, 768), (768, 3072), (3072, 768)])
RESNET = [  # docs/performance.md's ResNet-18 b256 convolution GEMMs
    "rn1:262144x576x64:nn",
    "rn2:65536x1152x128:nn",
    "rn3:16384x2304x256:nn",
    "rn4:4096x4608x512:nn",
    "rnW:64x262144x576:nn",
    "rnI:262144x64x576:nn",
    # ResNet-50 inference b64: 1x1 convolutions folded over the batch at 7x7 and 14x14
    "r50c5:512x2048x3136:nn",
    "r50c4:256x1024x12544:nn",
]
GPT2 = [  # 8 x 512 tokens; HF Conv1D weights are [in, out] (row-major B); the tied head is W^T
    "g-qkv:4096x768x2304:nn",
    "g-proj:4096x768x768:nn",
    "g-fc:4096x768x3072:nn",
    "g-fc2:4096x3072x768:nn",
    "g-head:4096x768x50257:nt",
    "g-qkvW:768x4096x2304:tn",
    # weight gradients (g^T @ x) of the other layers, and input gradients under 512 blocks
    "g-projW:768x4096x768:tn",
    "g-fcW:768x4096x3072:tn",
    "g-fc2W:3072x4096x768:tn",
    "g-qkvD:4096x2304x768:nn",
]
# 4096^3 in every layout: tiled_vec transposes k-contiguous operands through dynamic component
# stores into shared memory (A in nn/nt, B in nt/tt); tn needs none, which isolates that suspect.
SQUARE = ["sq8k:8192x8192x8192:nn"] + [
    f"sq4k{x}:4096x4096x4096:{x}" for x in ("nn", "nt", "tn", "tt")
]
SHAPES = SQUARE + VIT + RESNET + GPT2
assert len({s.split(":")[0] for s in SHAPES}) == len(SHAPES), "shape names must be unique"


def parse(spec: str) -> tuple[str, int, int, int, str]:
    name, dims, layout = spec.split(":")
    m, k, n = (int(v) for v in dims.split("x"))
    return name, m, k, n, layout


def make_operands(m, k, n, layout, device, gen):
    """A (m x k) and B (k x n) on `device`; 't' makes the operand a transposed view."""
    a = (
        torch.randn(k, m, generator=gen).t()
        if layout[0] == "t"
        else torch.randn(m, k, generator=gen)
    )
    b = (
        torch.randn(n, k, generator=gen).t()
        if layout[1] == "t"
        else torch.randn(k, n, generator=gen)
    )

    def move(x):
        return x.t().contiguous().to(device).t() if not x.is_contiguous() else x.to(device)

    return move(a), move(b)


def median_seconds(fn, sync, repeat: int, cuda_events: bool) -> float:
    fn()
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    est = max(time.perf_counter() - t0, 1e-6)
    inner = max(1, min(20, math.ceil(4e-3 / est)))  # samples of >= ~4 ms
    samples = []
    for _ in range(repeat):
        if cuda_events:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(inner):
                fn()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end) / 1e3 / inner)
        else:
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            sync()
            samples.append((time.perf_counter() - t0) / inner)
    return statistics.median(samples)


def set_env(env: dict[str, str]) -> None:
    for key in (
        "VKML_GEMM_F32_KERNEL",
        "VKML_GEMM_SIMT_TILE",
        "VKML_GEMM_F32_VEC",
        "VKML_GEMM_F32_TILE",
        "VKML_GEMM_SIMT_KVEC",
        "VKML_GEMM_SIMT_SPLITK_BLOCKS",
        "VKML_GEMM_SIMT_SPLITK_MIN_SLICE",
    ):
        os.environ.pop(key, None)
    os.environ.update(env)


def run_shape(shape, configs, args, t_start, cuda, rates, errors, cublas, csv, slow) -> None:
    """Times one shape on cuBLAS and under every config on vkml; prints its table row."""
    name, m, k, n, layout = shape
    ref_dev = "cuda" if cuda else "cpu"
    flops = 2.0 * m * n * k
    gen = torch.Generator().manual_seed(0)
    a_ref, b_ref = make_operands(m, k, n, layout, ref_dev, gen)
    ref = (a_ref.double() @ b_ref.double()).float() if cuda else a_ref.double() @ b_ref.double()
    scale = ref.abs().max().item()
    if cuda:
        cublas[name] = flops / median_seconds(
            lambda: torch.mm(a_ref, b_ref), torch.cuda.synchronize, args.repeat, True
        )
    a = a_ref.t().cpu().to("vkml").t() if layout[0] == "t" else a_ref.cpu().to("vkml")
    b = b_ref.t().cpu().to("vkml").t() if layout[1] == "t" else b_ref.cpu().to("vkml")
    assert a.stride() == a_ref.stride() and b.stride() == b_ref.stride()
    cu = cublas.get(name, float("nan"))
    cells = []
    for cfg in configs:
        if time.perf_counter() - t_start > args.budget:
            cells.append(f"{'skip':>6}")
            continue
        if slow.get(cfg, 0) >= args.drop_after:
            cells.append(f"{'slow':>6}")
            continue
        set_env(CONFIGS[cfg])
        try:
            # Each setting's own pipelines first, then a busy GPU: its clock falls while idle.
            warm_up(lambda: torch.mm(a, b), torch_vkml.synchronize, 2, 0.3)
            sec = median_seconds(lambda: torch.mm(a, b), torch_vkml.synchronize, args.repeat, False)
            torch_vkml.profiler.enable()  # which kernels ran (a fallback to another is marked)
            got = torch.mm(a, b)
            torch_vkml.synchronize()
            kernels = sorted(torch_vkml.profiler.kernel_times(reset=True))
            torch_vkml.profiler.disable()
            got = got.cpu().to(ref_dev)
            err = ((got.double() - ref.double()).abs().max() / scale).item()
        except Exception as e:  # noqa: BLE001  (report and go on: one run for the whole sweep)
            print(f"  {name} {cfg}: {type(e).__name__}: {str(e)[:120]}", flush=True)
            cells.append(f"{'ERR':>6}")
            continue
        finally:
            set_env({})
        rates[name, cfg], errors[name, cfg] = flops / sec, err
        if cuda and flops / sec < args.drop_below * cu:
            slow[cfg] = slow.get(cfg, 0) + 1
        bad = "!" if not math.isfinite(err) or err > 1e-3 else " "
        if not any(x.startswith(EXPECTED[CONFIGS[cfg]["VKML_GEMM_F32_KERNEL"]]) for x in kernels):
            bad = "*"
        cells.append(f"{flops / sec / 1e12:>5.1f}{bad}")
        csv.append(
            f"{name},{m},{k},{n},{layout},{cfg},{sec * 1e3:.4f},{flops / sec / 1e12:.3f},"
            f"{cu / 1e12:.3f},{flops / sec / cu:.3f},{err:.3e},{'+'.join(kernels)}"
        )
    done = [c for c in configs if (name, c) in rates and errors[name, c] <= 1e-3]  # correct ones
    best = max(done, key=lambda c: rates[name, c]) if done else "-"
    ratio = rates[name, best] / cu if done else float("nan")
    print(
        f"{name:>8} {f'{m}x{k}x{n}':>19} {layout} "
        + " ".join(cells)
        + f" {cu / 1e12:>6.1f} {best:>6} {ratio:>11.2f}",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--configs", default=",".join(DEFAULT_CONFIGS), help="of: " + ",".join(CONFIGS))
    ap.add_argument("--shapes", default=",".join(SHAPES), help="names or name:MxKxN:layout specs")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--budget", type=float, default=270.0, help="seconds; later runs are skipped")
    ap.add_argument(
        "--drop-below",
        type=float,
        default=0.15,
        help="a config this far below cuBLAS on --drop-after shapes is not run again ('slow')",
    )
    ap.add_argument("--drop-after", type=int, default=2)
    ap.add_argument("--csv", default=os.path.join(os.environ.get("OUT", "."), "gemm32_sweep.csv"))
    args = ap.parse_args()
    t_start = time.perf_counter()
    by_name = {parse(s)[0]: s for s in SHAPES}
    shapes = [parse(by_name.get(s, s)) for s in args.shapes.split(",") if s]
    configs = [c for c in args.configs.split(",") if c]
    cuda = torch.cuda.is_available()
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = False
    print(f"fp32 torch.mm sweep; vkml: {torch_vkml.device_name()}; cuda: {cuda}", flush=True)
    rates: dict[tuple[str, str], float] = {}
    errors: dict[tuple[str, str], float] = {}
    cublas: dict[str, float] = {}
    slow: dict[str, int] = {}  # config -> shapes it ran below --drop-below of cuBLAS
    csv = ["shape,m,k,n,layout,config,ms,tflops,cublas_tflops,ratio,max_rel_err,kernels"]
    head = f"{'shape':>8} {'MxKxN':>19} L  " + " ".join(f"{c:>6}" for c in configs)
    print(head + f" {'cuBLAS':>6} {'best':>6} {'best/cuBLAS':>11}", flush=True)
    for shape in shapes:
        run_shape(shape, configs, args, t_start, cuda, rates, errors, cublas, csv, slow)
        torch_vkml.empty_cache()
        if cuda:
            torch.cuda.empty_cache()
    print(
        "TFLOP/s; '!': max rel error > 1e-3; '*': the config's kernel did not run (fallback);"
        " 'slow': dropped after --drop-after shapes below --drop-below of cuBLAS"
    )
    print("Per config: geomean and min of vkml/cuBLAS over its shapes, worst error")
    for cfg in configs:
        names = [s[0] for s in shapes if (s[0], cfg) in rates]
        if not names:
            continue
        ratios = [rates[s, cfg] / cublas[s] for s in names if s in cublas]
        gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios)) if ratios else float("nan")
        worst = max(errors[s, cfg] for s in names)
        env = CONFIGS[cfg]
        tile = env.get("VKML_GEMM_SIMT_TILE", env.get("VKML_GEMM_F32_TILE", ""))
        tile = f"{env['VKML_GEMM_F32_KERNEL']} {tile}"
        low = min(ratios, default=float("nan"))
        print(f"  {cfg:>6} {tile:>22}: geomean {gm:.3f}  min {low:.3f}  worst err {worst:.2e}")
    with open(args.csv, "w") as f:
        f.write("\n".join(csv) + "\n")
    print(f"total {time.perf_counter() - t_start:.0f} s; csv: {args.csv}")


if __name__ == "__main__":
    main()
