"""Losses PyTorch composes from other ops run on vkml kernels end to end (forward and backward)
and match float64 CPU in every float dtype: kl_div, cosine_embedding, margin_ranking,
hinge_embedding, soft_margin, poisson_nll, gaussian_nll, triplet_margin, cross_entropy with class
weights + ignore_index + label smoothing and with probability targets, cosine_similarity,
pairwise_distance, normalize, glu and renorm. A few need elementwise kernels owned by another
family (sgn, log_sigmoid): those are named below and are the only fallbacks allowed."""

import pytest
import torch
import torch.nn.functional as F
from nn_helpers import FLOAT_DTYPES, assert_close_to_ref, only_native, randn

# float64 only where the device computes in it (GPUs without fp64, VKML_CAPS_MASK=no-fp64).

# Backward kernels of other families these composites still reach through the CPU fallback.
ELEMENTWISE_PENDING = {
    "l1": ("aten::sgn.out",),
    "gaussian_nll": ("aten::sgn.out",),
    "triplet_margin": ("aten::sgn.out",),  # the p-norm's backward, p != 2
    "normalize": ("aten::sgn.out",),
    "multilabel_soft_margin": ("aten::log_sigmoid_forward", "aten::log_sigmoid_backward"),
}


def sign_of(t):
    return torch.where(t > 0, 1.0, -1.0).to(t.dtype)


CASES = {
    "kl_div": lambda a, b: F.kl_div(a.log_softmax(1), b.softmax(1), reduction="batchmean"),
    "kl_div_log_target": lambda a, b: F.kl_div(
        a.log_softmax(1), b.log_softmax(1), reduction="sum", log_target=True
    ),
    "kl_div_none": lambda a, b: F.kl_div(a, b.softmax(1), reduction="none"),
    "cosine_embedding": lambda a, b: F.cosine_embedding_loss(a, b, sign_of(b[:, 0]), margin=0.2),
    "margin_ranking": lambda a, b: F.margin_ranking_loss(a, b, sign_of(b), margin=0.1),
    "hinge_embedding": lambda a, b: F.hinge_embedding_loss(a, sign_of(b), margin=0.5),
    "soft_margin": lambda a, b: F.soft_margin_loss(a, sign_of(b), reduction="sum"),
    "poisson_nll": lambda a, b: F.poisson_nll_loss(a, b.abs()),
    "poisson_nll_full": lambda a, b: F.poisson_nll_loss(
        a.exp(), b.abs() * 3, log_input=False, full=True, reduction="none"
    ),
    "gaussian_nll": lambda a, b: F.gaussian_nll_loss(a, b, (a * b).abs() + 0.1),
    "triplet_margin": lambda a, b: F.triplet_margin_loss(a, b, a.flip(0), swap=True, p=1.5),
    "l1": lambda a, b: F.l1_loss(a, b, reduction="sum"),
    "smooth_l1": lambda a, b: F.smooth_l1_loss(a, b, beta=0.5),
    "bce": lambda a, b: F.binary_cross_entropy(a.sigmoid(), b.sigmoid(), weight=b.abs()),
    "bce_with_logits": lambda a, b: F.binary_cross_entropy_with_logits(
        a, b.sigmoid(), pos_weight=b[0].abs()
    ),
    "cross_entropy_weight_ignore_smoothing": lambda a, b: F.cross_entropy(
        a, b.argmax(1), weight=b[0].abs(), ignore_index=2, label_smoothing=0.2
    ),
    "cross_entropy_probabilities": lambda a, b: F.cross_entropy(
        a, b.softmax(1), label_smoothing=0.1
    ),
    "multilabel_soft_margin": lambda a, b: F.multilabel_soft_margin_loss(a, (b > 0).to(a.dtype)),
    "cosine_similarity": lambda a, b: F.cosine_similarity(a, b, dim=0),
    "pairwise_distance": lambda a, b: F.pairwise_distance(a, b, p=3.0),
    "normalize": lambda a, b: F.normalize(a, p=1.5, dim=1),
    "glu": lambda a, b: F.glu(a, dim=0),
    "renorm": lambda a, b: torch.renorm(a, 2.0, 1, 1.2),
}

# Looser for the composites that chain many roundings in half precision.
SCALE = {torch.float16: 8.0, torch.bfloat16: 8.0}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", list(CASES))
def test_composite_loss(name, dtype, gen, fallback):
    fn = CASES[name]
    # [6, 5] transposed from [5, 6]: every input strided; values with both signs
    a = randn((5, 6), dtype, gen).t()
    b = randn((5, 6), dtype, gen).t()
    av = a.to("vkml").requires_grad_()
    ar = a.double().requires_grad_()
    pending = ELEMENTWISE_PENDING.get(name, ())
    with only_native(*pending):
        got = fn(av, b.to("vkml"))
    ref = fn(ar, b.double())
    assert got.dtype == dtype and got.shape == ref.shape
    # half-precision inputs of the composites are rounded between steps: compare in their dtype
    scale = SCALE.get(dtype, 4.0)
    assert_close_to_ref(got, ref, scale=scale)
    g = randn(ref.shape, torch.float64, gen)
    with only_native(*pending):
        (gv,) = torch.autograd.grad(got, av, g.to(dtype).to("vkml"))
    (gr,) = torch.autograd.grad(ref, ar, g)
    assert_close_to_ref(gv, gr, scale=scale * 4)


def test_glu_and_renorm_edges(gen, fallback):
    x = randn((4, 7), torch.float32, gen)
    with pytest.raises(RuntimeError):
        F.glu(x.to("vkml"), dim=1)
    with pytest.raises(RuntimeError):
        torch.renorm(x.to("vkml"), 0.0, 0, 1.0)
    with pytest.raises(RuntimeError):
        torch.renorm(x[0].to("vkml"), 2.0, 0, 1.0)
    # out= of glu with a strided destination, renorm_ in place, large rows
    out = torch.empty(2, 14, device="vkml").t()
    with only_native():
        torch.ops.aten.glu.out(x.t().to("vkml"), 1, out=out)
        big = randn((3, 700), torch.float32, gen).to("vkml")
        ref_big = torch.renorm(big.cpu().double(), 1.0, 0, 5.0)
        big.renorm_(1.0, 0, 5.0)
    assert_close_to_ref(out, F.glu(x.t().double(), 1))
    assert_close_to_ref(big, ref_big, scale=10)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_embedding_max_norm_renormalises_rows_in_place(dtype, gen, fallback):
    # F.embedding with max_norm calls embedding_renorm_: rows named by the indices (repeats
    # included) whose 1.5-norm exceeds 1.1 are scaled down in the table itself.
    table = randn((9, 5), dtype, gen, scale=1.5)
    idx = torch.tensor([[1, 4, 1], [7, 0, 4]])
    tv = table.to("vkml")
    tr = table.double()
    with only_native():
        got = F.embedding(idx.to("vkml"), tv, max_norm=1.1, norm_type=1.5)
    ref = F.embedding(idx, tr, max_norm=1.1, norm_type=1.5)
    assert_close_to_ref(got, ref, scale=4)
    assert_close_to_ref(tv, tr, scale=4)  # untouched rows stay, renormed ones match
    with pytest.raises(RuntimeError):
        torch.embedding_renorm_(tv[0], idx.to("vkml"), 1.0, 2.0)
