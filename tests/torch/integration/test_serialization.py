"""torch.save / torch.load of vkml tensors and modules, map_location included."""

import io

import torch


def round_trip(obj, **kw):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **kw)


def test_tensor_round_trip(gen):
    x = torch.randn(4, 5, generator=gen)
    xv = x.to("vkml")
    y = round_trip(xv)
    assert y.device.type == "vkml" and torch.equal(y.cpu(), x)
    z = round_trip(xv, map_location="cpu")
    assert z.device.type == "cpu" and torch.equal(z, x)
    w = round_trip(x, map_location="vkml")
    assert w.device.type == "vkml" and torch.equal(w.cpu(), x)
    v = round_trip(xv.t()[1:])  # a view keeps its strides and offset
    assert torch.equal(v.cpu(), x.t()[1:])


def test_module_state_dict_round_trip(gen):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2)).to("vkml")
    sd = round_trip(m.state_dict())
    assert all(t.device.type == "vkml" for t in sd.values())
    m2 = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
    m2.load_state_dict(round_trip(m.state_dict(), map_location="cpu"))
    for (k, a), b in zip(m.state_dict().items(), m2.state_dict().values()):
        assert torch.equal(a.cpu(), b), k
