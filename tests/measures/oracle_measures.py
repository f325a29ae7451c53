"""Slow, obvious reference implementations of the measures (the oracle of the property tests).

Written from the formulas in docs/measures.md, one query at a time, with plain Python loops and
no code from ``ndcglab.measures`` at all: gains, discounts and tie rules are re-implemented here.
``ties="average"`` is computed by brute force: the mean of the measure over *every* order of
every group of tied scores (so keep lists short).
"""

from __future__ import annotations

import itertools
import math
import random

# ----------------------------------------------------------------------------- primitives


def gain(name: str, y: float) -> float:
    if name == "exp2":
        return 2.0**y - 1.0
    if name == "linear":
        return float(y)
    if name == "letor":
        return {0.0: 0.0, 1.0: 1.0, 2.0: 3.0}.get(float(y), 0.0)
    raise ValueError(name)


def discount(name: str, r: int, n: int) -> float:
    """D(r) for a 1-based position r in a list of n documents."""
    if name == "log":
        return 1.0 / math.log2(1.0 + r)
    if name.startswith("log:"):
        b = float(name[4:])
        return math.log(b) / math.log(1.0 + r)
    if name == "zipf":
        return 1.0 / r
    if name.startswith("power:"):
        return r ** (-float(name[6:]))
    if name.startswith("exp:"):
        return float(name[4:]) ** (-r)
    if name == "linear":
        return float(n - r)
    if name == "letor":
        return 1.0 if r <= 2 else 1.0 / math.log2(r)
    raise ValueError(name)


def is_rel(rel: str, y: float) -> bool:
    if rel == "letor":
        return y in (1.0, 2.0)
    return y >= float(rel)


# ----------------------------------------------------------------------------- orders


def orders(scores, labels, ties, docids=None, values=None):
    """Every ranking order (list of indices) the tie rule allows, each equally likely.

    Order-based rules give one order; ``average`` gives all orders of the tied groups.
    ``values``: per-document gain/relevance for pessimistic/optimistic.
    """
    n = len(scores)
    idx = list(range(n))
    if ties == "input":
        return [sorted(idx, key=lambda i: (-scores[i], i))]
    if ties == "docid":
        # score descending, then docid descending (string comparison), then input order
        by_id = sorted(idx, key=lambda i: (-scores[i], _neg_str_key(docids[i]), i))
        return [by_id]
    if ties == "pessimistic":
        return [sorted(idx, key=lambda i: (-scores[i], values[i], i))]
    if ties == "optimistic":
        return [sorted(idx, key=lambda i: (-scores[i], -values[i], i))]
    if ties == "average":
        groups: dict[float, list[int]] = {}
        for i in idx:
            groups.setdefault(scores[i], []).append(i)
        keys = sorted(groups, reverse=True)
        out = []
        for combo in itertools.product(*(itertools.permutations(groups[k]) for k in keys)):
            out.append([i for part in combo for i in part])
        return out
    raise ValueError(ties)


def _neg_str_key(s: str):
    """A key sorting strings in descending order."""
    return (*tuple(-ord(c) for c in s), 1)


# ----------------------------------------------------------------------------- measures


def dcg_of(order, labels, g, d, k, n_all):
    tot = 0.0
    for r, i in enumerate(order, start=1):
        if k is not None and r > k:
            break
        tot += gain(g, labels[i]) * discount(d, r, n_all)
    return tot


def idcg_of(all_labels, g, d, k):
    n_all = len(all_labels)
    ideal = sorted((gain(g, y) for y in all_labels), reverse=True)
    tot = 0.0
    for r, v in enumerate(ideal, start=1):
        if k is not None and r > k:
            break
        tot += v * discount(d, r, n_all)
    return tot


def fraction_k(c: float, n: int, rounding: str) -> int:
    x = c * n
    if rounding == "ceil":
        k = math.ceil(x - 1e-9)
    elif rounding == "floor":
        k = math.floor(x + 1e-9)
    else:
        k = math.floor(x + 0.5 + 1e-9)
    return max(k, 1) if n > 0 else 0


def ndcg(
    labels,
    scores,
    *,
    gain_name="exp2",
    disc="log",
    k=None,
    ties="input",
    empty="zero",
    short="clip",
    docids=None,
    unretrieved=(),
):
    """NDCG@k of one query; ``unretrieved``: labels of judged docs not in the ranking.
    Returns (value, is_empty); value None means skipped."""
    all_labels = list(labels) + list(unretrieved)
    n = len(labels)
    z = idcg_of(all_labels, gain_name, disc, k)
    if z == 0:
        return {"zero": 0.0, "one": 1.0, "skip": None, "error": "error"}[empty], True
    if k is not None and short == "zero" and k > n:
        return 0.0, False
    vals = [gain(gain_name, y) for y in labels]
    os_ = orders(scores, labels, ties, docids, vals)
    d = sum(dcg_of(o, labels, gain_name, disc, k, len(all_labels)) for o in os_) / len(os_)
    return d / z, False


def dcg(labels, scores, *, gain_name="exp2", disc="log", k=None, ties="input", docids=None):
    vals = [gain(gain_name, y) for y in labels]
    os_ = orders(scores, labels, ties, docids, vals)
    return sum(dcg_of(o, labels, gain_name, disc, k, len(labels)) for o in os_) / len(os_)


def mean_ndcg(labels, scores, *, gain_name="letor", disc="letor", ties="input", empty="zero"):
    n = len(labels)
    if idcg_of(labels, gain_name, disc, None) == 0:
        return {"zero": 0.0, "one": 1.0, "skip": None}[empty], True
    vals = [gain(gain_name, y) for y in labels]
    os_ = orders(scores, labels, ties, None, vals)
    tot = 0.0
    for o in os_:
        acc = 0.0
        for k in range(1, n + 1):
            z = idcg_of(labels, gain_name, disc, k)
            acc += dcg_of(o, labels, gain_name, disc, k, n) / z if z else 0.0
        tot += acc / n
    return tot / len(os_), False


def precision(labels, scores, *, k=None, rel="1", ties="input", short="pad", docids=None):
    n = len(labels)
    vals = [1.0 if is_rel(rel, y) else 0.0 for y in labels]
    os_ = orders(scores, labels, ties, docids, vals)
    if k is None:
        kk, div = n, n
    else:
        kk = k
        if short == "zero" and k > n:
            return 0.0
        div = min(k, n) if short == "clip" else k
    if div == 0:
        return 0.0
    tot = 0.0
    for o in os_:
        tot += sum(vals[i] for i in o[:kk]) / div
    return tot / len(os_)


def average_precision(
    labels,
    scores,
    *,
    k=None,
    rel="1",
    ties="input",
    empty="zero",
    denom="all",
    docids=None,
    unretrieved=(),
):
    vals = [1.0 if is_rel(rel, y) else 0.0 for y in labels]
    R = sum(vals) + sum(1 for y in unretrieved if is_rel(rel, y))
    if R == 0:
        return {"zero": 0.0, "one": 1.0, "skip": None}[empty], True
    n = len(labels)
    os_ = orders(scores, labels, ties, docids, vals)
    tot = 0.0
    for o in os_:
        hits = 0
        s = 0.0
        for r, i in enumerate(o, start=1):
            if k is not None and r > k:
                break
            if vals[i]:
                hits += 1
                s += hits / r
        den = R if (k is None or denom == "all") else min(R, min(k, n))
        tot += s / den if den else 0.0
    return tot / len(os_), False


def reciprocal_rank(labels, scores, *, k=None, rel="1", ties="input", empty="zero", docids=None):
    vals = [1.0 if is_rel(rel, y) else 0.0 for y in labels]
    if sum(vals) == 0:
        return {"zero": 0.0, "one": 1.0, "skip": None}[empty], True
    os_ = orders(scores, labels, ties, docids, vals)
    tot = 0.0
    for o in os_:
        for r, i in enumerate(o, start=1):
            if k is not None and r > k:
                break
            if vals[i]:
                tot += 1.0 / r
                break
    return tot / len(os_), False


# ----------------------------------------------------------------------------- linear NDCG


def linear_dcg_of_order(labels, order):
    n = len(labels)
    return sum(labels[i] * (n - r) for r, i in enumerate(order, start=1))


def pairwise_loss_bruteforce(labels, scores, ties="input"):
    """R(f) by the O(n^2) double sum; ``ties``: ``input`` (earlier document ranks first),
    ``average`` (a tied pair counts half), ``strict`` (the paper's I[f(x_i) < f(x_j)] only)."""
    n = len(labels)
    tot = 0.0
    for i in range(n):
        for j in range(n):
            if labels[i] <= labels[j]:
                continue
            gap = labels[i] - labels[j]
            if scores[i] < scores[j]:
                tot += gap
            elif scores[i] == scores[j]:
                if ties == "average":
                    tot += gap / 2
                elif ties == "input" and j < i:
                    tot += gap
    return tot


def random_keys(n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [rng.random() for _ in range(n)]
