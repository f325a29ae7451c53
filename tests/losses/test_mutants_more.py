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
