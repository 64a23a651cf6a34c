"""Diagnostic (device machine): how a wider 0-dim float tensor meets a bf16/fp16 tensor in
mul/div/add/sub on the CPU (CPU scalar), on CUDA (0-dim CUDA tensor and Python float) and on vkml.
Prints, per op and dtype, whether each device's result equals the CPU's, bit for bit."""

import torch

import torch_vkml  # noqa: F401

x = torch.randn(4096, generator=torch.Generator().manual_seed(0))
s = torch.tensor(1.2345678)
for dtype in (torch.bfloat16, torch.float16):
    xd = x.to(dtype)
    for name, fn in (("mul", torch.mul), ("div", torch.div), ("add", torch.add), ("sub", torch.sub)):
        cpu = fn(xd, s)
        row = [f"{name} {str(dtype)[6:]}:"]
        for dev in ("cuda", "vkml"):
            if dev == "cuda" and not torch.cuda.is_available():
                continue
            t = fn(xd.to(dev), s.to(dev)).cpu()  # 0-dim tensor on the device
            p = fn(xd.to(dev), float(s)).cpu()  # Python float
            c = fn(xd.to(dev), s).cpu()  # 0-dim CPU tensor
            row.append(f"{dev}: 0-dim-dev {int((t != cpu).sum())} diff, float {int((p != cpu).sum())}, "
                       f"0-dim-cpu {int((c != cpu).sum())}")
        print("  ".join(row))

# An integer 0-dim tensor too large for fp16 (fuzz seed 408309560595): cast to fp16 first it is inf,
# and 0 * inf is NaN; read at float precision it is finite, and 0 * it is 0.
xh = torch.tensor([0.0, 1.0, -2.0], dtype=torch.float16)
big = torch.tensor(10**12)
for dev in ("cpu", "cuda", "vkml"):
    if dev == "cuda" and not torch.cuda.is_available():
        continue
    r = torch.mul(xh.to(dev), big.to(dev)).cpu().tolist()
    a = torch.add(xh.to(dev), big.to(dev)).cpu().tolist()
    print(f"int64 0-dim on {dev}: mul {r} add {a}")
