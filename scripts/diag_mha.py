"""Diagnostic (device machine): does nn.MultiheadAttention's training graph on vkml reach the fused
SDPA node and the parameters? Prints the autograd graph and which gradients arrive."""

import torch

import torch_vkml  # noqa: F401

print("torch", torch.__version__)
torch.manual_seed(0)
mha = torch.nn.MultiheadAttention(32, 4, batch_first=True)
mv = mha.to("vkml")
print("params require grad:", {n: p.requires_grad for n, p in mv.named_parameters()})
x = torch.randn(2, 10, 32).to("vkml").requires_grad_()
pad = torch.zeros(2, 10, dtype=torch.bool)
pad[1, 7:] = True
out, _ = mv(x, x, x, key_padding_mask=pad.to("vkml"), need_weights=False)


def walk(fn, depth=0, seen=None):
    seen = set() if seen is None else seen
    if fn is None or id(fn) in seen or depth > 30:
        return
    seen.add(id(fn))
    print("  " * depth + fn.name())
    for nxt, _ in fn.next_functions:
        walk(nxt, depth + 1, seen)


walk(out.grad_fn)
out.sum().backward()
print("x.grad", None if x.grad is None else float(x.grad.abs().sum().cpu()))
for n, p in mv.named_parameters():
    print(n, None if p.grad is None else float(p.grad.abs().sum().cpu()))
q = torch.randn(2, 4, 10, 8).to("vkml").requires_grad_()
o = torch.nn.functional.scaled_dot_product_attention(q, q, q)
print("sdpa grad_fn", o.grad_fn.name() if o.grad_fn else None)
print("fused choice", torch._fused_sdp_choice(q, q, q))
