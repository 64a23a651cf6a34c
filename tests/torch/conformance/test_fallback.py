"""The CPU fallback: counted, warned once per op, an error under VKML_FALLBACK=error, and
correct for functional and out= forms (out= into a strided view included). The op used is
_upsample_bilinear2d_aa (antialiased bilinear resize), which has no vkml kernel yet."""

import warnings

import pytest
import torch
import torch.nn.functional as F

import torch_vkml

OP = "aten::_upsample_bilinear2d_aa.out"  # structured: the functional form runs .out


def resize_aa(x, out=None):
    if out is None:  # through torch.nn.functional, whose C++ warnings reach Python's warnings
        return F.interpolate(x, size=(3, 5), mode="bilinear", antialias=True)
    return torch.ops.aten._upsample_bilinear2d_aa.out(x, [3, 5], False, out=out)


def test_error_mode_names_the_op(vkml_config):
    vkml_config.set("VKML_FALLBACK", "error")
    x = torch.rand(1, 2, 7, 9).to("vkml")
    with pytest.raises(NotImplementedError, match="_upsample_bilinear2d_aa"):
        resize_aa(x)


def test_warn_mode_counts_and_warns_once(fallback, gen):
    a = torch.randn(2, 3, 7, 9, generator=gen)
    av = a.to("vkml")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r1 = resize_aa(av)
        r2 = resize_aa(av)
    ours = [w for w in caught if "has no vkml kernel" in str(w.message)]
    assert len(ours) == 1 and "_upsample_bilinear2d_aa" in str(ours[0].message)
    assert r1.device.type == "vkml"
    torch.testing.assert_close(r1.cpu(), resize_aa(a))
    assert torch.equal(r1.cpu(), r2.cpu())
    assert torch_vkml.fallback_stats() == {OP: 2}
    torch_vkml.reset_fallback_stats()
    assert torch_vkml.fallback_stats() == {}


def test_silent_mode_counts_without_warning(vkml_config, gen):
    vkml_config.set("VKML_FALLBACK", "silent")
    torch_vkml.reset_fallback_stats()
    a = torch.randn(1, 1, 6, 6, generator=gen).to("vkml")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        resize_aa(a)
    assert not [w for w in caught if "vkml" in str(w.message)]
    assert sum(torch_vkml.fallback_stats().values()) == 1
    torch_vkml.reset_fallback_stats()


def test_out_semantics_into_a_strided_view(fallback, gen):
    x = torch.randn(2, 3, 8, 8, generator=gen)
    big = torch.randn(2, 3, 3, 10, generator=gen)
    bigv = big.to("vkml")
    view = bigv[..., ::2]  # (2, 3, 3, 5), not contiguous
    ptr = bigv.untyped_storage().data_ptr()
    resize_aa(x.to("vkml"), out=view)
    assert bigv.untyped_storage().data_ptr() == ptr  # written in place, through the strides
    ref = big.clone()
    resize_aa(x, out=ref[..., ::2])
    torch.testing.assert_close(bigv.cpu(), ref)
    out = torch.empty(2, 3, 3, 5, device="vkml")
    out_ptr = out.data_ptr()
    resize_aa(x.to("vkml"), out=out)
    assert out.data_ptr() == out_ptr
    torch.testing.assert_close(out.cpu(), resize_aa(x))
    assert torch_vkml.fallback_stats()[OP] == 2
