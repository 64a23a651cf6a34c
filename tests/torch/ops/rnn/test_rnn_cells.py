"""The fused recurrent cells (_thnn_fused_lstm_cell / _thnn_fused_gru_cell and their backward),
which at::lstm_cell, at::gru_cell and nn.LSTM / nn.GRU use for vkml tensors: against a float64
reference of the cell equations, through autograd against the CPU's unfused cells, on strided
inputs, without biases, with one of two output gradients, empty and multi-workgroup batches."""

import pytest
import torch

import torch_vkml
from nn_helpers import TOLERANCES, only_native

DTYPES = [torch.float32, torch.float16, torch.bfloat16] + (
    [torch.float64] if torch_vkml.has_float64_support() else [])


def lstm_reference(ig, hg, cx, b_ih, b_hh):
    gates = ig.double() + hg.double()
    if b_ih is not None:
        gates = gates + b_ih.double() + b_hh.double()
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx.double() + i * g
    return o * cy.tanh(), cy, torch.cat([i, f, g, o], 1)


def gru_reference(ig, hg, hx, b_ih, b_hh):
    ig, hg, hx = ig.double(), hg.double(), hx.double()
    if b_ih is not None:
        ig, hg = ig + b_ih.double(), hg + b_hh.double()
    ir, iz, in_ = ig.chunk(3, 1)
    hr, hz, hn = hg.chunk(3, 1)
    r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    return n + z * (hx - n)


def strided(shape, dtype, gen, layout):
    """A random tensor of `shape` on vkml: contiguous, transposed storage or a column slice."""
    rows, cols = shape
    if layout == "transposed":
        t = torch.randn(cols, rows, generator=gen, dtype=torch.float64).to(dtype).to("vkml").t()
    elif layout == "sliced":
        t = torch.randn(rows, cols + 5, generator=gen, dtype=torch.float64).to(dtype).to("vkml")
        t = t[:, 2:cols + 2]
    else:
        t = torch.randn(rows, cols, generator=gen, dtype=torch.float64).to(dtype).to("vkml")
    assert t.shape == shape
    return t


def close(got, ref, dtype, scale=1.0):
    rtol, atol = TOLERANCES[dtype]
    torch.testing.assert_close(got.cpu().double(), ref.double(), rtol=rtol * scale,
                               atol=atol * scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("bias", [True, False])
def test_fused_lstm_cell_forward(dtype, layout, bias, gen, fallback):
    batch, hidden = 37, 70  # 2,590 units: several workgroups
    ig = strided((batch, 4 * hidden), dtype, gen, layout)
    hg = strided((batch, 4 * hidden), dtype, gen, "contiguous")
    cx = strided((batch, hidden), dtype, gen, layout)
    b_ih = torch.randn(4 * hidden, generator=gen).to(dtype).to("vkml") if bias else None
    b_hh = torch.randn(4 * hidden, generator=gen).to(dtype).to("vkml")[::1] if bias else None
    with only_native():
        hy, cy, ws = torch.ops.aten._thnn_fused_lstm_cell(ig, hg, cx, b_ih, b_hh)
    ref_hy, ref_cy, ref_ws = lstm_reference(ig.cpu(), hg.cpu(), cx.cpu(),
                                            b_ih.cpu() if bias else None,
                                            b_hh.cpu() if bias else None)
    assert hy.dtype == cy.dtype == ws.dtype == dtype
    # Bias sums of four rounded inputs: a few units of the dtype's tolerance.
    close(hy, ref_hy, dtype, 4)
    close(cy, ref_cy, dtype, 4)
    close(ws, ref_ws, dtype, 4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("bias", [True, False])
def test_fused_gru_cell_forward(dtype, layout, bias, gen, fallback):
    batch, hidden = 41, 65
    ig = strided((batch, 3 * hidden), dtype, gen, layout)
    hg = strided((batch, 3 * hidden), dtype, gen, "sliced")
    hx = strided((batch, hidden), dtype, gen, layout)
    b_ih = torch.randn(3 * hidden, generator=gen).to(dtype).to("vkml") if bias else None
    b_hh = torch.randn(3 * hidden, generator=gen).to(dtype).to("vkml") if bias else None
    with only_native():
        hy, ws = torch.ops.aten._thnn_fused_gru_cell(ig, hg, hx, b_ih, b_hh)
    ref = gru_reference(ig.cpu(), hg.cpu(), hx.cpu(), b_ih.cpu() if bias else None,
                        b_hh.cpu() if bias else None)
    assert hy.dtype == dtype and ws.shape == (batch, 5 * hidden)
    close(hy, ref, dtype, 4)


@pytest.mark.parametrize("cell", ["lstm", "gru"])
@pytest.mark.parametrize("dtype", [torch.float32] + DTYPES[3:])
def test_cells_backward_match_cpu_autograd(cell, dtype, gen, fallback):
    """Gradients of inputs, states and every weight through at::lstm_cell / gru_cell (the fused
    kernels and their backward on vkml, the unfused composite on the CPU)."""
    batch, features, hidden = 300, 5, 3  # 900 units
    x = torch.randn(batch, features, generator=gen, dtype=dtype)
    h = torch.randn(batch, hidden, generator=gen, dtype=dtype)
    c = torch.randn(batch, hidden, generator=gen, dtype=dtype)
    gates = 4 if cell == "lstm" else 3
    w_ih = torch.randn(gates * hidden, features, generator=gen, dtype=dtype)
    w_hh = torch.randn(gates * hidden, hidden, generator=gen, dtype=dtype)
    b_ih = torch.randn(gates * hidden, generator=gen, dtype=dtype)
    b_hh = torch.randn(gates * hidden, generator=gen, dtype=dtype)
    leaves = [x, h, c, w_ih, w_hh, b_ih, b_hh]

    def run(device):
        ts = [t.to(device).requires_grad_() for t in leaves]
        x_, h_, c_, wi, wh, bi, bh = ts
        if cell == "lstm":
            hy, cy = torch.lstm_cell(x_, (h_, c_), wi, wh, bi, bh)
            loss = (hy * torch.linspace(-1, 1, hidden, device=device, dtype=dtype)).sum()
            loss = loss + (cy * cy).sum() * 0.5
        else:
            hy = torch.gru_cell(x_, h_, wi, wh, bi, bh)
            loss = (hy * torch.linspace(-1, 1, hidden, device=device, dtype=dtype)).sum()
        loss.backward()
        return [t.grad for t in ts]

    with only_native():
        got = run("vkml")
    ref = run("cpu")
    for name, g, r in zip(["x", "h", "c", "w_ih", "w_hh", "b_ih", "b_hh"], got, ref):
        if cell == "gru" and name == "c":
            assert g is None and r is None
            continue
        rtol = 1e-4 if dtype == torch.float32 else 1e-9
        torch.testing.assert_close(g.cpu(), r, rtol=rtol, atol=rtol, msg=lambda m: f"{name}: {m}")


def test_lstm_backward_with_one_output_gradient(gen, fallback):
    """Only cy (or only hy) feeds the loss: the missing output gradient counts as zero."""
    ig = torch.randn(6, 8, generator=gen).to("vkml").requires_grad_()
    hg = torch.randn(6, 8, generator=gen).to("vkml")
    cx = torch.randn(6, 2, generator=gen).to("vkml").requires_grad_()
    ref_ig = ig.detach().cpu().double().requires_grad_()
    ref_cx = cx.detach().cpu().double().requires_grad_()
    for pick in (1, 0):
        with only_native():
            out = torch.ops.aten._thnn_fused_lstm_cell(ig, hg, cx)[pick]
            (out * out).sum().backward()
        ref = lstm_reference(ref_ig, hg.cpu(), ref_cx, None, None)[pick]
        (ref * ref).sum().backward()
        close(ig.grad, ref_ig.grad, torch.float32, 4)
        close(cx.grad, ref_cx.grad, torch.float32, 4)
        for t in (ig, cx, ref_ig, ref_cx):
            t.grad = None


def test_lstm_and_gru_layers_are_native(gen, fallback):
    lstm = torch.nn.LSTM(4, 6, num_layers=2, batch_first=True)
    gru = torch.nn.GRU(4, 6, bidirectional=True)
    x = torch.randn(3, 5, 4, generator=gen)
    with only_native():
        got_l = lstm.to("vkml")(x.to("vkml"))[0].cpu()
        got_g = gru.to("vkml")(x.to("vkml"))[0].cpu()
    close(got_l, lstm.cpu()(x)[0], torch.float32, 4)
    close(got_g, gru.cpu()(x)[0], torch.float32, 4)


def test_empty_batch_and_bad_shapes(fallback):
    ig = torch.empty(0, 8, device="vkml")
    with only_native():
        hy, cy, ws = torch.ops.aten._thnn_fused_lstm_cell(ig, ig, torch.empty(0, 2, device="vkml"))
    assert hy.shape == cy.shape == (0, 2) and ws.shape == (0, 8)
    with pytest.raises(RuntimeError, match="expected gates"):
        torch.ops.aten._thnn_fused_lstm_cell(torch.zeros(3, 7, device="vkml"),
                                    torch.zeros(3, 7, device="vkml"), torch.zeros(3, 2, device="vkml"))
    with pytest.raises(RuntimeError, match="bias"):
        torch.ops.aten._thnn_fused_gru_cell(torch.zeros(3, 6, device="vkml"), torch.zeros(3, 6, device="vkml"),
                                   torch.zeros(3, 2, device="vkml"), torch.zeros(5, device="vkml"),
                                   torch.zeros(6, device="vkml"))
    with pytest.raises(RuntimeError, match="expected"):
        torch.ops.aten._thnn_fused_gru_cell(torch.zeros(3, 6, device="vkml"), torch.zeros(3, 6, device="vkml"),
                                   torch.zeros(3, 2))  # hx on the CPU


def test_module_to_keeps_tied_parameters():
    """Module.to("vkml") moves a shared parameter once and keeps it shared (as on CUDA), so tied
    embeddings stay tied; and back to the CPU."""
    a, b = torch.nn.Linear(3, 3), torch.nn.Linear(3, 3)
    b.weight = a.weight
    pair = torch.nn.ModuleList([a, b]).to("vkml")
    assert pair[0].weight is pair[1].weight and pair[0].weight.device.type == "vkml"
    assert isinstance(pair[0].weight, torch.nn.Parameter)
    pair.to("cpu")
    assert pair[0].weight is pair[1].weight and pair[0].weight.device.type == "cpu"
