"""grid_sample on vkml against float64 CPU: 2-D (bilinear, nearest, bicubic) and 3-D (bilinear,
nearest), zeros/border/reflection padding, align_corners both ways, grids reaching outside
[-1, 1]; gradients for input and grid, strided inputs and grids."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import FLOAT_DTYPES, assert_close_to_ref, device_dtypes, only_native, randn


def check(dtype, gen, x_shape, grid_shape, layout=None, **kw):
    x = randn(x_shape, dtype, gen)
    # coordinates a little outside [-1, 1], so padding modes matter
    grid = (torch.rand(grid_shape, generator=gen, dtype=torch.float64) * 2.4 - 1.2).to(dtype)
    xv, gv = x.to("vkml"), grid.to("vkml")
    if layout is not None:
        xv, gv = layout(xv), layout(gv)
    xv, gv = xv.detach().requires_grad_(), gv.detach().requires_grad_()
    xr, gr = x.double().requires_grad_(), grid.double().requires_grad_()
    with only_native():
        out = F.grid_sample(xv, gv, **kw)
    ref = F.grid_sample(xr, gr, **kw)
    assert_close_to_ref(out, ref, scale=8)
    go = randn(ref.shape, dtype, gen)
    with only_native():
        gx, gg = torch.autograd.grad(out, (xv, gv), go.to("vkml"))
    rgx, rgg = torch.autograd.grad(ref, (xr, gr), go.double())
    assert_close_to_ref(gx, rgx, scale=8)
    if kw.get("mode") != "nearest":
        # grid gradients multiply by size/2: looser for half types
        assert_close_to_ref(gg, rgg, scale=32)


MODES_2D = [
    dict(mode="bilinear", padding_mode="zeros", align_corners=False),
    dict(mode="bilinear", padding_mode="border", align_corners=True),
    dict(mode="bilinear", padding_mode="reflection", align_corners=False),
    dict(mode="nearest", padding_mode="zeros", align_corners=False),
    dict(mode="nearest", padding_mode="reflection", align_corners=True),
    dict(mode="bicubic", padding_mode="zeros", align_corners=False),
    dict(mode="bicubic", padding_mode="border", align_corners=True),
    dict(mode="bicubic", padding_mode="reflection", align_corners=True),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_grid_sample_2d(dtype, gen, fallback):
    for kw in MODES_2D:
        check(dtype, gen, (2, 3, 5, 7), (2, 4, 6, 2), **kw)


@pytest.mark.parametrize("dtype", device_dtypes(torch.float32, torch.float64))
def test_grid_sample_3d(dtype, gen, fallback):
    for kw in [
        dict(mode="bilinear", padding_mode="zeros", align_corners=False),
        dict(mode="bilinear", padding_mode="reflection", align_corners=True),
        dict(mode="nearest", padding_mode="border", align_corners=False),
    ]:
        check(dtype, gen, (2, 2, 3, 4, 5), (2, 3, 2, 4, 3), **kw)


def test_grid_sample_strided_large_and_errors(gen, fallback):
    def transposed(t):
        return t.transpose(1, 2).contiguous().transpose(1, 2)

    check(torch.float32, gen, (2, 3, 9, 8), (2, 20, 17, 2), transposed, mode="bilinear",
          align_corners=False)
    with pytest.raises(RuntimeError):
        F.grid_sample(torch.randn(1, 2, 3, 3, device="vkml"), torch.randn(1, 2, 2, 3, device="vkml"),
                      align_corners=False)
    with pytest.raises(RuntimeError):
        F.grid_sample(
            torch.randn(1, 2, 3, 3, 3, device="vkml"), torch.randn(1, 2, 2, 2, 3, device="vkml"),
            mode="bicubic", align_corners=False,
        )
