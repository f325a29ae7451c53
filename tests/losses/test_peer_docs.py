"""What docs/losses.md says about peers, checked against transcriptions of their code.

* allRank's ``neuralNDCG_transposed`` (``allrank/models/losses/neuralNDCG.py`` with
  ``sinkhorn_scaling`` and ``deterministic_neural_sort`` of ``loss_utils.py``): its Sinkhorn
  rounds divide by the column sums, then by the row sums (rows last) for both functions, and the
  transposed function then forms the expected discounts P̂ᵀD. G·(P̂ᵀD) = (P̂G)·D, so it equals
  ndcglab's ``neural_ndcg`` with ``form=standard`` (rows last), not ``form=transposed``
  (columns last), which differs until Sinkhorn has converged.
* rax's ``softmax_loss`` (rax >= 0.4): ``-Σ label_fn(y)_j log softmax(s)_j`` with ``label_fn``
  keeping the labels as they are by default; ``softmax_ce(target=label)`` (p = y/Σy) equals it
  with ``label_fn=rax.utils.normalize_probabilities`` and is the default divided by Σy.

The transcriptions follow the peers' code line by line for unpadded lists; the numbers are the
peers' formulas evaluated here, never ndcglab's own output.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ndcglab.losses import get_loss  # noqa: E402

DEFAULT_EPS = 1e-10  # allrank.models.losses.DEFAULT_EPS


def allrank_sinkhorn_scaling(mat, tol=1e-6, max_iter=50):
    """allRank's ``sinkhorn_scaling`` without padding: columns (dim 1), then rows (dim 2)."""
    for _ in range(max_iter):
        mat = mat / mat.sum(dim=1, keepdim=True).clamp(min=DEFAULT_EPS)
        mat = mat / mat.sum(dim=2, keepdim=True).clamp(min=DEFAULT_EPS)
        if (
            torch.max(torch.abs(mat.sum(dim=2) - 1.0)) < tol
            and torch.max(torch.abs(mat.sum(dim=1) - 1.0)) < tol
        ):
            break
    return mat


def allrank_neural_sort(s, tau):
    """allRank's ``deterministic_neural_sort`` for unpadded lists (``s``: ``(B, n, 1)``)."""
    n = s.shape[1]
    one = torch.ones((n, 1), dtype=s.dtype)
    a_s = torch.abs(s - s.permute(0, 2, 1))
    b = torch.matmul(a_s, torch.matmul(one, one.T))
    scaling = (n + 1 - 2 * (torch.arange(n, dtype=s.dtype) + 1)).expand(s.shape[0], n)
    c = torch.matmul(s, scaling.unsqueeze(-2))
    p_max = (c - b).permute(0, 2, 1)
    return torch.softmax(p_max / tau, dim=-1)


def allrank_neural_ndcg_transposed(y_pred, y_true, tau=1.0, tol=1e-6, max_iter=50):
    """allRank's ``neuralNDCG_transposed`` per list, as ``1 - NDCG`` (allRank returns the
    negated batch mean): exp2 gain, 1/log2(1 + r) discount, no cut-off."""
    p_hat = allrank_neural_sort(y_pred.unsqueeze(-1), tau)
    p_hat = allrank_sinkhorn_scaling(p_hat, tol=tol, max_iter=max_iter)
    n = y_true.shape[-1]
    discounts = 1.0 / torch.log2(torch.arange(n, dtype=y_pred.dtype) + 2.0)
    expected = torch.matmul(p_hat.permute(0, 2, 1), discounts[None, :, None]).squeeze(-1)
    gains = torch.pow(2.0, y_true) - 1
    ideal = torch.sort(gains, dim=-1, descending=True).values
    idcg = (ideal * discounts).sum(-1)
    return 1.0 - (gains * expected).sum(-1) / idcg


@pytest.fixture()
def lists():
    rng = np.random.default_rng(7)
    s = torch.tensor(rng.normal(scale=2.0, size=(64, 6)))
    y = torch.tensor(rng.integers(0, 4, size=(64, 6)).astype(float))
    y[:, 0] = 3.0  # every list has a relevant document
    return s, y, torch.ones_like(y, dtype=torch.bool)


def test_allrank_transposed_equals_the_standard_form(lists):
    s, y, mask = lists
    peer = allrank_neural_ndcg_transposed(s, y, tol=0.0)  # all 50 rounds, as ndcglab runs them
    standard = get_loss("neural_ndcg")(s, y, mask)
    transposed = get_loss("neural_ndcg(form=transposed)")(s, y, mask)
    assert float((peer - standard).abs().max()) < 1e-12
    gap = float((peer - transposed).abs().max())
    assert gap > 1e-5, gap  # the columns-last form is another matrix until Sinkhorn converges
    # with allRank's own early stop (tolerance 1e-6) the standard form still agrees closely
    early = allrank_neural_ndcg_transposed(s, y)
    assert float((early - standard).abs().max()) < 1e-4


def test_rax_softmax_loss_uses_raw_labels_by_default(lists):
    """rax >= 0.4: ``softmax_loss(s, y) = -Σ y_j log softmax(s)_j`` (``label_fn`` keeps y);
    with ``label_fn=normalize_probabilities`` p = y/Σy, which is ``softmax_ce(target=label)``."""
    s, y, mask = lists
    log_sm = torch.log_softmax(s, dim=-1)
    rax_default = -(y * log_sm).sum(-1)
    rax_normalized = -((y / y.sum(-1, keepdim=True)) * log_sm).sum(-1)
    ours = get_loss("softmax_ce(target=label)")(s, y, mask)
    assert float((ours - rax_normalized).abs().max()) < 1e-12
    np.testing.assert_allclose((rax_default / ours).numpy(), y.sum(-1).numpy(), rtol=1e-12)
