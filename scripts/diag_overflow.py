"""GPU diagnostic: values near the top of the float range, vkml against the CPU (float64 where it
matters). Prints one line per probe with the mismatching entries; exit status 1 on any mismatch."""

import torch

import torch_vkml  # noqa: F401  (registers the device)

bad = 0


def probe(name, fn, *inputs):
    """vkml against the CPU in the same dtype (2 ulp); mismatches also show the float64 value."""
    global bad
    want = fn(*inputs)
    got = fn(*(t.to("vkml") for t in inputs)).cpu()
    exact = fn(*(t.double() for t in inputs))
    rtol = 2 * torch.finfo(want.dtype).eps if want.dtype.is_floating_point else 0
    close = torch.isclose(got.double(), want.double(), rtol=rtol, atol=0, equal_nan=True)
    ok = bool(close.all())
    bad += not ok
    print(
        f"{'ok ' if ok else 'BAD'} {name}: "
        + "; ".join(
            f"[{i}] vkml {got[i].item():.7g} cpu {want[i].item():.7g} float64 {exact[i].item():.7g}"
            for i in (~close).nonzero().flatten().tolist()[:6]
        )
    )


f32 = lambda v: torch.tensor(v, dtype=torch.float32)  # noqa: E731
f16 = lambda v: torch.tensor(v, dtype=torch.float16)  # noqa: E731
big = [65504.0, 65519.0, 65520.0, 7e4, 1e5, -1e5, 1e38, float("inf"), 3.0]
probe("fp32->fp16 cast", lambda t: t.to(torch.float16), f32(big))
probe("fp32->bf16 cast", lambda t: t.to(torch.bfloat16), f32([3.39e38, 3.4e38, -3.4e38, 1.0]))
probe("fp16 exp", torch.exp, f16([10.0, 11.0, 11.1, 12.0, 20.0]))
probe("fp16 add", torch.add, f16([60000.0, -60000.0, 1.0]), f16([60000.0, -60000.0, 2.0]))
probe("fp16 mul", torch.mul, f16([300.0, 256.0, 255.0]), f16([300.0, 256.0, 257.0]))
probe("fp16 sum", lambda t: t.sum(0, keepdim=True), f16([60000.0, 60000.0]))
probe("fp16 mm", torch.mm, f16([[300.0, 1.0]]), f16([[300.0], [2.0]]))
probe("fp16 softmax-free relu*scale", lambda t: torch.relu(t) * 4, f16([20000.0, -1.0]))
xs = f32([8.5, 20.0, 44.0, 60.0, 80.0, 85.0, 88.0, 88.7, 89.0, 89.4, 90.0, 91.0, 100.0])
probe("exp(x/2)", lambda t: torch.exp(t / 2), xs)
for fn in (torch.special.i0e, torch.special.i1e, torch.i0, torch.special.i1):
    probe(f"{fn.__name__} fp32", fn, xs)
    probe(f"{fn.__name__} fp16", fn, xs.to(torch.float16))
raise SystemExit(1 if bad else 0)
