"""The CPU fallback: counted, warned once per op, an error under VKML_FALLBACK=error, and
correct for functional, in-place and out= forms."""

import warnings

import pytest
import torch

import torch_vkml


def test_error_mode_names_the_op(monkeypatch):
    monkeypatch.setenv("VKML_FALLBACK", "error")
    x = torch.rand(4).add(2).to("vkml")
    with pytest.raises(NotImplementedError, match="zeta"):
        torch.special.zeta(x, x)


def test_warn_mode_counts_and_warns_once(fallback, gen):
    a = torch.rand(5, generator=gen) + 2
    b = torch.rand(5, generator=gen) + 1
    av, bv = a.to("vkml"), b.to("vkml")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r1 = torch.special.zeta(av, bv)
        r2 = torch.special.zeta(av, bv)
    ours = [w for w in caught if "has no vkml kernel" in str(w.message)]
    assert len(ours) == 1 and "zeta" in str(ours[0].message)
    assert r1.device.type == "vkml"
    torch.testing.assert_close(r1.cpu(), torch.special.zeta(a, b))
    assert torch.equal(r1.cpu(), r2.cpu())
    assert torch_vkml.fallback_stats() == {"aten::special_zeta.out": 2}  # structured: functional runs .out
    torch_vkml.reset_fallback_stats()
    assert torch_vkml.fallback_stats() == {}


def test_silent_mode_counts_without_warning(monkeypatch, gen):
    monkeypatch.setenv("VKML_FALLBACK", "silent")
    torch_vkml.reset_fallback_stats()
    a = (torch.rand(3, generator=gen) + 2).to("vkml")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.special.zeta(a, a)
    assert not [w for w in caught if "vkml" in str(w.message)]
    assert sum(torch_vkml.fallback_stats().values()) == 1
    torch_vkml.reset_fallback_stats()


def test_in_place_and_out_semantics(fallback, gen):
    x = torch.rand(4, 6, generator=gen) + 0.5
    xv = x.to("vkml")
    view = xv[:, ::2]
    ptr = xv.untyped_storage().data_ptr()
    view.polygamma_(1)
    ref = x.clone()
    ref[:, ::2].polygamma_(1)
    assert xv.untyped_storage().data_ptr() == ptr  # in-place stays in the same storage
    torch.testing.assert_close(xv.cpu(), ref)
    out = torch.empty(4, 6, device="vkml")
    out_ptr = out.data_ptr()
    s = x + 1.5  # zeta(s, q) is finite for s > 1
    torch.special.zeta(s.to("vkml"), torch.full((4, 6), 2.0).to("vkml"), out=out)
    assert out.data_ptr() == out_ptr
    torch.testing.assert_close(out.cpu(), torch.special.zeta(s, torch.full((4, 6), 2.0)))
    assert torch_vkml.fallback_stats()["aten::special_zeta.out"] == 1
