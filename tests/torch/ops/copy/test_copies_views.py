"""Copies CPU<->vkml and on the device, with every dtype, strides and conversions; views."""

import pytest
import torch
from nn_helpers import ALL_DTYPES, device_dtypes, rand_any


def rand(shape, dtype, gen):
    return rand_any(shape, dtype, gen, scale=10.0, int_range=(-100, 100), uint8_range=(0, 255))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_round_trip_every_dtype(dtype, gen):
    for shape in [(7, 13), (0, 5), (1,), (), (3, 1, 4, 1, 5)]:
        x = rand(shape, dtype, gen)
        y = x.to("vkml")
        assert y.dtype == dtype and y.shape == x.shape
        assert torch.equal(y.cpu(), x)
    x = rand((9, 11), dtype, gen)
    for view in [x.t(), x[::2, 1::3], x[:, 3], x.unsqueeze(1).expand(9, 4, 11)]:
        y = view.to("vkml")
        assert torch.equal(y.cpu(), view)


@pytest.mark.parametrize("src", ALL_DTYPES)
def test_dtype_conversion_matches_cpu(src, gen):
    x = rand((5, 6), src, gen)
    xv = x.to("vkml")
    for dst in ALL_DTYPES:
        if src.is_floating_point and not dst.is_floating_point and dst != torch.bool:
            xs = x.clamp(-100, 100) if dst != torch.uint8 else x.abs().clamp(0, 200)
            ref, got = xs.to(dst), xs.to("vkml").to(dst)
        else:
            ref, got = x.to(dst), xv.to(dst)
        assert got.device.type == "vkml"
        assert torch.equal(got.cpu(), ref), (src, dst)
        # conversion while moving, both ways
        assert torch.equal(x.to("vkml", dtype=dst).cpu(), x.to(dst)) or not src.is_floating_point
        assert torch.equal(xv.to("cpu", dtype=dst), x.to(dst)) or src.is_floating_point


def test_device_copy_strided_and_broadcast(gen):
    x = torch.randn(4, 6, generator=gen)
    d = torch.zeros(6, 4).to("vkml")
    d.copy_(x.to("vkml").t())
    assert torch.equal(d.cpu(), x.t())
    row = torch.randn(6, generator=gen)
    d2 = torch.empty(4, 6, device="vkml")
    d2.copy_(row.to("vkml"))
    assert torch.equal(d2.cpu(), row.expand(4, 6))
    # strided destination: every other column
    big = torch.zeros(4, 12).to("vkml")
    big[:, ::2].copy_(x.to("vkml"))
    ref = torch.zeros(4, 12)
    ref[:, ::2] = x
    assert torch.equal(big.cpu(), ref)
    # into a strided CPU destination from the device
    host = torch.zeros(6, 8)
    host[:, ::2].copy_(x.t().to("vkml"))
    assert torch.equal(host[:, ::2], x.t())


def test_copy_to_non_contiguous_cpu_with_conversion(gen):
    # float64 destinations and sources on the host: a device without fp64 converts on the host.
    x = torch.randn(5, 7, generator=gen)
    host = torch.zeros(7, 5, dtype=torch.float64).t()
    host.copy_(x.to("vkml"))
    assert torch.equal(host, x.double())
    half = torch.zeros(7, 5, dtype=torch.float16).t()
    half.copy_(x.to("vkml"))
    assert torch.equal(half, x.half())
    xd = torch.randn(7, 5, generator=gen, dtype=torch.float64).t()
    dst = torch.empty(5, 7, device="vkml")
    dst.copy_(xd)
    assert torch.equal(dst.cpu(), xd.float())
    dst = torch.empty(5, 7, dtype=torch.complex64, device="vkml")
    dst.copy_(xd)
    assert torch.equal(dst.cpu(), xd.to(torch.complex64))


def test_views_share_storage(gen):
    x = torch.randn(6, 4, generator=gen)
    xv = x.to("vkml")
    ptr = xv.untyped_storage().data_ptr()
    views = [xv.view(4, 6), xv.t(), xv[1:4], xv.narrow(1, 1, 2), xv.reshape(24), xv.unsqueeze(0),
             xv.permute(1, 0), xv.diagonal(), xv.expand(2, 6, 4), xv.view(-1)[::5], xv[2]]
    refs = [x.view(4, 6), x.t(), x[1:4], x.narrow(1, 1, 2), x.reshape(24), x.unsqueeze(0),
            x.permute(1, 0), x.diagonal(), x.expand(2, 6, 4), x.view(-1)[::5], x[2]]
    for v, r in zip(views, refs):
        assert v.untyped_storage().data_ptr() == ptr
        assert v.stride() == r.stride() and v.storage_offset() == r.storage_offset()
        assert torch.equal(v.cpu(), r)
    xv[1:3].fill_(7.0)
    x[1:3] = 7.0
    assert torch.equal(xv.cpu(), x)
    xv.t()[0].zero_()
    x.t()[0] = 0
    assert torch.equal(xv.cpu(), x)


def test_clone_contiguous_and_item(gen):
    x = torch.randn(5, 8, generator=gen)
    xv = x.to("vkml").t()
    assert not xv.is_contiguous()
    c = xv.contiguous()
    assert c.is_contiguous() and torch.equal(c.cpu(), x.t())
    k = xv.clone()
    assert k.stride() == xv.stride() and torch.equal(k.cpu(), x.t())
    k2 = xv.clone(memory_format=torch.contiguous_format)
    assert k2.is_contiguous() and torch.equal(k2.cpu(), x.t())
    assert xv[2, 3].item() == x.t()[2, 3].item()
    assert torch.tensor(5, dtype=torch.int64).to("vkml").item() == 5
    assert torch.tensor(True).to("vkml").item() is True


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_fill_and_zero(dtype, gen):
    x = rand((6, 5), dtype, gen)
    xv = x.to("vkml")
    value = True if dtype == torch.bool else 3
    xv[:, 1::2].fill_(value)
    x[:, 1::2] = value
    assert torch.equal(xv.cpu(), x)
    xv.t()[2].zero_()
    x.t()[2] = 0
    assert torch.equal(xv.cpu(), x)
    full = torch.full((3, 4), value, dtype=dtype, device="vkml")
    assert torch.equal(full.cpu(), torch.full((3, 4), value, dtype=dtype))
    t = torch.tensor(value, dtype=dtype).to("vkml")
    xv.fill_(t)
    assert torch.all(xv.cpu() == t.cpu())
    assert torch.equal(torch.zeros(2, 3, dtype=dtype, device="vkml").cpu(),
                       torch.zeros(2, 3, dtype=dtype))
    assert torch.equal(torch.ones(0, 3, dtype=dtype, device="vkml").cpu(),
                       torch.ones(0, 3, dtype=dtype))


def test_resize_and_set(gen):
    x = torch.randn(6, generator=gen)
    xv = x.to("vkml")
    xv.resize_(20)
    assert xv.shape == (20,) and torch.equal(xv[:6].cpu(), x)
    xv.resize_(2, 3)
    assert torch.equal(xv.cpu(), x.view(2, 3))
    y = torch.empty(0, device="vkml")
    y.set_(xv)
    assert y.untyped_storage().data_ptr() == xv.untyped_storage().data_ptr()
    assert torch.equal(y.cpu(), xv.cpu())
    z = torch.empty(0, device="vkml")
    z.set_(xv.untyped_storage(), 1, (2, 2), (1, 2))
    assert torch.equal(z.cpu(), x[1:].as_strided((2, 2), (1, 2)))
    out = torch.empty(0, device="vkml")
    torch.zeros(3, 3, out=out)
    assert out.shape == (3, 3) and torch.all(out.cpu() == 0)


def test_empty_strided_and_as_strided(gen):
    e = torch.empty_strided((3, 4), (1, 3), device="vkml")
    assert e.stride() == (1, 3)
    x = torch.randn(12, generator=gen)
    xv = x.to("vkml")
    a = xv.as_strided((3, 3), (3, 1), 2)
    assert torch.equal(a.cpu(), x.as_strided((3, 3), (3, 1), 2))


def test_big_transfer_crosses_staging_chunks(gen):
    x = torch.randn(10_000_003, generator=gen)
    assert torch.equal(x.to("vkml").cpu(), x)


def test_copy_between_devices_in_one_process():
    import subprocess
    import sys
    code = """
import torch, torch_vkml
assert torch_vkml.device_count() == 2, torch_vkml.device_count()
x = torch.randn(5, 7)
a = x.to('vkml:0')
b = a.t().to('vkml:1')
assert b.device == torch.device('vkml', 1)
assert torch.equal(b.cpu(), x.t())
wide = torch.float64 if torch_vkml.has_float64_support() else torch.float16
c = torch.empty(7, 5, dtype=wide, device='vkml:1')
c.copy_(a.t())
assert torch.equal(c.cpu(), x.t().to(wide))
torch_vkml.set_device(1)
assert torch.empty(3, device='vkml').device.index == 1
print('ok')
"""
    env = dict(__import__("os").environ, VKML_DEVICE_ORDER="0,0")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]


@pytest.mark.parametrize("dtype", device_dtypes(torch.float16, torch.bfloat16, torch.int8,
                                                 torch.float32, torch.bool, torch.float64))
def test_strided_copy_of_whole_rows(dtype, gen):
    """Permutes that keep the last dim contiguous (attention heads, patch tokens) copy 4-, 8- or
    16-byte units at a time when the row length, strides and addresses allow; every other case,
    an odd row, a misaligned start and a sliced row, must still copy element by element."""
    x = rand((3, 5, 4, 48), dtype, gen)
    v = x.to("vkml")
    cases = [
        lambda t: t.permute(0, 2, 1, 3),           # heads: 96-byte rows in fp16
        lambda t: t.transpose(0, 1)[:, 1:],       # rows from a slice of the outer dim
        lambda t: t[..., 8:40].permute(2, 0, 1, 3),  # a column slice: rows start 16-byte aligned
        lambda t: t[..., 1:].permute(1, 0, 2, 3),  # misaligned start (1 element in)
        lambda t: t[..., :47].transpose(1, 2),     # odd row length
        lambda t: t[..., ::2].transpose(0, 2),     # strided last dim: no widening
    ]
    for k, make in enumerate(cases):
        got = make(v).contiguous().cpu()
        want = make(x).contiguous()
        assert torch.equal(got, want), k
        out = torch.empty_like(want, device="vkml").transpose(0, 1)  # a strided destination
        out.copy_(make(v).transpose(0, 1))
        assert torch.equal(out.cpu(), want.transpose(0, 1)), k
    big = rand((2, 33, 16), dtype, gen)  # 33 rows, more than one workgroup's worth of units
    assert torch.equal(big.to("vkml").transpose(0, 1).contiguous().cpu(), big.transpose(0, 1).contiguous())
