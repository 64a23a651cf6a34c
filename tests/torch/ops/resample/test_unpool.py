"""max_unpool1d/2d/3d on vkml against the CPU: indices from max pools (gradients through the
gather backward), duplicate indices (the last input in memory order wins, which is what the CPU's
sequential loop gives; CPU builds differ in threading, so the reference is written out here),
half types exact, channels_last and strided inputs, unbatched inputs, out=, and bad-index errors."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import FLOAT_DTYPES, assert_close_to_ref, only_native, randn


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_max_unpool_roundtrip(dtype, gen, fallback):
    for dims, shape, k in [(1, (2, 3, 11), 2), (2, (2, 3, 7, 8), 2), (3, (1, 2, 4, 5, 6), 2)]:
        x = randn(shape, dtype, gen)
        pool = getattr(F, f"max_pool{dims}d")
        unpool = getattr(F, f"max_unpool{dims}d")
        y, idx = pool(x, k, return_indices=True)
        yv = y.to("vkml").requires_grad_()
        yr = y.double().requires_grad_()
        with only_native():
            out = unpool(yv, idx.to("vkml"), k, output_size=shape[2:])
        ref = unpool(yr, idx, k, output_size=shape[2:])
        assert_close_to_ref(out, ref)
        g = randn(ref.shape, dtype, gen)
        with only_native():
            (gv,) = torch.autograd.grad(out, yv, g.to("vkml"))
        (gr,) = torch.autograd.grad(ref, yr, g.double())
        assert_close_to_ref(gv, gr)


def unpool_last_wins(x: torch.Tensor, idx: torch.Tensor, out_hw: tuple[int, int]) -> torch.Tensor:
    """max_unpool2d with duplicate indices resolved as a sequential loop does: the last input wins."""
    n, c = x.shape[:2]
    out = torch.zeros(n, c, out_hw[0] * out_hw[1], dtype=x.dtype)
    xf, jf = x.reshape(n, c, -1), idx.reshape(n, c, -1)
    for pos in range(xf.shape[2]):  # one input per plane and step: no duplicates within a scatter
        out.scatter_(2, jf[:, :, pos:pos + 1], xf[:, :, pos:pos + 1])
    return out.view(n, c, *out_hw)


def test_max_unpool_duplicates_ints_layouts(gen, fallback):
    x = torch.randint(-50, 50, (2, 3, 4, 5), generator=gen)
    idx = torch.randint(0, 12, (2, 3, 4, 5), generator=gen)  # many duplicates
    for dtype in [torch.float16, torch.bfloat16, torch.float32]:
        xs = x.to(dtype)
        with only_native():
            got = torch.ops.aten.max_unpool2d(xs.to("vkml"), idx.to("vkml"), [3, 4])
        assert torch.equal(got.cpu(), unpool_last_wins(xs, idx, (3, 4)))
    xf = randn((2, 3, 4, 5), torch.float32, gen)
    xcl = xf.to("vkml").contiguous(memory_format=torch.channels_last)
    with only_native():
        got = F.max_unpool2d(xcl, idx.to("vkml"), 2, output_size=(8, 10))
        unb = F.max_unpool2d(xf[0].to("vkml"), idx[0].to("vkml"), 2, output_size=(8, 10))
        out = torch.empty(0, device="vkml")
        torch.ops.aten.max_unpool2d.out(xf.to("vkml"), idx.to("vkml"), [8, 10], out=out)
    ref = unpool_last_wins(xf, idx, (8, 10))
    assert torch.equal(got.cpu(), ref)
    assert torch.equal(unb.cpu(), ref[0])
    assert torch.equal(out.cpu(), ref)


def test_max_unpool_errors(fallback):
    x = torch.randn(1, 1, 2, 2, device="vkml")
    bad = torch.tensor([[[[0, 1], [2, 99]]]], device="vkml")
    with pytest.raises(RuntimeError, match="invalid max index"):
        F.max_unpool2d(x, bad, 2)
    with pytest.raises(RuntimeError, match="int64"):
        F.max_unpool2d(x, bad.int(), 2)
    with pytest.raises(NotImplementedError):  # integer inputs: not on the CPU either
        torch.ops.aten.max_unpool2d(x.long(), bad, [2, 2])
