"""Linear algebra on vkml, real and complex, against the CPU in float64/complex128: LU (factor
with LAPACK's pivots, solve with adjoint and right sides, unpack, linalg.lu), solve/inv,
det/slogdet/logdet, Cholesky of symmetric/Hermitian positive definite matrices (factor, solve,
inverse, errors), triangular solves, Householder QR (geqrf, householder_product, ormqr on every
side, qr modes), LDL^T and LDL^H (LAPACK's pivots), matrix_exp, matrix_power, tensorinv,
tensorsolve; real eigh/eigvalsh and SVD (values exactly, vectors up to sign) and lstsq. Batched,
broadcast, transposed, sliced and conjugated inputs and outputs, zero-size batches, n = 0 and 1,
odd n, singular and non-positive-definite inputs, gradients through PyTorch's composite backward
formulas, and bad input."""

import pytest
import torch
from nn_helpers import (
    HAS_FLOAT64,
    WIDE_COMPLEX,
    WIDE_FLOAT,
    assert_close_to_ref,
    device_dtypes,
    only_native,
    randn,
    wide,
)

REAL_DTYPES = device_dtypes(torch.float32, torch.float64)
DTYPES = device_dtypes(torch.float32, torch.complex64, torch.float64, torch.complex128)
WIDE_DTYPES = [WIDE_FLOAT, WIDE_COMPLEX]
GRAD_DTYPES = list(dict.fromkeys([WIDE_FLOAT, torch.complex64, WIDE_COMPLEX]))
SHAPES = [(5, 5), (3, 7, 7), (2, 1, 33, 33), (1, 1), (0, 4, 4), (2, 0, 0)]


def well_conditioned(shape, dtype, gen):
    """Random matrices with negatives, shifted away from singularity."""
    a = randn(shape, wide_of(dtype), gen)
    if shape[-1] == shape[-2] and shape[-1] > 0:
        a = a + shape[-1] * torch.eye(shape[-1], dtype=a.dtype) * 0.5
    return a.to(dtype)


def positive_definite(shape, dtype, gen):
    """Symmetric (real) or Hermitian (complex) positive definite matrices."""
    a = randn(shape, wide_of(dtype), gen)
    return (a @ a.mH + shape[-1] * torch.eye(shape[-1], dtype=a.dtype)).to(dtype)


def wide_of(dtype):
    return torch.complex128 if dtype.is_complex else torch.float64


def vk(t):
    return t.to("vkml")


def check(got, ref, scale=50.0):
    for g, r in zip(
        got if isinstance(got, tuple) else (got,),
        ref if isinstance(ref, tuple) else (ref,),
        strict=True,
    ):
        if g.dtype in (torch.int32, torch.int64):
            assert g.device.type == "vkml"
            assert torch.equal(g.cpu(), r), (g, r)
        else:
            assert_close_to_ref(g, r, scale=scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_lu_family(dtype, shape, gen, fallback):
    a = well_conditioned(shape, dtype, gen)
    b = randn((*shape[:-1], 3), dtype, gen)
    with only_native():
        LU, piv = torch.linalg.lu_factor(vk(a))
        P, L, U = torch.linalg.lu(vk(a))
        x = torch.linalg.lu_solve(LU, piv, vk(b))
        xa = torch.linalg.lu_solve(LU, piv, vk(b), adjoint=True)
        xr = torch.linalg.lu_solve(LU, piv, vk(b).mT, left=False)
        xra = torch.linalg.lu_solve(LU, piv, vk(b).mT, left=False, adjoint=True)
        unpacked = torch.lu_unpack(LU, piv)
    a64, b64 = wide(a), wide(b)
    LU0, piv0 = torch.linalg.lu_factor(a64)
    assert torch.equal(piv.cpu(), piv0)  # LAPACK's pivots (|re| + |im| picks complex ones)
    check(LU, LU0)
    check((P, L, U), torch.linalg.lu(a64))
    check(unpacked, torch.lu_unpack(LU0, piv0))
    check(x, torch.linalg.solve(a64, b64))
    check(xa, torch.linalg.solve(a64.mH, b64))
    check(xr, torch.linalg.solve(a64, b64.mT, left=False))
    check(xra, torch.linalg.solve(a64.mH, b64.mT, left=False))


@pytest.mark.parametrize("dtype", DTYPES)
def test_lu_rectangular_strided_and_conjugated(dtype, gen, fallback):
    for m, n in [(7, 4), (3, 8)]:
        a = randn((2, n, m), dtype, gen).mT  # transposed storage
        LU = torch.empty(2, m, n, dtype=dtype, device="vkml")
        piv = torch.empty(2, min(m, n), dtype=torch.int32, device="vkml")
        info = torch.empty(2, dtype=torch.int32, device="vkml")
        with only_native():
            torch.linalg.lu_factor_ex(vk(a), out=(LU, piv, info))
            LUc, pivc = torch.linalg.lu_factor(vk(a)[:, ::1].conj())  # lazy conj view if complex
        check((LU, piv, info), torch.linalg.lu_factor_ex(wide(a)))
        check((LUc, pivc), torch.linalg.lu_factor(wide(a).conj()))


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_inv_det_slogdet(dtype, gen, fallback):
    a = well_conditioned((3, 6, 6), dtype, gen)
    b = randn((6, 2), dtype, gen)  # broadcast over the batch
    v = randn((3, 6), dtype, gen)  # vector right side
    with only_native():
        got = (
            torch.linalg.solve(vk(a), vk(b)),
            torch.linalg.solve(vk(a), vk(v)),
            torch.linalg.solve(vk(a), vk(b).mT, left=False),
            torch.linalg.solve(vk(a).mH, vk(b)),
            torch.linalg.inv(vk(a)),
            torch.linalg.inv(vk(a)[:, ::2, ::2]),  # sliced
            torch.linalg.det(vk(a)),
            torch.linalg.det(vk(a).mT),
            *torch.linalg.slogdet(vk(a)),
            torch.logdet(vk(a)),
        )
    a64, b64, v64 = wide(a), wide(b), wide(v)
    ref = (
        torch.linalg.solve(a64, b64),
        torch.linalg.solve(a64, v64),
        torch.linalg.solve(a64, b64.mT, left=False),
        torch.linalg.solve(a64.mH, b64),
        torch.linalg.inv(a64),
        torch.linalg.inv(a64[:, ::2, ::2]),
        torch.linalg.det(a64),
        torch.linalg.det(a64.mT),
        *torch.linalg.slogdet(a64),
        torch.logdet(a64),
    )
    assert got[9].dtype == a.dtype.to_real()  # log|det| is real
    check(got, ref)


@pytest.mark.parametrize("dtype", WIDE_DTYPES)
def test_singular_inputs_set_info_and_raise(dtype, fallback):
    a = torch.randn(3, 4, 4, dtype=dtype)
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
    # NaN never passes silently (in both parts of a complex determinant)
    nan = torch.full((3, 3), complex("nan+nanj") if dtype.is_complex else float("nan"), dtype=dtype)
    det = torch.linalg.det(vk(nan)).cpu()
    assert torch.isnan(torch.view_as_real(det) if det.is_complex() else det).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (2, 3, 9, 9), (1, 1), (0, 3, 3), (0, 0)])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_family(dtype, shape, upper, gen, fallback):
    s = positive_definite(shape, dtype, gen)
    b = randn((*shape[:-1], 2), dtype, gen)
    with only_native():
        L = torch.linalg.cholesky(vk(s), upper=upper)
        Lc = torch.linalg.cholesky(vk(s).mT.conj(), upper=upper)  # the same matrix, lazily
        x = torch.cholesky_solve(vk(b), L, upper=upper)
        inv = torch.cholesky_inverse(L, upper=upper)
        legacy = torch.cholesky(vk(s), upper=upper)
    L0 = torch.linalg.cholesky(wide(s), upper=upper)
    check((L, Lc, legacy), (L0, L0, L0))
    check(x, torch.cholesky_solve(wide(b), L0, upper=upper))
    check(inv, torch.cholesky_inverse(L0, upper=upper))


@pytest.mark.parametrize("dtype", WIDE_DTYPES)
def test_cholesky_not_positive_definite(dtype, fallback):
    s = positive_definite((3, 5, 5), dtype, torch.Generator().manual_seed(3))
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
    b = randn((2, 3, 9, 4), dtype, gen)
    b = b if left else b.mT
    out = torch.empty(2, 3, 4, 9, dtype=dtype, device="vkml").mT if left else None
    with only_native():
        got = torch.linalg.solve_triangular(
            vk(a), vk(b), upper=upper, left=left, unitriangular=unit, out=out
        )
        gotc = torch.linalg.solve_triangular(
            vk(a).conj(), vk(b).conj(), upper=upper, left=left, unitriangular=unit
        )
        x, m = torch.triangular_solve(
            vk(b) if left else vk(b).mT, vk(a), upper=upper, transpose=not left, unitriangular=unit
        )
    a64, b64 = wide(a), wide(b)
    kw = dict(upper=upper, left=left, unitriangular=unit)
    check(got, torch.linalg.solve_triangular(a64, b64, **kw))
    check(gotc, torch.linalg.solve_triangular(a64.conj(), b64.conj(), **kw))
    x0, m0 = torch.triangular_solve(
        b64 if left else b64.mT, a64, upper=upper, transpose=not left, unitriangular=unit
    )
    check((x, m), (x0, m0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 7), (2, 5, 5), (1, 1), (0, 3, 2)])
def test_householder_qr(dtype, shape, gen, fallback):
    a = randn(shape, dtype, gen)
    a64 = wide(a)
    with only_native():
        outs = [torch.linalg.qr(vk(a), mode=mode) for mode in ("reduced", "complete", "r")]
        qr, tau = torch.geqrf(vk(a))
    for (q, r), mode in zip(outs, ("reduced", "complete", "r"), strict=True):
        check((q, r), torch.linalg.qr(a64, mode=mode))  # LAPACK's Householder signs and phases
    qr0, tau0 = torch.geqrf(a64)
    check((qr, tau), (qr0, tau0))
    if shape[-2] >= shape[-1]:
        c = randn((*shape[:-1], 3), wide_of(dtype), gen)
        cd = vk(c.to(dtype))
        with only_native():
            hp = torch.linalg.householder_product(qr, tau)
            om = [
                torch.ormqr(qr, tau, cd if left else cd.mT, left=left, transpose=transpose)
                for left in (True, False)
                for transpose in (False, True)
            ]
        check(hp, torch.linalg.householder_product(qr0, tau0))
        ref = [
            torch.ormqr(qr0, tau0, c if left else c.mT, left=left, transpose=transpose)
            for left in (True, False)
            for transpose in (False, True)
        ]
        check(tuple(om), tuple(ref))


def sign_fixed(v):
    """Columns with their largest-magnitude entry made positive (vectors are unique up to sign)."""
    idx = v.abs().argmax(dim=-2, keepdim=True)
    return v * torch.gather(v, -2, idx).sign()


@pytest.mark.parametrize("dtype", REAL_DTYPES)
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


@pytest.mark.parametrize("dtype", REAL_DTYPES)
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


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_gradients_match_cpu(dtype, gen, fallback):
    """Backward formulas (composite in PyTorch) through the native kernels, in the widest float and
    complex dtypes the device has and in complex64, against float64/complex128 on the CPU from
    the same inputs."""
    a = well_conditioned((2, 5, 5), dtype, gen)
    b = randn((2, 5, 3), dtype, gen)
    s = positive_definite((5, 5), dtype, gen)
    fns = [
        lambda a, b, s: torch.linalg.solve(a, b),
        lambda a, b, s: torch.linalg.inv(a),
        lambda a, b, s: torch.linalg.det(a),
        lambda a, b, s: torch.linalg.slogdet(a)[1],
        lambda a, b, s: torch.cholesky_solve(b, torch.linalg.cholesky(s).detach()),
        lambda a, b, s: torch.linalg.eigvalsh(s),
        lambda a, b, s: torch.linalg.svdvals(a),
    ]
    if dtype != torch.complex128:  # their backward takes tril/triu: no complex128 vkml kernel
        fns += [
            lambda a, b, s: torch.linalg.lu_factor(a)[0],
            lambda a, b, s: torch.linalg.cholesky(s),
            lambda a, b, s: torch.linalg.solve_triangular(a.triu(), b, upper=True),
            lambda a, b, s: torch.linalg.qr(a)[0] + torch.linalg.qr(a)[1],
        ]
    for fn in fns:
        ins = [wide(t).requires_grad_() for t in (a, b, s)]
        ref = fn(*ins)
        g = torch.randn(ref.shape, generator=gen, dtype=ref.dtype)
        rg = torch.autograd.grad(ref, ins, g, allow_unused=True)
        vins = [vk(t).requires_grad_() for t in (a, b, s)]
        with only_native():
            got = fn(*vins)
            vg = torch.autograd.grad(got, vins, vk(g.to(got.dtype)), allow_unused=True)
        check(got, ref.detach())
        for x, y in zip(vg, rg, strict=True):
            assert (x is None) == (y is None)
            if x is not None:
                check(x, y, scale=1e3)


def test_half_is_rejected_like_the_cpu():
    a = torch.eye(3, dtype=torch.float16)
    with pytest.raises(RuntimeError) as cpu_err:
        torch.linalg.inv(a)
    with pytest.raises(type(cpu_err.value)):
        torch.linalg.inv(vk(a))


def test_complex_bad_inputs_raise_like_the_cpu():
    a = torch.eye(3, dtype=torch.complex64)
    b = torch.ones(3, 2, dtype=torch.complex64)
    cases = [  # each takes the placement of its tensors: identity (CPU) or vk
        lambda d: torch.linalg.solve(d(a), d(torch.ones(3, 2))),  # complex and real
        lambda d: torch.linalg.solve_triangular(d(a[:2]), d(b), upper=True),  # not square
        lambda d: torch.cholesky_solve(d(torch.ones(3, 2)), d(a)),
        lambda d: torch.linalg.lu_factor(d(torch.ones(3, dtype=torch.complex64))),  # 1-D
        lambda d: torch.linalg.inv(d(torch.ones(2, 3, dtype=torch.complex64))),  # not square
        lambda d: torch.ormqr(d(a), d(torch.ones(3)), d(a)),
        lambda d: torch.linalg.householder_product(d(a), d(torch.ones(3))),
    ]
    if HAS_FLOAT64:  # complex64 with complex128
        b128 = b.to(torch.complex128)
        cases += [
            lambda d: torch.linalg.solve(d(a), d(b128)),
            lambda d: torch.ormqr(d(a), d(torch.ones(3, dtype=torch.complex128)), d(a)),
        ]
    for case in cases:
        with pytest.raises(RuntimeError) as cpu_err:
            case(lambda t: t)
        with pytest.raises(type(cpu_err.value)):
            case(vk)


def test_solve_triangular_casts_b_like_the_cpu(gen, fallback):
    """The CPU solves in A's dtype, casting B (it raises nothing for mixed dtypes)."""
    a = well_conditioned((4, 4), torch.complex64, gen).triu()
    others = [torch.randn(4, 2, generator=gen)]  # real B
    if HAS_FLOAT64:
        others.append(randn((4, 2), torch.complex128, gen))
    for b in others:
        ref = torch.linalg.solve_triangular(a, b, upper=True)
        with only_native():
            got = torch.linalg.solve_triangular(vk(a), vk(b), upper=True)
        assert got.dtype == ref.dtype == torch.complex64
        check(got, ref)


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
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("n", [1, 2, 5, 12])
def test_ldl_factor_and_solve(dtype, hermitian, n, gen, fallback):
    a = randn((3, n, n), wide_of(dtype), gen)
    a = a + (a.mH if hermitian else a.mT)
    a[1, 0, 0] = 0.0  # a zero leading entry: Bunch-Kaufman takes a 2x2 pivot
    a[2] = 0.0  # singular: info set, pivots still LAPACK's
    a = a.to(dtype)
    b = randn((3, n, 2), dtype, gen)
    with only_native():
        LD, piv, info = torch.linalg.ldl_factor_ex(vk(a), hermitian=hermitian)
        x = torch.linalg.ldl_solve(LD[:2], piv[:2], vk(b[:2]), hermitian=hermitian)
    LD0, piv0, info0 = torch.linalg.ldl_factor_ex(wide(a), hermitian=hermitian)
    assert torch.equal(piv.cpu(), piv0) and torch.equal(info.cpu(), info0)  # LAPACK's pivots
    check(LD, LD0)
    check(x, torch.linalg.ldl_solve(LD0[:2], piv0[:2], wide(b[:2]), hermitian=hermitian),
          scale=500)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scale", [0.05, 1.0, 20.0])
def test_matrix_exp(dtype, scale, gen, fallback):
    a = (randn((2, 5, 5), wide_of(dtype), gen) * scale / 5).to(dtype).mT  # transposed storage
    with only_native():
        got = torch.linalg.matrix_exp(vk(a))
        one = torch.matrix_exp(vk(a[:, :1, :1]))
    ref = torch.linalg.matrix_exp(wide(a))
    rel = ((wide(got.cpu()) - ref).abs().max() / ref.abs().max()).item()
    single = dtype in (torch.float32, torch.complex64)
    assert rel < (2e-5 if single else 1e-13), rel
    check(one, wide(a[:, :1, :1]).exp())


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_power_tensorinv_tensorsolve(dtype, gen, fallback):
    a = well_conditioned((2, 4, 4), dtype, gen) / 3
    t = well_conditioned((6, 6), dtype, gen).reshape(6, 2, 3)
    rhs = randn((6,), dtype, gen)
    with only_native():
        got = (
            torch.linalg.matrix_power(vk(a), 5),
            torch.linalg.matrix_power(vk(a), -2),
            torch.linalg.matrix_power(vk(a), 0),
            torch.linalg.tensorinv(vk(t), ind=1),
            torch.linalg.tensorsolve(vk(t), vk(rhs)),
        )
    t64 = wide(t)
    ref = (
        torch.linalg.matrix_power(wide(a), 5),
        torch.linalg.matrix_power(wide(a), -2),
        torch.linalg.matrix_power(wide(a), 0),
        torch.linalg.tensorinv(t64, ind=1),
        torch.linalg.tensorsolve(t64, wide(rhs)),
    )
    check(got, ref, scale=200)
