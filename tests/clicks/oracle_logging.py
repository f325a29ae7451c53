"""A small, independent simulator for the estimator and learner tests: Plackett–Luce logging over
short lists (exact placement probabilities by enumerating every ordered prefix), position-based
clicks with an optional affine trust-bias term. Written from the models' definitions, vectorised,
and independent of :mod:`ndcglab.clicks.simulate`."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ndcglab.clicks import ClickLog


@dataclass
class World:
    boundaries: np.ndarray  # (Q + 1,)
    relevance: np.ndarray  # (N,) click relevance r_d in [0, 1]
    logging_scores: np.ndarray  # (N,) Plackett–Luce log-weights of the logging policy
    placement: np.ndarray  # (N, k) exact P(row shown at position j)
    k: int
    n_per_query: int


def make_world(seed: int, n_queries: int = 6, n_docs: int = 5, k: int = 3) -> World:
    rng = np.random.default_rng(seed)
    n = n_queries * n_docs
    b = np.arange(0, n + 1, n_docs, dtype=np.int64)
    rel = rng.uniform(0.0, 1.0, n)
    logit = rng.normal(0.0, 0.7, n)
    placement = np.zeros((n, k))
    prefixes = _prefixes(n_docs, k)  # every ordered top-k, (P, k)
    for q in range(n_queries):
        w = np.exp(logit[b[q] : b[q + 1]])
        wp = w[prefixes]
        left = w.sum() - np.concatenate([np.zeros((len(wp), 1)), np.cumsum(wp, 1)[:, :-1]], 1)
        p = np.prod(wp / left, axis=1)  # Plackett–Luce probability of each prefix
        for j in range(k):
            placement[b[q] : b[q + 1], j] = np.bincount(prefixes[:, j], p, minlength=n_docs)
    return World(b, rel, logit, placement, k, n_docs)


_PREFIXES: dict[tuple[int, int], np.ndarray] = {}


def _prefixes(n: int, k: int) -> np.ndarray:
    if (n, k) not in _PREFIXES:
        _PREFIXES[n, k] = np.array(list(itertools.permutations(range(n), k)), dtype=np.int64)
    return _PREFIXES[n, k]


def simulate(
    world: World,
    n_sessions: int,
    rng: np.random.Generator,
    alpha: np.ndarray,
    beta: np.ndarray | None = None,
) -> ClickLog:
    """``n_sessions`` sessions, queries uniform; clicks ``P = α_j·r_d + β_j``."""
    nq = len(world.boundaries) - 1
    m, k = world.n_per_query, world.k
    q = rng.integers(0, nq, n_sessions)
    logit = world.logging_scores.reshape(nq, m)[q]
    gumbel = logit + rng.gumbel(size=(n_sessions, m))
    shown = np.argsort(-gumbel, axis=1)[:, :k]  # Plackett–Luce top-k via Gumbel
    rows = world.boundaries[q][:, None] + shown
    p_click = alpha[None, :k] * world.relevance[rows]
    if beta is not None:
        p_click = p_click + beta[None, :k]
    click = (rng.random((n_sessions, k)) < p_click).astype(np.int8)
    prop = world.placement[rows, np.arange(k)[None, :]]
    return ClickLog(
        session=np.repeat(np.arange(n_sessions), k),
        query=np.repeat(q, k),
        doc=rows.reshape(-1),
        position=np.tile(np.arange(1, k + 1), n_sessions),
        click=click.reshape(-1),
        propensity=prop.reshape(-1),
        qids=np.array([str(i) for i in range(nq)]),
        meta={"k": k},
    )


def true_dcg(world: World, scores: np.ndarray, discount: np.ndarray, k: int) -> np.ndarray:
    """DCG@k of the ranking by ``scores`` per query, gains = click relevance (a slow loop)."""
    out = []
    b = world.boundaries
    for q in range(len(b) - 1):
        s = scores[b[q] : b[q + 1]]
        order = sorted(range(len(s)), key=lambda i: (-s[i], i))
        out.append(sum(discount[j] * world.relevance[b[q] + order[j]] for j in range(k)))
    return np.array(out)
