"""LambdaRank's ``|ΔNDCG@k|`` and loss value against slow loops written here, on the inputs where a
wrong comparison or a wrong mask would show: an ideal DCG of exactly 1 (one document of label 1
at the top, exp2 gain, log discount), padding inside a batch, a list with no relevant document.

The reference uses its own gains ``2^y − 1`` and discounts ``1/log2(1 + r)`` (no ndcglab code), the
ranking by scores descending (distinct scores, so no tie rule is involved), and the definition of
``docs/losses.md``: |ΔNDCG@k_ij| = |G(y_i) − G(y_j)| · |D̃(π(i)) − D̃(π(j))| / IDCG@k, D̃(r) = D(r)
for r ≤ k and 0 beyond; LambdaRank sums |ΔNDCG@k_ij| · log(1 + exp(−σ(s_i − s_j))) over the pairs
with y_i > y_j; lists with IDCG@k = 0 have no loss.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ndcglab.losses import get_loss, lambdarank_delta  # noqa: E402

if TYPE_CHECKING:
    from torch import Tensor

LISTS: list[tuple[list[float], list[float]]] = [
    ([1, 0], [0.2, 0.9]),  # IDCG = 1 exactly
    ([1, 0, 0], [-0.3, 0.5, 0.1]),  # IDCG = 1 exactly, three documents
    ([0, 0, 0, 0], [0.4, -0.1, 0.3, 0.0]),  # IDCG = 0: no loss, Δ = 0
    ([2, 0, 1, 3, 0, 1], [0.1, 1.3, -0.7, 0.25, 0.6, -0.2]),
    ([1], [0.5]),
]


def _gain(y: float) -> float:
    return 2.0**y - 1.0


def _disc(r: int) -> float:
    return 1.0 / math.log2(1.0 + r)


def _slow(y: list[float], s: list[float], k: int | None) -> tuple[np.ndarray, float, float]:
    """(Δ matrix, LambdaRank loss with σ = 1, IDCG@k) for one list, by loops."""
    n = len(y)
    kk = n if k is None else min(k, n)
    order = sorted(range(n), key=lambda i: -s[i])
    pos = {d: r + 1 for r, d in enumerate(order)}
    dt = [(_disc(pos[i]) if pos[i] <= kk else 0.0) for i in range(n)]
    ideal = sorted((_gain(v) for v in y), reverse=True)
    idcg = sum(ideal[r] * _disc(r + 1) for r in range(kk))
    delta = np.zeros((n, n))
    loss = 0.0
    if idcg > 0:
        for i in range(n):
            for j in range(n):
                delta[i, j] = abs(_gain(y[i]) - _gain(y[j])) * abs(dt[i] - dt[j]) / idcg
                if y[i] > y[j]:
                    loss += delta[i, j] * math.log1p(math.exp(-(s[i] - s[j])))
    return delta, loss, idcg


def _padded() -> tuple[Tensor, Tensor, Tensor]:
    width = max(len(y) for y, _ in LISTS) + 1  # at least one padding slot everywhere
    b = len(LISTS)
    y = torch.zeros(b, width, dtype=torch.float64)
    s = torch.full((b, width), 9.0, dtype=torch.float64)  # padding would rank first if counted
    m = torch.zeros(b, width, dtype=torch.bool)
    for i, (yy, ss) in enumerate(LISTS):
        y[i, : len(yy)] = torch.tensor(yy, dtype=torch.float64)
        s[i, : len(ss)] = torch.tensor(ss, dtype=torch.float64)
        m[i, : len(yy)] = True
    return s, y, m


def test_ideal_dcg_of_one_is_a_list_with_loss() -> None:
    """The slow loop's IDCG of the first two lists is exactly 1: the case ``idcg > 0`` must keep."""
    assert _slow(*LISTS[0], None)[2] == 1.0 and _slow(*LISTS[1], None)[2] == 1.0


@pytest.mark.parametrize("k", [None, 1, 2, 3])
def test_lambdarank_delta_matches_slow_loop_with_padding(k: int | None) -> None:
    s, y, m = _padded()
    d = lambdarank_delta(s, y, m, k=k).numpy()
    for b, (yy, ss) in enumerate(LISTS):
        n = len(yy)
        ref, _, _ = _slow(yy, ss, k)
        np.testing.assert_allclose(d[b, :n, :n], ref, rtol=1e-12, atol=1e-15)
        # every pair with a padding member is exactly 0
        assert np.all(d[b, n:, :] == 0.0) and np.all(d[b, :, n:] == 0.0)
        assert np.all(np.isfinite(d[b]))


@pytest.mark.parametrize("k", [None, 1, 2, 3])
def test_lambdarank_loss_matches_slow_loop(k: int | None) -> None:
    s, y, m = _padded()
    loss = get_loss("lambdarank" if k is None else f"lambdarank@{k}")
    values = loss(s, y, m).numpy()
    for b, (yy, ss) in enumerate(LISTS):
        _, ref, _ = _slow(yy, ss, k)
        assert values[b] == pytest.approx(ref, rel=1e-12, abs=1e-15)
    # the IDCG = 1 lists have a positive loss (not "no loss")
    assert values[0] > 0.1 and values[1] > 0.1
