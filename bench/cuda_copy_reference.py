"""PyTorch CUDA device-copy bandwidth, the reference for bench_runtime's copy figure.

Medians of timed repeats after warm-up, CUDA events, random data; run on the same GPU in the same
command as bench_runtime."""
import sys

import torch


def main() -> None:
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    x = torch.randn(mib * 2**20 // 4, device="cuda")
    y = torch.empty_like(x)
    for _ in range(3):
        y.copy_(x)
    times = []
    for _ in range(20):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        y.copy_(x)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    ms = times[len(times) // 2]
    assert torch.equal(x, y)
    print(f"torch CUDA copy_ (read+write), {mib} MiB: {2 * x.numel() * 4 / ms / 1e6:.1f} GB/s "
          f"on {torch.cuda.get_device_name()}")


if __name__ == "__main__":
    main()
