"""Diagnostic (device machine): div(rounding_mode="trunc") near ties in fp16/bf16, where the H200
disagreed with the CPU (tests/torch/test_elementwise_special.py). Prints each stage on vkml and CPU:
the true quotient in the dtype, the float32 quotient, and the truncated result, for 2- and 64-element
tensors (the second takes the 16-byte vector path on GPUs)."""

import torch

import torch_vkml  # noqa: F401

CASES = [(torch.float16, -8.4765625, -0.061004638671875), (torch.bfloat16, 8.375, 0.55859375),
         (torch.bfloat16, 2.984375, -0.0610351)]
for dtype, a, b in CASES:
    for n in (2, 64):
        ta = torch.full((n,), a, dtype=dtype)
        tb = torch.full((n,), b, dtype=dtype)
        va, vb = ta.to("vkml"), tb.to("vkml")
        row = {
            "true": (torch.div(va, vb)[0].item(), torch.div(ta, tb)[0].item()),
            "f32": ((va.float() / vb.float())[0].item(), (ta.float() / tb.float())[0].item()),
            "trunc": (torch.div(va, vb, rounding_mode="trunc")[0].item(),
                      torch.div(ta, tb, rounding_mode="trunc")[0].item()),
            "floor": (torch.div(va, vb, rounding_mode="floor")[0].item(),
                      torch.div(ta, tb, rounding_mode="floor")[0].item()),
        }
        print(f"{str(dtype)[6:]} {a}/{b} n={n}: " +
              "  ".join(f"{k} vkml {v[0]!r} cpu {v[1]!r}" for k, v in row.items()), flush=True)
