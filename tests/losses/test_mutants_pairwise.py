"""Rules of the pairwise and listwise losses that their contract and oracle tests leave open:
the dtype of pair weights and closed forms, and lists whose ideal DCG@k is 0. See
tests/MUTANTS.md."""

from __future__ import annotations

import pytest
import torch

from ndcglab.losses import get_loss

_S = torch.tensor(
    [[0.3, -1.2, 0.8, 0.1, 0.0], [1.5, 0.2, -0.4, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]],
    dtype=torch.float32,
)
_Y = torch.tensor([[2.0, 0, 1, 3, 0], [1, 1, 0, 0, 0], [0, 0, 0, 0, 0]], dtype=torch.float64)
_MASK = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 0, 0], [0, 0, 0, 0, 0]], dtype=torch.bool)


@pytest.mark.parametrize(
    "spec",
    ["ranknet", "ranknet(weight=label)", "ranknet(weight=gain)", "lambdarank", "lambdarank@2"],
)
def test_pair_weights_are_in_the_scores_dtype_and_read_labels_in_it(spec: str) -> None:
    """Pair weights come in the scores' dtype, computed from the labels converted to it first:
    float64 labels give the same weights, bit for bit, as the same labels in float32."""
    loss = get_loss(spec)
    w = loss.pair_weights(_S, _Y, _MASK)
    assert w.dtype == torch.float32
    assert torch.equal(w, loss.pair_weights(_S, _Y.float(), _MASK))


def test_squared_closed_form_scale_has_the_labels_dtype() -> None:
    form = get_loss("squared").closed_form(_Y, _MASK)
    assert form is not None and form.scale.dtype == torch.float64
    assert torch.equal(form.scale, 2.0 * _MASK.double())


def test_listnet_closed_form_mass_is_one_per_non_empty_list() -> None:
    """The target distribution's mass: 1 for a list with documents, 0 for an empty one, in the
    labels' dtype."""
    form = get_loss("listnet").closed_form(_Y, _MASK)
    assert form is not None and form.mass.dtype == torch.float64
    assert form.mass.flatten().tolist() == [1.0, 1.0, 0.0]


def test_lambdarank_list_with_zero_ideal_dcg_has_no_loss_and_no_nan_gradient() -> None:
    """Labels -1 and 0 with the linear gain: two label levels, but IDCG@1 = 0 (the best gain is
    0), so ΔNDCG@1 is undefined and the list has no loss; the other list's loss is unchanged."""
    loss = get_loss("lambdarank(gain=linear)@1")
    y = torch.tensor([[-1.0, 0, -1, -1], [2, 0, 1, 0]], dtype=torch.float64)
    s = torch.tensor(
        [[0.5, -0.3, 0.2, 0.9], [0.1, 0.4, -0.2, 0.3]], requires_grad=True, dtype=torch.float64
    )
    out = loss.per_list(s, y)
    assert out.has_loss.tolist() == [False, True]
    assert out.values[0].item() == 0.0
    alone = loss.per_list(s[1:].detach(), y[1:])
    assert torch.equal(out.values[1:].detach(), alone.values)
    loss(s, y, reduction="mean").backward()
    assert s.grad is not None and torch.isfinite(s.grad).all()
    assert s.grad[0].tolist() == [0.0, 0.0, 0.0, 0.0]
