"""Complex matrix products on vkml against a complex128 CPU reference: mm, addmm, bmm, baddbmm,
addbmm, mv, addmv, dot, vdot, addr (functional, in-place, out=) with transposed, sliced,
broadcast, conjugated and negated views, complex and real alpha/beta; matmul over ranks, linear,
tensordot, inner, vecdot and @ without a CPU fallback; autograd; bad-input errors."""

import pytest
import torch
import torch.nn.functional as F

import torch_vkml

# complex128 runs where the device has fp64 arithmetic.
DTYPES = [torch.complex64] + ([torch.complex128] if torch_vkml.has_float64_support() else [])
TOL = {torch.complex64: 1e-4, torch.complex128: 1e-10}


def crand(*shape, dtype=torch.complex64, gen=None):
    return torch.randn(*shape, generator=gen, dtype=torch.complex128).to(dtype)


def dev(t):
    return t.to("vkml")


def dev_view(t):
    """The same view (sizes, strides, offset) of a vkml copy of t's base tensor."""
    base = t if t._base is None else t._base
    return dev(base.contiguous()).as_strided(t.shape, t.stride(), t.storage_offset())


def check(got, ref, dtype):
    """got (vkml) vs ref (complex128 CPU): worst error relative to the result's magnitude."""
    assert got.device.type == "vkml"
    assert got.dtype == dtype
    got = got.cpu().resolve_conj().resolve_neg().to(torch.complex128)
    ref = ref.resolve_conj().resolve_neg().to(torch.complex128)
    assert got.shape == ref.shape
    if ref.numel() == 0:
        return
    scale = max(ref.abs().max().item(), 1e-6)
    err = (got - ref).abs().max().item() / scale
    assert err <= TOL[dtype], f"relative error {err}"


def r(t):
    return t.to(torch.complex128)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "m,k,n", [(1, 1, 1), (7, 3, 5), (33, 17, 65), (0, 3, 4), (3, 0, 4), (3, 4, 0), (70, 130, 9)]
)
def test_mm_shapes(dtype, m, k, n, gen):
    a, b = crand(m, k, dtype=dtype, gen=gen), crand(k, n, dtype=dtype, gen=gen)
    check(torch.mm(dev(a), dev(b)), r(a) @ r(b), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_mm_views_conj_and_neg_bits(dtype, gen):
    base_a, base_b = crand(40, 30, dtype=dtype, gen=gen), crand(22, 60, dtype=dtype, gen=gen)
    cases = [
        (base_a.t()[:, :22], base_b),  # transposed A
        (base_a[::2, ::2][:, :11], base_b[::2, ::3]),  # neither stride is 1
        (base_a[:1, :22].expand(5, 22), base_b),  # broadcast rows (stride 0)
    ]
    for a, b in cases:
        da, db = dev_view(a), dev_view(b)
        assert da.stride() == a.stride() and db.stride() == b.stride()
        check(torch.mm(da, db), r(a) @ r(b), dtype)
        # Lazy conjugation and negation: the bits are read, never materialised by the caller.
        check(torch.mm(da.conj(), db), r(a).conj() @ r(b), dtype)
        check(torch.mm(da, db.conj()), r(a) @ r(b).conj(), dtype)
        check(torch.mm(torch._neg_view(da), db.conj()), -r(a) @ r(b).conj(), dtype)
        check(torch.mm(torch._neg_view(da.conj()), db), -r(a).conj() @ r(b), dtype)
    a, b = crand(6, 9, dtype=dtype, gen=gen), crand(6, 4, dtype=dtype, gen=gen)
    check(torch.mm(dev(a).mH, dev(b)), r(a).mH @ r(b), dtype)  # mm's backward shape


@pytest.mark.parametrize("dtype", DTYPES)
def test_mm_out_and_aliasing(dtype, gen):
    a, b = crand(6, 6, dtype=dtype, gen=gen), crand(6, 6, dtype=dtype, gen=gen)
    da, db = dev(a), dev(b)
    out = torch.empty(0, device="vkml", dtype=dtype)
    torch.mm(da, db, out=out)
    check(out, r(a) @ r(b), dtype)
    torch.mm(da, db, out=da)  # out is an input: the product still reads the old values
    check(da, r(a) @ r(b), dtype)
    o = torch.empty(6, 6, device="vkml", dtype=dtype).t()  # column-major out
    torch.mm(dev(a), db, out=o)
    check(o, r(a) @ r(b), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alpha,beta", [(1, 0), (2.5, -0.5), (1 + 2j, 0.5 - 1j), (0.5j, 0), (1, 1j)])
def test_addmm_alpha_beta(dtype, alpha, beta, gen):
    s, a, b = (crand(7, 5, dtype=dtype, gen=gen), crand(7, 9, dtype=dtype, gen=gen),
               crand(9, 5, dtype=dtype, gen=gen))
    ref = beta * r(s) + alpha * (r(a) @ r(b))
    check(torch.addmm(dev(s), dev(a), dev(b), beta=beta, alpha=alpha), ref, dtype)
    check(torch.addmm(dev(s).conj(), dev(a), dev(b), beta=beta, alpha=alpha),
          beta * r(s).conj() + alpha * (r(a) @ r(b)), dtype)
    row = s[:1]  # broadcast self
    check(torch.addmm(dev(row), dev(a), dev(b), beta=beta, alpha=alpha),
          beta * r(row) + alpha * (r(a) @ r(b)), dtype)
    d = dev(s)
    d.addmm_(dev(a), dev(b), beta=beta, alpha=alpha)
    check(d, ref, dtype)
    out = torch.empty(0, device="vkml", dtype=dtype)
    torch.addmm(dev(s), dev(a), dev(b), beta=beta, alpha=alpha, out=out)
    check(out, ref, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_batched_products(dtype, gen):
    b1, b2 = crand(3, 7, 5, dtype=dtype, gen=gen), crand(3, 5, 6, dtype=dtype, gen=gen)
    s = crand(3, 7, 6, dtype=dtype, gen=gen)
    check(torch.bmm(dev(b1), dev(b2)), r(b1) @ r(b2), dtype)
    check(torch.bmm(dev(b1).conj(), dev(b2).transpose(1, 2).contiguous().transpose(1, 2)),
          r(b1).conj() @ r(b2), dtype)
    check(torch.baddbmm(dev(s), dev(b1), dev(b2), beta=0.5, alpha=2 - 1j),
          0.5 * r(s) + (2 - 1j) * (r(b1) @ r(b2)), dtype)
    d = dev(s)
    d.baddbmm_(dev(b1), dev(b2), beta=-1)
    check(d, -r(s) + r(b1) @ r(b2), dtype)
    s2 = crand(7, 6, dtype=dtype, gen=gen)
    ref = 0.5 * r(s2) + 2 * (r(b1) @ r(b2)).sum(0)
    check(torch.addbmm(dev(s2), dev(b1), dev(b2), beta=0.5, alpha=2), ref, dtype)
    d = dev(s2)
    d.addbmm_(dev(b1), dev(b2), beta=0.5, alpha=2)
    check(d, ref, dtype)
    check(torch.addbmm(dev(s2), dev(b1[:0]), dev(b2[:0]), beta=3j), 3j * r(s2), dtype)
    check(torch.bmm(dev(b1[:, :0]), dev(b2)), r(b1[:, :0]) @ r(b2), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_vector_products(dtype, gen):
    mat, vec = crand(37, 23, dtype=dtype, gen=gen), crand(23, dtype=dtype, gen=gen)
    ref = r(mat) @ r(vec)
    check(torch.mv(dev(mat), dev(vec)), ref, dtype)
    check(torch.mv(dev(mat.t().contiguous()).t(), dev(vec)), ref, dtype)  # column-major
    check(torch.mv(dev(mat).conj(), dev(vec)), r(mat).conj() @ r(vec), dtype)
    s = crand(37, dtype=dtype, gen=gen)
    check(torch.addmv(dev(s), dev(mat), dev(vec), beta=2, alpha=-1j), 2 * r(s) - 1j * ref, dtype)
    check(torch.addmv(dev(s[:1]), dev(mat), dev(vec)), r(s[:1]) + ref, dtype)
    d = dev(s)
    d.addmv_(dev(mat), dev(vec))
    check(d, r(s) + ref, dtype)
    x, y = crand(1000, dtype=dtype, gen=gen), crand(2000, dtype=dtype, gen=gen)[::2]  # y strided
    check(torch.dot(dev(x), dev_view(y)), r(x) @ r(y), dtype)
    check(torch.vdot(dev(x), dev_view(y)), torch.vdot(r(x), r(y)), dtype)
    check(torch.vdot(dev(x).conj(), dev(y)), torch.vdot(r(x).conj(), r(y)), dtype)
    check(torch.vdot(dev(x), dev(y).conj()), torch.vdot(r(x), r(y).conj()), dtype)
    check(torch.dot(dev(x).conj(), dev(y)), r(x).conj() @ r(y), dtype)
    o = torch.empty((), device="vkml", dtype=dtype)
    torch.vdot(dev(x), dev(y), out=o)
    check(o, torch.vdot(r(x), r(y)), dtype)
    check(torch.dot(dev(x[:0]), dev(y[:0])), torch.zeros((), dtype=torch.complex128), dtype)
    v1, v2 = crand(8, dtype=dtype, gen=gen), crand(5, dtype=dtype, gen=gen)
    a = crand(8, 5, dtype=dtype, gen=gen)
    outer = torch.outer(r(v1), r(v2))
    check(torch.addr(dev(a), dev(v1), dev(v2), beta=0.5, alpha=3j), 0.5 * r(a) + 3j * outer, dtype)
    d = dev(a)
    d.addr_(dev(v1), dev(v2).conj())
    check(d, r(a) + torch.outer(r(v1), r(v2).conj()), dtype)


@pytest.mark.parametrize(
    "sa,sb",
    [
        ((5,), (5,)),
        ((4, 5), (5,)),
        ((5,), (5, 3)),
        ((4, 5), (5, 3)),
        ((2, 4, 5), (5,)),
        ((2, 4, 5), (2, 5, 3)),
        ((2, 4, 5), (5, 3)),
        ((3, 1, 4, 5), (2, 5, 3)),
    ],
)
def test_matmul_every_rank_runs_natively(sa, sb, gen, fallback):
    a, b = crand(*sa, gen=gen), crand(*sb, gen=gen)
    check(torch.matmul(dev(a), dev(b)), r(a) @ r(b), torch.complex64)
    check(dev(b).__rmatmul__(dev(a)), r(a) @ r(b), torch.complex64)
    assert torch_vkml.fallback_stats() == {}


def test_composite_products_run_natively(gen, fallback):
    w, bias = crand(6, 10, gen=gen), crand(6, gen=gen)
    x = crand(3, 4, 10, gen=gen)
    check(F.linear(dev(x), dev(w), dev(bias)), F.linear(r(x), r(w), r(bias)), torch.complex64)
    a, b = crand(3, 4, 5, gen=gen), crand(4, 5, 2, gen=gen)
    check(torch.tensordot(dev(a), dev(b), dims=2), torch.tensordot(r(a), r(b), dims=2),
          torch.complex64)
    u, v = crand(3, 7, gen=gen), crand(2, 7, gen=gen)
    check(torch.inner(dev(u), dev(v)), torch.inner(r(u), r(v)), torch.complex64)
    check(torch.linalg.vecdot(dev(u), dev(u[:1])), torch.linalg.vecdot(r(u), r(u[:1])),
          torch.complex64)
    m = crand(4, 4, gen=gen)
    check(dev(m).__rmatmul__(dev(u[:, :4])), r(u[:, :4]) @ r(m), torch.complex64)
    assert torch_vkml.fallback_stats() == {}


def test_autograd_matches_cpu(gen, fallback):
    a, b = crand(7, 9, gen=gen), crand(9, 5, gen=gen)
    ca, cb = r(a).requires_grad_(), r(b).requires_grad_()
    va, vb = dev(a).requires_grad_(), dev(b).requires_grad_()
    out_cpu, out_dev = torch.mm(ca, cb), torch.mm(va, vb)
    g = crand(7, 5, gen=gen)
    out_cpu.backward(r(g))
    out_dev.backward(dev(g))
    check(va.grad, ca.grad, torch.complex64)
    check(vb.grad, cb.grad, torch.complex64)
    assert torch_vkml.fallback_stats() == {}


def test_bad_inputs_raise_like_cpu():
    a = crand(2, 3)
    cases = [
        (torch.mm, (a, torch.randn(3, 2))),  # complex and real
        (torch.mm, (a, crand(4, 2))),  # shapes
        (torch.dot, (crand(3), torch.randn(3))),
        (torch.vdot, (crand(3), crand(4))),
        (torch.mv, (a, torch.randn(3))),
        (torch.bmm, (crand(2, 2, 3), torch.randn(2, 3, 2))),
    ]
    if torch.complex128 in DTYPES:  # complex64 with complex128
        cases += [
            (torch.mm, (a, crand(3, 2, dtype=torch.complex128))),
            (torch.bmm, (crand(2, 2, 3), crand(2, 3, 2, dtype=torch.complex128))),
        ]
    for fn, args in cases:
        with pytest.raises(RuntimeError) as cpu_err:
            fn(*args)
        with pytest.raises(cpu_err.type):
            fn(*[dev(t) for t in args])


def test_addmm_residual_adds_the_bias(gen):
    """torch.compile's fused residual + bias + mat1 @ mat2, on complex operands."""
    x, w = crand(3, 4, gen=gen), crand(4, 5, gen=gen)
    res, bias = crand(3, 5, gen=gen), crand(5, gen=gen)
    got = torch.ops.vkml_inductor.addmm_residual(dev(res), dev(bias), dev(x), dev(w))
    check(got, r(res) + r(bias) + r(x) @ r(w), torch.complex64)
