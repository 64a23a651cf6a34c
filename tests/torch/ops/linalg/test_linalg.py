"""Linear algebra on vkml against the CPU in float64: LU (factor, solve, unpack, linalg.lu),
solve/inv, det/slogdet, Cholesky (factor, solve, inverse, errors), triangular solves, Householder
QR (geqrf, householder_product, ormqr, qr modes), eigh/eigvalsh and SVD (values exactly, vectors
up to sign). Batched, broadcast, transposed and sliced inputs and outputs, zero-size batches,
n = 0 and 1, odd n, singular and non-positive-definite inputs, and gradients through PyTorch's
composite backward formulas."""

import pytest
import torch
from nn_helpers import HAS_FLOAT64, WIDE_FLOAT, assert_close_to_ref, only_native

DTYPES = [torch.float32] + ([torch.float64] if HAS_FLOAT64 else [])
SHAPES = [(5, 5), (3, 7, 7), (2, 1, 33, 33), (1, 1), (0, 4, 4), (2, 0, 0)]


def well_conditioned(shape, dtype, gen):
    """Random matrices with negatives, shifted away from singularity."""
    a = torch.randn(shape, generator=gen, dtype=torch.float64)
    if shape[-1] == shape[-2] and shape[-1] > 0:
        a = a + shape[-1] * torch.eye(shape[-1], dtype=torch.float64) * 0.5
    return a.to(dtype)


def spd(shape, dtype, gen):
    a = torch.randn(shape, generator=gen, dtype=torch.float64)
    return (a @ a.mT + shape[-1] * torch.eye(shape[-1], dtype=torch.float64)).to(dtype)


def vk(t):
    return t.to("vkml")


def check(got, ref, scale=50.0):
    for g, r in zip(
        got if isinstance(got, tuple) else (got,),
        ref if isinstance(ref, tuple) else (ref,),
        strict=True,
    ):
        if g.dtype in (torch.int32, torch.int64):
            assert torch.equal(g.cpu(), r), (g, r)
        else:
            assert_close_to_ref(g, r, scale=scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_lu_family(dtype, shape, gen, fallback):
    a = well_conditioned(shape, dtype, gen)
    b = torch.randn(*shape[:-1], 3, generator=gen, dtype=torch.float64).to(dtype)
    with only_native():
        LU, piv = torch.linalg.lu_factor(vk(a))
        P, L, U = torch.linalg.lu(vk(a))
        x = torch.linalg.lu_solve(LU, piv, vk(b))
        xa = torch.linalg.lu_solve(LU, piv, vk(b), adjoint=True)
        xr = torch.linalg.lu_solve(LU, piv, vk(b).mT, left=False)
        unpacked = torch.lu_unpack(LU, piv)
    LU0, piv0 = torch.linalg.lu_factor(a.double())
    assert torch.equal(piv.cpu(), piv0)  # same pivots as LAPACK on these inputs
    check(LU, LU0)
    check((P, L, U), torch.linalg.lu(a.double()))
    check(unpacked, torch.lu_unpack(LU0, piv0))
    check(x, torch.linalg.solve(a.double(), b.double()))
    check(xa, torch.linalg.solve(a.double().mT, b.double()))
    check(xr, torch.linalg.solve(a.double(), b.double().mT, left=False))


@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_rectangular_and_strided_out(dtype, gen, fallback):
    for m, n in [(7, 4), (3, 8)]:
        a = torch.randn(2, n, m, generator=gen, dtype=torch.float64).to(dtype).mT  # transposed
        LU = torch.empty(2, m, n, dtype=dtype, device="vkml")
        piv = torch.empty(2, min(m, n), dtype=torch.int32, device="vkml")
        info = torch.empty(2, dtype=torch.int32, device="vkml")
        with only_native():
            torch.linalg.lu_factor_ex(vk(a), out=(LU, piv, info))
        LU0, piv0, info0 = torch.linalg.lu_factor_ex(a.double())
        check((LU, piv, info), (LU0, piv0, info0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_inv_det_slogdet(dtype, gen, fallback):
    a = well_conditioned((3, 6, 6), dtype, gen)
    b = torch.randn(6, 2, generator=gen, dtype=torch.float64).to(dtype)  # broadcast over batch
    v = torch.randn(3, 6, generator=gen, dtype=torch.float64).to(dtype)  # vector right side
    with only_native():
        got = (
            torch.linalg.solve(vk(a), vk(b)),
            torch.linalg.solve(vk(a), vk(v)),
            torch.linalg.solve(vk(a), vk(b).mT, left=False),
            torch.linalg.inv(vk(a)),
            torch.linalg.det(vk(a)),
            torch.linalg.det(vk(a).mT),
            *torch.linalg.slogdet(vk(a)),
        )
    a64, b64, v64 = a.double(), b.double(), v.double()
    ref = (
        torch.linalg.solve(a64, b64),
        torch.linalg.solve(a64, v64),
        torch.linalg.solve(a64, b64.mT, left=False),
        torch.linalg.inv(a64),
        torch.linalg.det(a64),
        torch.linalg.det(a64.mT),
        *torch.linalg.slogdet(a64),
    )
    check(got, ref)


def test_singular_inputs_set_info_and_raise(fallback):
    a = torch.randn(3, 4, 4, dtype=WIDE_FLOAT)
    a[1, :, 2] = 0  # singular: third column zero
    with only_native():
        inv, info = torch.linalg.inv_ex(vk(a))
        _, _, lu_info = torch.linalg.lu_factor_ex(vk(a))
        det = torch.linalg.det(vk(a))
        sign, logabs = torch.linalg.slogdet(vk(a))
    assert info.cpu().tolist() == torch.linalg.inv_ex(a).info.tolist() == [0, 3, 0]
    assert lu_info.cpu().tolist() == [0, 3, 0]
    assert det.cpu()[1] == 0 and sign.cpu()[1] == 0 and logabs.cpu()[1] == float("-inf")
    with pytest.raises(torch.linalg.LinAlgError, match="Batch element 1"):
        torch.linalg.inv(vk(a))
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.solve(vk(a[1]), vk(a[0]))
    # NaN never passes silently
    nan = torch.full((3, 3), float("nan"), dtype=WIDE_FLOAT)
    assert torch.isnan(torch.linalg.det(vk(nan)).cpu())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (2, 3, 9, 9), (1, 1), (0, 3, 3), (0, 0)])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_family(dtype, shape, upper, gen, fallback):
    s = spd(shape, dtype, gen)
    b = torch.randn(*shape[:-1], 2, generator=gen, dtype=torch.float64).to(dtype)
    with only_native():
        L = torch.linalg.cholesky(vk(s), upper=upper)
        x = torch.cholesky_solve(vk(b), L, upper=upper)
        inv = torch.cholesky_inverse(L, upper=upper)
        legacy = torch.cholesky(vk(s), upper=upper)
    L0 = torch.linalg.cholesky(s.double(), upper=upper)
    check(L, L0)
    check(legacy, L0)
    check(x, torch.cholesky_solve(b.double(), L0, upper=upper))
    check(inv, torch.cholesky_inverse(L0, upper=upper))


def test_cholesky_not_positive_definite(fallback):
    s = spd((3, 5, 5), WIDE_FLOAT, torch.Generator().manual_seed(3))
    s[2, 3, 3] = -100.0
    with only_native():
        L, info = torch.linalg.cholesky_ex(vk(s))
    assert info.cpu().tolist() == torch.linalg.cholesky_ex(s).info.tolist() == [0, 0, 4]
    with pytest.raises(torch.linalg.LinAlgError, match="order 4"):
        torch.linalg.cholesky(vk(s))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_solve_triangular(dtype, left, upper, unit, gen, fallback):
    a = well_conditioned((2, 1, 9, 9), dtype, gen).mT  # batch broadcast, transposed storage
    b = torch.randn(2, 3, 9, 4, generator=gen, dtype=torch.float64).to(dtype)
    b = b if left else b.mT
    out = torch.empty(2, 3, 4, 9, dtype=dtype, device="vkml").mT if left else None
    with only_native():
        got = torch.linalg.solve_triangular(
            vk(a), vk(b), upper=upper, left=left, unitriangular=unit, out=out
        )
        x, m = torch.triangular_solve(
            vk(b) if left else vk(b).mT, vk(a), upper=upper, transpose=not left, unitriangular=unit
        )
    ref = torch.linalg.solve_triangular(
        a.double(), b.double(), upper=upper, left=left, unitriangular=unit
    )
    check(got, ref)
    x0, m0 = torch.triangular_solve(
        b.double() if left else b.double().mT,
        a.double(),
        upper=upper,
        transpose=not left,
        unitriangular=unit,
    )
    check((x, m), (x0, m0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 7), (2, 5, 5), (1, 1), (0, 3, 2)])
def test_householder_qr(dtype, shape, gen, fallback):
    a = torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)
    a64 = a.double()
    with only_native():
        outs = [torch.linalg.qr(vk(a), mode=mode) for mode in ("reduced", "complete", "r")]
        qr, tau = torch.geqrf(vk(a))
    for (q, r), mode in zip(outs, ("reduced", "complete", "r"), strict=True):
        q0, r0 = torch.linalg.qr(a64, mode=mode)
        check((q, r), (q0, r0))  # LAPACK's Householder signs
    qr0, tau0 = torch.geqrf(a64)
    check((qr, tau), (qr0, tau0))
    if shape[-2] >= shape[-1]:
        c = torch.randn(*shape[:-1], 3, generator=gen, dtype=torch.float64)
        with only_native():
            hp = torch.linalg.householder_product(qr, tau)
            om = torch.ormqr(qr, tau, vk(c.to(dtype)), left=True, transpose=True)
            omr = torch.ormqr(qr, tau, vk(c.to(dtype)).mT, left=False, transpose=False)
        check(hp, torch.linalg.householder_product(qr0, tau0))
        check(om, torch.ormqr(qr0, tau0, c, left=True, transpose=True))
        check(omr, torch.ormqr(qr0, tau0, c.mT, left=False, transpose=False))


def sign_fixed(v):
    """Columns with their largest-magnitude entry made positive (vectors are unique up to sign)."""
    idx = v.abs().argmax(dim=-2, keepdim=True)
    return v * torch.gather(v, -2, idx).sign()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (3, 8, 8), (1, 1), (0, 4, 4), (2, 17, 17)])
def test_eigh(dtype, shape, gen, fallback):
    a = torch.randn(shape, generator=gen, dtype=torch.float64)
    s = (a + a.mT).to(dtype)
    with only_native():
        w, v = torch.linalg.eigh(vk(s))
        wu = torch.linalg.eigvalsh(vk(a.to(dtype)), UPLO="U")
    w0, v0 = torch.linalg.eigh(s.double())
    check(w, w0)
    check(wu, torch.linalg.eigvalsh(a, UPLO="U"))
    check(sign_fixed(v.cpu()).to("vkml"), sign_fixed(v0), scale=500)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 4), (2, 3, 7), (5, 5), (1, 1), (0, 3, 2), (2, 9, 1)])
@pytest.mark.parametrize("full", [False, True])
def test_svd(dtype, shape, full, gen, fallback):
    a = torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)
    with only_native():
        u, s, vh = torch.linalg.svd(vk(a), full_matrices=full)
        sv = torch.linalg.svdvals(vk(a))
    u0, s0, vh0 = torch.linalg.svd(a.double(), full_matrices=full)
    assert u.shape == u0.shape and vh.shape == vh0.shape
    check((s, sv), (s0, s0))
    k = min(shape[-2:])
    uc, vc = u.cpu().double(), vh.cpu().double()
    for gram in (uc.mT @ uc, vc @ vc.mT):  # orthonormal columns / rows
        eye = torch.eye(gram.shape[-1], dtype=torch.float64).expand_as(gram)
        torch.testing.assert_close(gram, eye, atol=1e-5, rtol=0)
    rebuilt = uc[..., :k] * s.cpu().double().unsqueeze(-2) @ vc[..., :k, :]
    torch.testing.assert_close(rebuilt, a.double(), atol=1e-5, rtol=1e-5)


def test_gradients_match_cpu(gen, fallback):
    """Backward formulas (composite in PyTorch) through the native kernels, in the widest float
    the device has, against float64 on the CPU from the same inputs."""
    a = well_conditioned((2, 5, 5), WIDE_FLOAT, gen)
    b = torch.randn(2, 5, 3, generator=gen, dtype=WIDE_FLOAT)
    s = spd((5, 5), WIDE_FLOAT, gen)
    fns = [
        lambda a, b, s: torch.linalg.solve(a, b),
        lambda a, b, s: torch.linalg.inv(a),
        lambda a, b, s: torch.linalg.det(a),
        lambda a, b, s: torch.linalg.slogdet(a)[1],
        lambda a, b, s: torch.linalg.cholesky(s),
        lambda a, b, s: torch.linalg.solve_triangular(a.triu(), b, upper=True),
        lambda a, b, s: torch.linalg.qr(a)[0] + torch.linalg.qr(a)[1],
        lambda a, b, s: torch.linalg.eigvalsh(s),
        lambda a, b, s: torch.linalg.svdvals(a),
        lambda a, b, s: torch.linalg.lu_factor(a)[0],
    ]
    for fn in fns:
        ins = [t.double().requires_grad_() for t in (a, b, s)]
        ref = fn(*ins)
        g = torch.randn(ref.shape, generator=gen, dtype=torch.float64)
        rg = torch.autograd.grad(ref, ins, g, allow_unused=True)
        vins = [vk(t).requires_grad_() for t in (a, b, s)]
        with only_native():
            got = fn(*vins)
            vg = torch.autograd.grad(got, vins, vk(g.to(WIDE_FLOAT)), allow_unused=True)
        check(got, ref.detach())
        for x, y in zip(vg, rg, strict=True):
            assert (x is None) == (y is None)
            if x is not None:
                assert_close_to_ref(x, y, scale=1e3)


def test_half_is_rejected_like_the_cpu():
    a = torch.eye(3, dtype=torch.float16)
    with pytest.raises(RuntimeError) as cpu_err:
        torch.linalg.inv(a)
    with pytest.raises(type(cpu_err.value)):
        torch.linalg.inv(vk(a))


@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize(
    "shapes", [((6, 3), (6, 2)), ((4, 4), (4, 1)), ((2, 5), (2, 3)), ((2, 5, 3), (2, 5))]
)
def test_lstsq_drivers(driver, shapes, gen, fallback):
    a = torch.randn(shapes[0], generator=gen, dtype=torch.float64)
    b = torch.randn(shapes[1], generator=gen, dtype=torch.float64)
    with only_native():
        got = torch.linalg.lstsq(vk(a.float()), vk(b.float()), driver=driver)
    ref = torch.linalg.lstsq(a, b, driver=driver)
    for g, r in zip(got, ref, strict=True):
        assert g.shape == r.shape
        if r.dtype == torch.int64:
            assert torch.equal(g.cpu(), r)
        else:
            assert_close_to_ref(g, r, dtype=torch.float32, scale=50)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 5, 12])
def test_ldl_factor_and_solve(dtype, n, gen, fallback):
    a = torch.randn(3, n, n, generator=gen, dtype=torch.float64)
    a = a + a.mT
    a[1, 0, 0] = 0.0  # a zero leading entry: Bunch-Kaufman takes a 2x2 pivot
    a[2] = 0.0  # singular: info set, pivots still LAPACK's
    b = torch.randn(3, n, 2, generator=gen, dtype=torch.float64)
    with only_native():
        LD, piv, info = torch.linalg.ldl_factor_ex(vk(a.to(dtype)))
        x = torch.linalg.ldl_solve(LD[:2], piv[:2], vk(b[:2].to(dtype)))
    LD0, piv0, info0 = torch.linalg.ldl_factor_ex(a)
    assert torch.equal(piv.cpu(), piv0) and torch.equal(info.cpu(), info0)
    check(LD, LD0)
    check(x, torch.linalg.ldl_solve(LD0[:2], piv0[:2], b[:2]), scale=500)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scale", [0.05, 1.0, 20.0])
def test_matrix_exp(dtype, scale, gen, fallback):
    a = torch.randn(2, 5, 5, generator=gen, dtype=torch.float64) * scale / 5
    a = a.to(dtype).mT  # transposed storage
    with only_native():
        got = torch.linalg.matrix_exp(vk(a))
        one = torch.matrix_exp(vk(a[:, :1, :1]))
    ref = torch.linalg.matrix_exp(a.double())
    rel = ((got.cpu().double() - ref).abs().max() / ref.abs().max()).item()
    assert rel < (2e-5 if dtype == torch.float32 else 1e-13), rel
    check(one, a[:, :1, :1].double().exp())
