"""Losses on inputs where a changed operator or constant shows (found by mutation testing, see
CONTRIBUTING.md): dtypes of the pair weights, AdaRank's refusal, by-hand values."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")

from ndcglab.losses import NotDifferentiableError, get_loss  # noqa: E402


@pytest.mark.parametrize("spec", ["ranknet", "ranknet(weight=label)", "lambdarank@2"])
def test_pair_weights_are_in_the_scores_dtype(spec: str) -> None:
    # integer labels and float64 scores: the weights are float64, the pairs with y_i > y_j
    scores = torch.tensor([[0.3, -0.2, 0.9]], dtype=torch.float64)
    labels = torch.tensor([[2, 0, 1]])
    mask = torch.ones(1, 3, dtype=torch.bool)
    loss: Any = get_loss(spec)
    w = loss.pair_weights(scores, labels, mask)
    assert w.dtype == torch.float64 and w.shape == (1, 3, 3)
    nz = {(i, j) for i in range(3) for j in range(3) if w[0, i, j] != 0}
    assert nz == {(0, 1), (0, 2), (2, 1)}
    if spec == "ranknet":
        assert w[0, 0, 1].item() == 1 / 3  # each of the |P| = 3 pairs weighs 1/|P|
    if spec == "ranknet(weight=label)":
        assert w[0, 0, 1].item() == 2 / 3 and w[0, 2, 1].item() == 1 / 3  # (y_i - y_j)/|P|


def test_adarank_refuses_to_be_called_with_the_fix() -> None:
    loss = get_loss("adarank")
    scores = torch.zeros(1, 2)
    labels = torch.tensor([[1.0, 0.0]])
    mask = torch.ones(1, 2, dtype=torch.bool)
    want = (
        "'adarank' is trained by boosting, not by gradient: it has no per-list loss to evaluate "
        "or differentiate. Fix: train it with ndcglab.models.adarank (e.g. "
        "NDCGRanker(loss='adarank')), or pick a differentiable loss "
        "(ndcglab.losses.available_losses(kind='differentiable'))"
    )
    for call in (
        lambda: loss(scores, labels, mask),
        lambda: loss(scores=scores, labels=labels, mask=mask),
        lambda: loss.per_list(scores, labels, mask),
    ):
        with pytest.raises(NotDifferentiableError) as e:
            call()
        assert str(e.value) == want


def test_consistent_norm_is_printed_as_written() -> None:
    # the convention printed in reports: z for the full DCG norm, zK for IDCG@K
    assert get_loss("consistent_listnet").convention["norm"] == "z"
    assert get_loss("consistent_listnet(norm=z3)").convention["norm"] == "z3"


# ------------------------------------------------------- norms and blocked pairs (_ops)
def test_norms_below_one_and_with_one_nonzero_entry_by_hand() -> None:
    from ndcglab.losses import _ops

    # ‖(0.3, 0.4)‖₂ = 0.5 (a norm below 1 is a norm, not "zero"); ‖0‖ is 1 by convention
    n2, pos2 = _ops.norm2(torch.tensor([[0.3, 0.4], [0.0, 0.0]], dtype=torch.float64))
    assert n2.tolist() == pytest.approx([0.5, 1.0], rel=1e-15) and pos2.tolist() == [True, False]
    # one non-zero entry: ‖(0, −3)‖_q = 3 for every q; (1, 1) under q = 2: √2; under q = 1: 2
    s = torch.tensor([[0.0, -3.0], [1.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
    q = torch.tensor([[2.0], [2.0], [1.0]], dtype=torch.float64)
    nq, posq = _ops.norm_q(s, q)
    assert nq.tolist() == pytest.approx([3.0, 2**0.5, 2.0], rel=1e-15)
    assert posq.tolist() == [True, True, True]


def test_cosine_loss_is_scale_invariant_in_the_scores_also_below_norm_one() -> None:
    # cos(s, g) does not change when s is multiplied by c > 0 (the definition), whatever ‖s‖ is
    loss: Any = get_loss("cosine")
    labels = torch.tensor([[2, 0, 1, 1]])
    mask = torch.ones(1, 4, dtype=torch.bool)
    s = torch.tensor([[0.3, -0.2, 0.1, 0.05]], dtype=torch.float64)  # ‖s‖ < 1
    ref = loss(s * 100.0, labels, mask)
    for c in (0.01, 1.0, 3.0):
        assert loss(s * c, labels, mask).item() == pytest.approx(ref.item(), rel=1e-12)


@pytest.mark.parametrize("spec", ["ranknet", "lambdarank"])
def test_blocked_pairs_without_gradients_equal_one_block(spec: str, monkeypatch) -> None:
    # a pair budget of a few entries splits every list into blocks: under no_grad the blocks run
    # directly (no checkpoint), and their sum must be the unblocked value
    from ndcglab.losses import _ops

    g = torch.Generator().manual_seed(3)
    s = torch.randn(2, 7, generator=g, dtype=torch.float64)
    y = torch.randint(0, 3, (2, 7), generator=g)
    mask = torch.ones(2, 7, dtype=torch.bool)
    mask[1, 5:] = False
    loss: Any = get_loss(spec)
    with torch.no_grad():
        whole = loss(s, y, mask)
        monkeypatch.setattr(_ops, "PAIR_BUDGET", 2 * 7)  # one row of pairs per block
        blocked = loss(s, y, mask)
    assert torch.allclose(blocked, whole, rtol=1e-13, atol=0.0)


def test_cs_listmle_constant_per_list_in_a_padded_batch() -> None:
    # C(y) is a property of each list alone: a padded batch gives each list's own constant, and a
    # list without gain (DCG = 0) gives 0 as documented, not 0/0
    from ndcglab.losses.cs_listmle import cs_listmle_constant

    labels = torch.tensor([[2.0, 0.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    mask = torch.tensor([[True, True, True, False], [True] * 4, [True, True, True, False]])
    for k in (None, 2):
        got = cs_listmle_constant(labels.double(), mask, k=k)
        alone = [
            cs_listmle_constant(torch.tensor([[2.0, 0.0, 1.0]], dtype=torch.float64), k=k),
            cs_listmle_constant(torch.tensor([[1.0, 1.0, 0.0, 0.0]], dtype=torch.float64), k=k),
        ]
        assert got[0].item() == pytest.approx(alone[0].item(), rel=1e-14)
        assert got[1].item() == pytest.approx(alone[1].item(), rel=1e-14)
        assert got[2].item() == 0.0
        assert alone[0].item() != pytest.approx(alone[1].item(), rel=1e-3)  # the lists differ
