"""Small reference losses and helpers for the GBDT tests.

The stand-in losses are written here from the formulas of docs/losses.md (padded ``(B, M)``
tensors and a mask), independently of :mod:`ndcglab.losses`, so the objective's machinery is
tested even where the registry is absent; the registered losses are tested as well when present.
"""

from __future__ import annotations

import numpy as np
import torch

NEG = -1e30


class ListNet:
    """−Σ softmax(y)_j log softmax(s)_j."""

    name = "listnet"

    def __call__(self, s, y, mask):
        p = torch.softmax(y.masked_fill(~mask, NEG), 1) * mask
        ls = torch.log_softmax(s.masked_fill(~mask, NEG), 1)
        return -(p * ls.masked_fill(~mask, 0.0)).sum(1)


def _u(y, mask, k=None):
    g = (2.0**y - 1.0) * mask
    z = g.sort(1, descending=True).values
    d = 1.0 / torch.log2(torch.arange(2, y.shape[1] + 2, dtype=y.dtype))
    if k is not None:
        d[k:] = 0.0
    norm = (z * d).sum(1, keepdim=True)
    return torch.where(norm > 0, g / norm.clamp_min(1e-300), torch.zeros_like(g))


class ConsistentListNet:
    """KL̃(u ‖ exp s) up to a constant: Σ exp(s) − u·s."""

    name = "consistent_listnet"

    def __call__(self, s, y, mask):
        u = _u(y, mask)
        return ((torch.exp(s.masked_fill(~mask, 0.0)) - u * s) * mask).sum(1)


class ConsistentSquared:
    """‖s − u‖²."""

    name = "consistent_squared"

    def __call__(self, s, y, mask):
        u = _u(y, mask)
        return (((s - u) ** 2) * mask).sum(1)


class Cosine:
    """1 − cos(s, G(y)) — no closed form registered: exercises the autograd paths."""

    name = "cosine"

    def __call__(self, s, y, mask):
        s = s * mask
        g = (2.0**y - 1.0) * mask
        return 1.0 - (s * g).sum(1) / (s.norm(dim=1) * g.norm(dim=1)).clamp_min(1e-12)


class RankNet:
    """Σ_{y_i > y_j} log(1 + exp(−(s_i − s_j))) — a pairwise loss (no closed form here)."""

    name = "ranknet"

    def __call__(self, s, y, mask):
        d = s[:, :, None] - s[:, None, :]
        better = (y[:, :, None] > y[:, None, :]) & mask[:, :, None] & mask[:, None, :]
        return (torch.nn.functional.softplus(-d) * better).sum((1, 2))


class Named:
    """A loss that claims a closed-form name but is not of that form (tests the fallback)."""

    def __init__(self, inner, name):
        self.inner, self.name = inner, name

    def __call__(self, s, y, mask):
        return self.inner(s, y, mask)


def random_lists(seed: int = 0, n_queries: int = 30, max_len: int = 25, levels: int = 3):
    """Flat labels, scores and boundaries of random lists (lengths 1..max_len, graded labels)."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(1, max_len + 1, size=n_queries)
    b = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    y = rng.integers(0, levels, size=b[-1]).astype(np.float64)
    s = rng.normal(size=b[-1])
    return y, s, b


def reference_grad_hess(loss, y, s, b, *, generator_seed=None):
    """Per list, one at a time and unpadded: autograd gradient and the exact Hessian diagonal from
    ``torch.autograd.functional.hessian``; also the full Hessians (for the Hutchinson bound)."""
    g = np.zeros_like(s)
    h = np.zeros_like(s)
    hs = []
    for q in range(len(b) - 1):
        lo, hi = b[q], b[q + 1]
        st = torch.tensor(s[lo:hi], dtype=torch.float64)[None]
        yt = torch.tensor(y[lo:hi], dtype=torch.float64)[None]
        mk = torch.ones_like(st, dtype=torch.bool)

        def f(x, yt=yt, mk=mk):
            kw = {}
            if generator_seed is not None:
                kw["generator"] = torch.Generator().manual_seed(generator_seed)
            return loss(x, yt, mk, **kw).sum()

        x = st.clone().requires_grad_(True)
        (gq,) = torch.autograd.grad(f(x), x, allow_unused=True)
        H = torch.autograd.functional.hessian(f, st)[0, :, 0, :]
        g[lo:hi] = 0.0 if gq is None else gq[0].numpy()
        h[lo:hi] = np.diag(H.numpy())
        hs.append(H.numpy())
    return g, h, hs


def fd_hessian_diag(loss, y, s, b, eps=1e-5):
    """Hessian diagonal by central differences of the loss's autograd *gradient* (first order
    only): an oracle that does not rely on second-order autograd."""
    h = np.zeros_like(s)
    for q in range(len(b) - 1):
        lo, hi = b[q], b[q + 1]
        yt = torch.tensor(y[lo:hi], dtype=torch.float64)[None]
        mk = torch.ones_like(yt, dtype=torch.bool)
        for i in range(hi - lo):
            gs = []
            for sign in (1.0, -1.0):
                x = torch.tensor(s[lo:hi], dtype=torch.float64)[None]
                x[0, i] += sign * eps
                x.requires_grad_(True)
                (gq,) = torch.autograd.grad(loss(x, yt, mk).sum(), x, allow_unused=True)
                gs.append(0.0 if gq is None else float(gq[0, i]))
            h[lo + i] = (gs[0] - gs[1]) / (2 * eps)
    return h
