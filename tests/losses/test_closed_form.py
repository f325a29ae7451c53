"""Closed-form gradients and Hessian diagonals of the registered losses, checked on hard batches.

The oracle is the registered loss itself, differentiated by autograd one list at a time on the
unpadded list (gradient), and central differences of that autograd gradient (Hessian diagonal,
first-order autograd only). The batches are built to reach the branches that ordinary random
lists miss: padding inside a batch, lists of one document, lists whose labels are all 0, all tied
or tied at the top, documents below the cut-off, and large score ranges (log-space sums).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ndcglab.losses import Loss, get_loss  # noqa: E402

if TYPE_CHECKING:
    from torch import Tensor

# (labels, scores) per list; padded together into one batch
_LISTS: list[tuple[list[float], list[float]]] = [
    ([2, 0, 1, 1, 0, 3], [0.3, -1.2, 0.8, 0.1, 2.0, -0.4]),
    ([0, 0, 0], [0.5, -0.5, 1.0]),  # no relevant document
    ([1], [0.7]),  # one document
    ([1, 1, 1, 1], [0.1, 0.2, -0.3, 0.4]),  # all tied
    ([2, 2, 0, 1, 0, 0, 1], [-0.2, 1.1, 0.4, -2.0, 0.9, 0.0, 0.3]),  # tie at the top
    ([1, 0], [-0.6, 0.6]),  # IDCG = 1 exactly (exp2 gain, log discount)
    ([0, 3, 0, 0, 2, 1, 0, 0], [12.0, -9.0, 3.0, 0.5, 8.0, -4.0, 1.0, -1.0]),  # wide scores
    ([3, 0, 2, 1, 4], [0.2, 0.9, -1.5, 0.4, -0.1]),  # no tie
]


def _batch(lists: list[tuple[list[float], list[float]]] = _LISTS) -> tuple[Tensor, Tensor, Tensor]:
    width = max(len(y) for y, _ in lists)
    b = len(lists)
    y = torch.zeros(b, width, dtype=torch.float64)
    s = torch.full((b, width), 5.0, dtype=torch.float64)  # padding scores: large on purpose
    m = torch.zeros(b, width, dtype=torch.bool)
    for i, (yy, ss) in enumerate(lists):
        y[i, : len(yy)] = torch.tensor(yy, dtype=torch.float64)
        s[i, : len(ss)] = torch.tensor(ss, dtype=torch.float64)
        m[i, : len(yy)] = True
    return s, y, m


def _autograd(loss: Loss, s: Tensor, y: Tensor) -> Tensor:
    x = s.clone()[None].requires_grad_(True)
    value = loss(x, y[None], torch.ones_like(x, dtype=torch.bool)).sum()
    if not value.requires_grad:
        return torch.zeros_like(s)
    (g,) = torch.autograd.grad(value, x, allow_unused=True)
    return torch.zeros_like(s) if g is None else g[0].detach()


def _oracle(
    loss: Loss, s: Tensor, y: Tensor, m: Tensor, eps: float = 1e-5
) -> tuple[Tensor, Tensor]:
    """Autograd gradient and central-difference Hessian diagonal, list by list, unpadded."""
    g = torch.zeros_like(s)
    h = torch.zeros_like(s)
    for b in range(s.shape[0]):
        n = int(m[b].sum())
        sb, yb = s[b, :n], y[b, :n]
        g[b, :n] = _autograd(loss, sb, yb)
        for i in range(n):
            up, down = sb.clone(), sb.clone()
            up[i] += eps
            down[i] -= eps
            h[b, i] = (_autograd(loss, up, yb)[i] - _autograd(loss, down, yb)[i]) / (2 * eps)
    return g, h


CLOSED = [
    "cs_listmle@3",
    "cs_listmle@1",
    "cs_listmle",
    "cs_listmle@0.5n",
    "cs_listmle(gain=linear)@2",
    "listmle",
    "listnet",
    "listnet(gain=exp2)",
    "squared",
    "ranknet",
    "lambdarank@3",
    "lambdarank",
]


@pytest.mark.parametrize("spec", CLOSED)
def test_closed_form_matches_autograd_of_the_registered_loss(spec: str) -> None:
    loss = get_loss(spec)
    s, y, m = _batch()
    gen = torch.Generator().manual_seed(0)
    out = loss.grad_hess(s, y, m, generator=gen)
    if out is None:
        pytest.skip(f"{spec} has no closed form")
    g, h = out
    if spec == "listmle":
        # ties are broken at random: the oracle must use the same draw, so only lists without
        # tied labels are compared (the tie-free lists below are where the order is fixed)
        rows = [2, 5, 7]
    else:
        rows = list(range(s.shape[0]))
    g_ref, h_ref = _oracle(loss, s, y, m)
    # padding: exactly zero
    assert torch.all(g[~m] == 0) and torch.all(h[~m] == 0)
    assert torch.isfinite(g).all() and torch.isfinite(h).all()
    for r in rows:
        np.testing.assert_allclose(g[r].numpy(), g_ref[r].numpy(), rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(h[r].numpy(), h_ref[r].numpy(), rtol=1e-5, atol=1e-7)


def test_listmle_closed_form_with_ties_uses_the_loss_draw() -> None:
    """With tied labels the closed form must follow the same random order as the loss: same
    generator seed on both sides, gradient compared with the loss's autograd gradient."""
    loss = get_loss("listmle")
    s, y, m = _batch()
    for seed in range(3):
        out = loss.grad_hess(s, y, m, generator=torch.Generator().manual_seed(seed))
        assert out is not None
        g = out[0]
        x = s.clone().requires_grad_(True)
        loss(x, y, m, generator=torch.Generator().manual_seed(seed)).sum().backward()
        assert x.grad is not None
        np.testing.assert_allclose(g.numpy(), (x.grad * m).numpy(), rtol=1e-9, atol=1e-11)


def test_listmle_form_built_once_follows_the_loss_draw_at_every_call() -> None:
    """A ListMLE form built once (as the boosting objective keeps it across rounds, with its
    label keys) gives, at each later call, the gradient of the loss under the same draw: tied
    labels, real documents first, several generator seeds, and a subset of the lists."""
    loss = get_loss("listmle")
    g0 = torch.Generator().manual_seed(5)
    lengths = torch.tensor([9, 4, 9, 1, 0, 7])
    m = torch.arange(9)[None, :] < lengths[:, None]
    y = torch.where(m, torch.randint(0, 3, (6, 9), generator=g0).double(), 0.0)
    s = torch.randn(6, 9, generator=g0, dtype=torch.float64)
    form = loss.closed_form(y, m)
    assert form is not None
    for seed in range(4):
        g = form.grad_hess(s, torch.Generator().manual_seed(seed))[0]
        x = s.clone().requires_grad_(True)
        loss(x, y, m, generator=torch.Generator().manual_seed(seed)).sum().backward()
        assert x.grad is not None
        np.testing.assert_allclose(g.numpy(), (x.grad * m).numpy(), rtol=1e-9, atol=1e-11)
    sub = form.subset(3)
    g = sub.grad_hess(s[:3], torch.Generator().manual_seed(1))[0]
    x = s[:3].clone().requires_grad_(True)
    loss(x, y[:3], m[:3], generator=torch.Generator().manual_seed(1)).sum().backward()
    assert x.grad is not None
    np.testing.assert_allclose(g.numpy(), (x.grad * m[:3]).numpy(), rtol=1e-9, atol=1e-11)


READ_OFF = ["listnet", "listnet(gain=exp2)", "consistent_listnet", "squared", "consistent_squared"]


@pytest.mark.parametrize("spec", READ_OFF)
def test_read_off_forms_match_autograd_of_the_registered_loss(spec: str) -> None:
    """The forms read off a callable (``closed_form(..., like=loss)``, as the GBDT objective does
    for a stand-in loss) give the loss's own gradient and Hessian diagonal, padding at 0."""
    loss = get_loss(spec)
    s, y, m = _batch()
    form = loss.closed_form(y, m, like=lambda x, yy, mm: loss(x, yy, mm))
    if form is None:
        pytest.skip(f"{spec} has no read-off form")
    g, h = form.grad_hess(s)
    g_ref, h_ref = _oracle(loss, s, y, m)
    assert torch.all(g[~m] == 0) and torch.all(h[~m] == 0)
    np.testing.assert_allclose(g.numpy(), g_ref.numpy(), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(h.numpy(), h_ref.numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    ("spec", "read_off"), [(x, False) for x in CLOSED] + [(x, True) for x in READ_OFF]
)
def test_a_form_built_once_answers_in_the_scores_dtype(spec: str, read_off: bool) -> None:
    """A form is built once from the labels (as the GBDT objective does; ``read_off``: read off
    the loss as a callable) and then evaluated at any scores: float32 scores give float32
    derivatives, equal to the float64 ones to float32 precision."""
    loss = get_loss(spec)
    s, y, m = _batch()
    like = (lambda x, yy, mm: loss(x, yy, mm)) if read_off else None
    form = loss.closed_form(y, m, like=like) if read_off else loss.closed_form(y, m)
    if form is None:
        pytest.skip(f"{spec} has no {'read-off' if read_off else 'closed'} form")
    g64, h64 = form.grad_hess(s, torch.Generator().manual_seed(0))
    g32, h32 = form.grad_hess(s.to(torch.float32), torch.Generator().manual_seed(0))
    assert g32.dtype == torch.float32 and h32.dtype == torch.float32
    rows = [2, 5, 7] if spec == "listmle" else list(range(s.shape[0]))
    # (the Hessian of the wide-score list is a difference of terms near 1: float32 cancellation)
    np.testing.assert_allclose(g32[rows].numpy(), g64[rows].numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(h32[rows].numpy(), h64[rows].numpy(), rtol=2e-4, atol=1e-6)


PAIR_SPECS = [
    "ranknet",
    "ranknet(weight=label)",
    "ranknet(weight=gain,sigma=2)",
    "lambdarank",
    "lambdarank@3",
    "lambdarank@1",
    "lambdarank(gain=linear,discount=linear)@4",
    "lambdarank(discount=zipf,sigma=0.5)",
    "lambdarank(discount=letor)@2",
]


def _pair_form_reference(loss: Loss, s: Tensor, y: Tensor, m: Tensor) -> tuple[Tensor, Tensor]:
    """The pair form's derivatives written out from ``loss.pair_weights`` at every call (no
    bound weights, no in-place steps): g_i = σ Σ_j (W_ji ρ_ji − W_ij ρ_ij),
    h_i = σ² Σ_j (W_ij ρ_ij (1 − ρ_ij) + W_ji ρ_ji (1 − ρ_ji))."""
    sigma = float(loss.params["sigma"])
    s = s.masked_fill(~m, 0.0)
    w = loss.pair_weights(s, y, m)
    rho = torch.sigmoid(-sigma * (s.unsqueeze(-1) - s.unsqueeze(-2)))
    wr = w * rho
    g = sigma * (wr.sum(dim=-2) - wr.sum(dim=-1))
    c = w * rho * (1.0 - rho)
    h = sigma * sigma * (c.sum(dim=-1) + c.sum(dim=-2))
    return g * m, h * m


@pytest.mark.parametrize("keep", ["kept", "over the budget"])
@pytest.mark.parametrize("spec", PAIR_SPECS)
def test_pair_weights_bound_once_equal_the_loss_pair_weights_at_every_call(
    spec: str, keep: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pair form builds the label-only part of W once (``bind_pair_weights``) and is then
    called round after round at new scores, in either dtype: W, the gradient and the Hessian
    diagonal equal the ones built from ``pair_weights`` at each call, bit for bit (scores with
    ties, padding, lists without pairs or with IDCG = 0 included); and the same when the form
    may keep nothing (``KEEP_BYTES`` spent) and computes W at every call."""
    from ndcglab.losses import pairwise

    if keep == "over the budget":
        monkeypatch.setattr(pairwise, "KEEP_BYTES", 0)
    loss = get_loss(spec)
    # (and a list whose pairs are all below 0: negative gains, IDCG < 0, so no weight at all)
    s0, y, m = _batch([*_LISTS, ([0, -1, -1, -2], [0.4, 0.9, -0.3, 0.0])])
    form = loss.closed_form(y, m)
    assert form is not None
    gen = torch.Generator().manual_seed(3)
    draws = [s0, torch.round(s0 * 2) / 2]  # the batch, then many tied scores
    draws += [torch.randn(s0.shape, generator=gen, dtype=torch.float64) for _ in range(3)]
    for dtype in (torch.float64, torch.float32, torch.float64):
        for s in draws:
            s = s.to(dtype)
            w = form._weights(s.masked_fill(~m, 0.0))
            w_ref = loss.pair_weights(s.masked_fill(~m, 0.0), y, m)
            assert w.dtype == dtype and torch.equal(w, w_ref)
            g, h = form.grad_hess(s)
            g_ref, h_ref = _pair_form_reference(loss, s, y, m)
            assert torch.equal(g, g_ref) and torch.equal(h, h_ref)


def test_what_pair_forms_keep_is_counted_and_given_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each form reserves its (B, M, M) weights in the scores' dtype; a form that changes dtype
    gives the old reservation back; a form over the budget keeps nothing; a form that is
    collected gives its reservation back."""
    import gc

    from ndcglab.losses import pairwise

    s, y, m = _batch()
    cells = s.shape[0] * s.shape[1] ** 2
    gc.collect()
    base = pairwise._kept[0]
    monkeypatch.setattr(pairwise, "KEEP_BYTES", base + 10 * cells)
    a = get_loss("lambdarank").closed_form(y, m)
    b = get_loss("ranknet").closed_form(y, m)
    a.grad_hess(s)
    assert pairwise._kept[0] == base + 8 * cells
    a.grad_hess(s.to(torch.float32))  # float32 now: the float64 weights are given back
    assert pairwise._kept[0] == base + 4 * cells
    b.grad_hess(s)  # 8 more bytes a cell would exceed the budget: b keeps nothing
    assert pairwise._kept[0] == base + 4 * cells and b.__dict__.get("_bound") is None
    b.grad_hess(s.to(torch.float32))  # 4 bytes a cell fit
    assert pairwise._kept[0] == base + 8 * cells
    del a, b
    gc.collect()
    assert pairwise._kept[0] == base


def test_a_copied_or_pickled_pair_form_binds_its_own_weights() -> None:
    """A copy (or an unpickled form) does not share the original's bound weights or their
    reservation, and gives the same derivatives."""
    import copy
    import pickle

    s, y, m = _batch()
    form = get_loss("lambdarank@3").closed_form(y, m)
    g, h = form.grad_hess(s)
    for other in (copy.copy(form), copy.deepcopy(form), pickle.loads(pickle.dumps(form))):
        assert "_bound" not in other.__dict__
        g2, h2 = other.grad_hess(s)
        assert torch.equal(g, g2) and torch.equal(h, h2)
        assert other.__dict__["_bound"] is not form.__dict__["_bound"]


@pytest.mark.parametrize("spec", PAIR_SPECS)
def test_pair_weight_rows_are_the_rows_of_pair_weights(spec: str) -> None:
    """``pair_weight_rows`` gives ``pair_weights`` one block of rows at a time, bit for bit,
    in both dtypes, for blocks of 1, 3 and all rows."""
    loss = get_loss(spec)
    s0, y, m = _batch([*_LISTS, ([0, -1, -1, -2], [0.4, 0.9, -0.3, 0.0])])
    for dtype in (torch.float64, torch.float32):
        s = torch.round(s0 * 2).div(2).to(dtype).masked_fill(~m, 0.0)  # tied scores too
        whole = loss.pair_weights(s, y, m)
        rows = loss.pair_weight_rows(s, y, m)
        width = s.shape[1]
        for step in (1, 3, width):
            blocks = [rows(lo, min(width, lo + step)) for lo in range(0, width, step)]
            assert torch.equal(torch.cat(blocks, dim=1), whole), (dtype, step)


@pytest.mark.parametrize("spec", PAIR_SPECS)
def test_a_long_list_is_derived_in_blocks_of_pair_rows(
    spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch whose pair matrices exceed ``PAIR_BUDGET`` (here made small) goes through the
    pair form in blocks of rows: the same gradient and Hessian diagonal as in one piece, to
    the last bits of the column sums (added block by block); padding stays exactly 0."""
    from ndcglab.losses import _ops

    loss = get_loss(spec)
    s, y, m = _batch()
    whole = loss.closed_form(y, m).grad_hess(s)
    b, width = s.shape
    used = []
    original = type(loss).pair_weight_rows

    def spy(self, *args):
        used.append(True)
        return original(self, *args)

    monkeypatch.setattr(type(loss), "pair_weight_rows", spy)
    for budget in (b * width, 3 * b * width):  # blocks of 1 and of 3 rows
        monkeypatch.setattr(_ops, "PAIR_BUDGET", budget)
        g, h = loss.closed_form(y, m).grad_hess(s)
        np.testing.assert_allclose(g.numpy(), whole[0].numpy(), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(h.numpy(), whole[1].numpy(), rtol=1e-12, atol=1e-15)
        assert torch.all(g[~m] == 0) and torch.all(h[~m] == 0)
    assert len(used) == 2
