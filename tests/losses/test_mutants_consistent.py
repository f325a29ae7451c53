"""Rules of the NDCG-consistent losses that their contract and oracle tests leave open.

Each test pins one rule with an independent expectation: the messages in full, the documented
shapes ("the last axis"), the float64 solve of ψ for ``outer=exp``, and the dtype of the closed
forms' indicator. See tests/MUTANTS.md.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.optimize import brentq

from ndcglab.errors import SpecError
from ndcglab.losses import get_loss
from ndcglab.losses.consistent import bregman_divergence, get_potential, normalised_gains

_POTS = [("square", "identity"), ("exp", "identity"), ("square", "square"), ("square", "exp")]


def _spec_error(spec: str) -> str:
    with pytest.raises(SpecError) as info:
        get_loss(spec)
    return str(info.value)


def test_norm_errors_in_full() -> None:
    allowed = (
        ". Allowed: z (full DCG norm ‖G(y)‖_D) or zK (IDCG@K, e.g. z1, z10). "
        "Fix: e.g. consistent_listnet(norm=z)"
    )
    head = "invalid value {!r} for parameter 'norm' of loss 'consistent_listnet': "
    assert _spec_error("consistent_listnet(norm=y)") == head.format("y") + (
        "write z (full DCG norm) or zK with K a positive whole number, e.g. z10" + allowed
    )
    assert _spec_error("consistent_listnet(norm=z0)") == head.format("z0") + (
        "the K of zK must be at least 1" + allowed
    )


def test_unknown_potential_error_in_full() -> None:
    with pytest.raises(SpecError) as info:
        get_potential("cube", "identity")
    assert str(info.value) == (
        "unsupported Bregman potential h=cube,outer=identity; supported: h=exp,outer=identity, "
        "h=square,outer=exp, h=square,outer=identity, h=square,outer=square"
    )


def _batch(seed: int = 0, b: int = 3, m: int = 6) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 4, (b, m), generator=g).double()
    mask = torch.ones(b, m, dtype=torch.bool)
    mask[0, 4:] = False
    return labels, mask


def test_normalised_gains_reads_the_norm_as_a_string_or_a_number() -> None:
    labels, mask = _batch()
    u3, ok3 = normalised_gains(labels, mask, norm=3)
    us, oks = normalised_gains(labels, mask, norm="z3")
    assert torch.equal(u3, us) and torch.equal(ok3, oks)
    uf, _ = normalised_gains(labels, mask, norm=None)
    uz, _ = normalised_gains(labels, mask, norm="z")
    assert torch.equal(uf, uz) and not torch.equal(uf, u3)


@pytest.mark.parametrize(
    "conv", [{}, {"gain": "linear", "discount": "zipf"}, {"gain": "exp2", "discount": "log:10"}]
)
def test_normalised_gains_acts_on_the_last_axis_of_any_shape(conv: dict) -> None:
    labels, mask = _batch()
    u, ok = normalised_gains(labels, mask, norm=2, **conv)
    for i in range(labels.shape[0]):  # one list, 1-D
        ui, oki = normalised_gains(labels[i], mask[i], norm=2, **conv)
        assert ui.shape == labels[i].shape and oki.shape == ()
        assert torch.equal(ui, u[i]) and bool(oki) == bool(ok[i])
    u3, ok3 = normalised_gains(labels[None], mask[None], norm=2, **conv)  # (1, B, M)
    assert torch.equal(u3[0], u) and torch.equal(ok3[0], ok)
    if conv:  # the conventions reach the gains (else this case could not tell them)
        assert not torch.equal(u, normalised_gains(labels, mask, norm=2)[0])


@pytest.mark.parametrize(("h", "outer"), _POTS)
def test_potentials_act_on_the_last_axis_of_any_shape(h: str, outer: str) -> None:
    pot = get_potential(h, outer)
    g = torch.Generator().manual_seed(1)
    s = torch.rand(2, 3, 5, generator=g, dtype=torch.float64)
    mask = torch.rand(2, 3, 5, generator=g) < 0.8
    for name in ("conj", "b", "psi_b", "psi"):
        f = getattr(pot, name)
        whole = f(s, mask)
        for i in range(2):
            assert torch.equal(f(s[i], mask[i]), whole[i]), name
            for j in range(3):
                assert torch.equal(f(s[i, j], mask[i, j]), whole[i, j]), name


def test_bregman_divergence_sums_the_last_axis() -> None:
    g = torch.Generator().manual_seed(2)
    a, b, grad = (torch.rand(2, 3, 4, generator=g, dtype=torch.float64) for _ in range(3))
    pa, pb = torch.rand(2, 3, generator=g, dtype=torch.float64), torch.rand(2, 3, generator=g)
    want = pa - pb - torch.einsum("ijk,ijk->ij", grad, a - b)
    got = bregman_divergence(pa, pb.double(), grad, a, b)
    torch.testing.assert_close(got, want, rtol=1e-15, atol=1e-15)
    one = bregman_divergence(pa[0, 0], pb[0, 0].double(), grad[0, 0], a[0, 0], b[0, 0])
    assert one.shape == () and torch.equal(one, got[0, 0])


def test_psi_of_outer_exp_solves_for_lambda_in_float64() -> None:
    """ψ(u) = λ‖u‖ − exp(λ²) with 2λ·exp(λ²) = ‖u‖ solved in float64 even for float32 u: λ is
    the float64 root (found here by scipy's brentq) rounded to float32."""
    pot = get_potential("square", "exp")
    g = torch.Generator().manual_seed(0)
    u = (torch.rand(400, 5, generator=g, dtype=torch.float64) * 3).float()
    mask = torch.ones_like(u, dtype=torch.bool)
    norm = torch.sqrt((u * u).sum(-1))
    lam = torch.tensor(
        [
            brentq(lambda v, x=float(x): 2 * v * np.exp(v * v) - x, 0, 10, xtol=1e-300)
            for x in norm.double()
        ],
        dtype=torch.float64,
    ).float()
    assert torch.equal(pot.psi(u, mask), lam * norm - torch.exp(lam * lam))


@pytest.mark.parametrize("name", ["consistent_squared", "consistent_listnet"])
def test_closed_form_indicator_has_the_labels_dtype(name: str) -> None:
    labels, mask = _batch()
    form = get_loss(name).closed_form(labels, mask)
    assert form is not None
    assert form.scale.dtype == labels.dtype
    assert set(torch.unique(form.scale).tolist()) <= {0.0, 1.0, 2.0}


def test_normalised_gains_refuses_shapes_it_cannot_read() -> None:
    with pytest.raises(ValueError) as info:
        normalised_gains(torch.tensor(1.0, dtype=torch.float64), torch.tensor(True))
    assert str(info.value) == (
        "normalised_gains needs labels of shape (..., M) and a mask of the same shape, got () "
        "and (). Fix: pass one list as (M,) or a batch as (B, M), with a bool mask of the "
        "labels' shape"
    )
    with pytest.raises(ValueError, match=r"got \(4,\) and \(1, 4\)"):
        normalised_gains(torch.ones(4, dtype=torch.float64), torch.ones(1, 4, dtype=torch.bool))


@pytest.mark.parametrize("form", ["normalised", "penalised"])
def test_qnorm_auto_on_one_document_is_q_two(form: str) -> None:
    """q = log(M) + 2 with M the list's length: 2 for a one-document list (and a padded batch
    does not change a list's M)."""
    g = torch.Generator().manual_seed(4)
    s = torch.randn(3, 4, generator=g, dtype=torch.float64)
    y = torch.tensor([[2.0, 0, 0, 0], [1.0, 0, 0, 0], [3.0, 1.0, 0, 0]], dtype=torch.float64)
    mask = torch.tensor([[1, 0, 0, 0], [1, 0, 0, 0], [1, 1, 1, 0]], dtype=torch.bool)
    auto = get_loss(f"qnorm(q=auto,form={form})")(s, y, mask)
    two = get_loss(f"qnorm(q=2,form={form})")(s, y, mask)
    q3 = get_loss(f"qnorm(q={float(np.log(3) + 2)!r},form={form})")(s, y, mask)
    assert torch.equal(auto[:2], two[:2])
    torch.testing.assert_close(auto[2], q3[2], rtol=1e-14, atol=0)
