"""Seeded synthetic learning-to-rank data with a known generative model.

Generative model (every random draw comes from NumPy generators seeded by ``seed``, so the same
parameters and seed give bit-identical data on any machine and whatever the block size):

1. **List sizes.** ``docs_per_query`` is an int (every list that long), a ``(min, max)`` pair
   (uniform integers, both ends included) or a float *mean*: sizes
   ``n_q = clip(round(exp(mu + list_sigma * z_q)), 1, max_docs)`` with ``z_q ~ N(0, 1)`` and
   ``mu`` solved so that the drawn sizes average exactly that mean (log-normal, long right tail
   like MSLR's list sizes).
2. **Features.** ``x_qi = m_q + z_qi`` (float32), with a query offset ``m_q ~ N(0, query_spread²)``
   per feature and document noise ``z_qi`` with independent, close-to-normal coordinates
   (mean 0, variance 1: the sum of four uniforms, Irwin-Hall, from a counter-based SplitMix64
   hash - fast, and each value depends only on the seed, its row and its column). The offsets
   carry no relevance: only the within-query part ``z`` does (as in real data, where raw
   features shift from query to query).
3. **Latent relevance.** ``t_qi = signal · <w, z_qi> + e_qi``, ``e_qi ~ N(0, 1)``; ``w`` is a unit
   vector over the first ``n_informative`` features, zero elsewhere: a random Gaussian direction
   (``orientation="random"``: about half the informative features point away from relevance), or
   its coordinates' absolute values (``orientation="positive"``: every informative feature is
   oriented as in LETOR data - larger means more relevant on average - with unequal strengths).
   ``w`` is drawn from ``world_seed`` (default 0), not from ``seed``: sets generated with
   different seeds are independent samples of the same ranking problem, so one can train on
   ``seed=1`` and test on ``seed=2`` (give another ``world_seed`` for another problem).
   ``signal`` is the signal-to-noise ratio: 0 makes labels independent of the features; the
   best linear ranker reaches a correlation ``signal / sqrt(1 + signal²)`` with ``t``.
4. **Labels** ``0..L-1`` with ``L = len(label_probs)``:

   * ``label_mode="query"`` - thresholds per query: each query draws label proportions
     ``p_q ~ Dirichlet(label_concentration · label_probs)`` (exactly ``label_probs`` when
     ``label_concentration`` is None), and its documents sorted by ``t`` get labels by those
     proportions (the top ``≈ n_q · p_q[L-1]`` documents get ``L-1``, and so on). Overall the
     labels follow ``label_probs``; short lists may have no relevant document.
   * ``label_mode="global"`` - fixed cut-points on ``t`` (normal quantiles of
     ``N(0, 1 + signal²)``), so the pairs ``(x, y)`` are i.i.d. with ``P(y = l) ≈ label_probs[l]``
     (exact up to the near-normality of ``<w, z>``) - the model of Section 2 of Wang, Wang, Li,
     He, Chen, Liu, "A Theoretical Analysis of NDCG Type Ranking Measures" (COLT 2013).

Named shapes (``make_synthetic(NAME)``):

========== ======== ====================== ========= ================================= ========
name       queries  docs per query         features  label_probs                       labels
========== ======== ====================== ========= ================================= ========
small      12       3..15                  5         (.5, .3, .2)                      query
default    200      20..60 (mean 40)       20        (.6, .3, .1)                      query (*)
web40      40       5000                   40        (.93, .055, .015)                 global
mslr30k    31,531   mean 119.6, 1..1251    136       (.514, .325, .134, .019, .008)     query
========== ======== ====================== ========= ================================= ========

(*) ``default`` is the LETOR-like set: ``orientation="positive"`` and ``signal=1.0`` (a linear
ranker reaches NDCG@10 ≈ 0.74 on an independent sample, the best single feature ≈ 0.66 and a
random ranking ≈ 0.30, LETOR 4.0 conventions); the other sets keep a random orientation and
``signal`` as listed in :data:`SYNTHETIC_SETS`.

``web40`` mimics Wang et al.'s experiment (labels from click thresholds: most documents 0, few 1,
fewer 2); ``mslr30k`` has MSLR-WEB30K's shape (≈3.77M documents, 5 grades with its skew) and is
generated block by block in float32 (about 2 GB of features, some seconds).
Query ids are ``"1".."Q"``; doc ids ``d{qid}-{i}`` (``i`` from 0 in list order).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import SpecError
from .dataset import RankingDataset, boundaries_from_group

__all__ = [
    "SYNTHETIC_PREFIX",
    "SYNTHETIC_SETS",
    "SyntheticParams",
    "estimate_text_size",
    "format_synthetic_spec",
    "is_synthetic_spec",
    "make_synthetic",
    "parse_synthetic_spec",
    "synthetic_params",
]

#: ``orientation`` values: ``"random"`` (Gaussian direction, about half the informative features
#: point away from relevance) or ``"positive"`` (every informative feature points towards it).
ORIENTATIONS = ("random", "positive")

_BLOCK = 1 << 16  # rows per generation block (fixed: the data does not depend on memory limits)


@dataclass(frozen=True)
class SyntheticParams:
    """Parameters of :func:`make_synthetic` (see the module docstring for the model)."""

    n_queries: int = 200
    docs_per_query: int | tuple[int, int] | float = (20, 60)
    n_features: int = 20
    label_probs: tuple[float, ...] = (0.6, 0.3, 0.1)
    signal: float = 1.5
    n_informative: int | None = None
    label_mode: str = "query"
    label_concentration: float | None = 20.0
    query_spread: float = 0.5
    list_sigma: float = 0.8
    max_docs: int | None = None
    world_seed: int = 0
    doc_ids: bool = True
    orientation: str = "random"

    def validate(self) -> SyntheticParams:
        """Check the values; return self. Raises :class:`SpecError` naming the bad field."""

        def bad(name: str, why: str) -> SpecError:
            return SpecError(f"synthetic parameter {name}={getattr(self, name)!r}: {why}")

        if int(self.n_queries) != self.n_queries or self.n_queries < 1:
            raise bad("n_queries", "must be a positive integer")
        if int(self.n_features) != self.n_features or self.n_features < 1:
            raise bad("n_features", "must be a positive integer")
        d = self.docs_per_query
        if isinstance(d, tuple | list):
            if len(d) != 2 or not (1 <= int(d[0]) <= int(d[1])):
                raise bad("docs_per_query", "a (min, max) pair needs 1 <= min <= max")
        elif isinstance(d, bool) or not isinstance(d, int | float | np.integer | np.floating):
            raise bad("docs_per_query", "give an int, a (min, max) pair or a float mean")
        elif d < 1:
            raise bad("docs_per_query", "must be at least 1")
        p = np.asarray(self.label_probs, dtype=np.float64)
        if p.ndim != 1 or len(p) < 2 or (p < 0).any() or abs(p.sum() - 1) > 1e-6:
            raise bad("label_probs", "needs at least two non-negative probabilities summing to 1")
        if not np.isfinite(self.signal) or self.signal < 0:
            raise bad("signal", "must be a finite number >= 0")
        ni = self.n_informative
        if ni is not None and not (1 <= ni <= self.n_features):
            raise bad("n_informative", f"must be between 1 and n_features={self.n_features}")
        if self.label_mode not in ("query", "global"):
            raise bad("label_mode", "choose 'query' or 'global'")
        c = self.label_concentration
        if c is not None and not c > 0:
            raise bad("label_concentration", "must be > 0, or None for fixed proportions")
        if self.max_docs is not None and self.max_docs < 1:
            raise bad("max_docs", "must be >= 1")
        if int(self.world_seed) != self.world_seed or self.world_seed < 0:
            raise bad("world_seed", "must be a non-negative integer")
        if self.orientation not in ORIENTATIONS:
            raise bad("orientation", f"choose one of {', '.join(map(repr, ORIENTATIONS))}")
        return self


#: The named synthetic datasets (shapes and label distributions) :func:`make_synthetic` knows.
SYNTHETIC_SETS: dict[str, SyntheticParams] = {
    "small": SyntheticParams(
        n_queries=12, docs_per_query=(3, 15), n_features=5, label_probs=(0.5, 0.3, 0.2),
        signal=2.0, n_informative=3,
    ),
    "default": SyntheticParams(signal=1.0, orientation="positive"),
    "web40": SyntheticParams(
        n_queries=40, docs_per_query=5000, n_features=40, label_probs=(0.93, 0.055, 0.015),
        signal=1.0, n_informative=20, label_mode="global", label_concentration=None,
    ),
    "mslr30k": SyntheticParams(
        n_queries=31531, docs_per_query=119.6, n_features=136,
        label_probs=(0.514, 0.325, 0.134, 0.019, 0.008), signal=0.8, n_informative=40,
        list_sigma=0.8, max_docs=1251,
    ),
}  # fmt: skip


def synthetic_params(
    name_or_params: str | SyntheticParams | Mapping[str, Any] = "default", **overrides: Any
) -> SyntheticParams:
    """Resolve a set name, a :class:`SyntheticParams` or a dict, apply overrides, validate."""
    if isinstance(name_or_params, SyntheticParams):
        base = name_or_params
    elif isinstance(name_or_params, str):
        if name_or_params not in SYNTHETIC_SETS:
            raise SpecError(
                f"unknown synthetic set {name_or_params!r}; known: {', '.join(SYNTHETIC_SETS)}"
            )
        base = SYNTHETIC_SETS[name_or_params]
    elif isinstance(name_or_params, Mapping):
        base, overrides = SyntheticParams(), {**dict(name_or_params), **overrides}
    else:
        raise SpecError(
            f"make_synthetic needs a set name, SyntheticParams or dict, got {name_or_params!r}"
        )
    fields = {f.name for f in dataclasses.fields(SyntheticParams)}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise SpecError(
            f"unknown synthetic parameter(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(fields))}"
        )
    if "label_probs" in overrides:
        overrides["label_probs"] = tuple(float(x) for x in overrides["label_probs"])
    if isinstance(overrides.get("docs_per_query"), list):
        overrides["docs_per_query"] = tuple(overrides["docs_per_query"])
    return dataclasses.replace(base, **overrides).validate()


# ---------------------------------------------------------------------------- the spec string
#: How a dataset argument names synthetic data: ``synthetic:NAME[:SEED]``.
SYNTHETIC_PREFIX = "synthetic:"


def is_synthetic_spec(text: object) -> bool:
    """Whether a dataset argument names synthetic data (``synthetic:NAME[:SEED]``)."""
    return isinstance(text, str) and text.startswith(SYNTHETIC_PREFIX)


def parse_synthetic_spec(
    text: str, *, default_name: str | None = None, default_seed: int = 0
) -> tuple[str, int]:
    """Split ``synthetic:NAME`` or ``synthetic:NAME:SEED`` into ``(NAME, SEED)``.

    The one parser of this grammar. ``SEED`` is a non-negative integer (``default_seed`` when left
    out). ``NAME`` may be left empty (``synthetic:`` or ``synthetic::3``) only when a
    ``default_name`` is given. The name is not checked here: :func:`make_synthetic` does that.
    Raises :class:`~ndcglab.errors.SpecError` with the fix for anything else.
    """
    if not is_synthetic_spec(text):
        raise SpecError(
            f"{text!r} is not a synthetic dataset spec. Fix: write synthetic:NAME or "
            "synthetic:NAME:SEED, e.g. synthetic:web40:3"
        )
    parts = text[len(SYNTHETIC_PREFIX) :].split(":")
    name = parts[0] or default_name
    if len(parts) > 2 or not name:
        raise SpecError(
            f"bad synthetic dataset spec {text!r}. Fix: write synthetic:NAME or "
            "synthetic:NAME:SEED, e.g. synthetic:web40:3"
        )
    seed = int(default_seed)
    if len(parts) == 2:
        if not parts[1].isdigit():
            raise SpecError(
                f"seed {parts[1]!r} in {text!r} is not a non-negative integer. "
                "Fix: e.g. synthetic:default:1"
            )
        seed = int(parts[1])
    return name, seed


def format_synthetic_spec(name: str, seed: int | None = None) -> str:
    """``synthetic:NAME[:SEED]``, the inverse of :func:`parse_synthetic_spec`."""
    return f"{SYNTHETIC_PREFIX}{name}" + ("" if seed is None else f":{seed}")


def _rng(seed: int, *stream: int) -> np.random.Generator:
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, int(seed) >> 32, *stream])


def _list_sizes(p: SyntheticParams, seed: int) -> np.ndarray:
    rng = _rng(seed, 1)
    d = p.docs_per_query
    q = int(p.n_queries)
    if isinstance(d, tuple | list):
        return rng.integers(int(d[0]), int(d[1]) + 1, size=q).astype(np.int64)
    if isinstance(d, int | np.integer):
        return np.full(q, int(d), dtype=np.int64)
    mean = float(d)
    hi_cap = int(p.max_docs) if p.max_docs is not None else max(1, round(mean * 12))
    z = rng.standard_normal(q)

    def sizes(mu: float) -> np.ndarray:
        return np.clip(np.rint(np.exp(mu + p.list_sigma * z)), 1, hi_cap).astype(np.int64)

    lo, hi = np.log(1.0) - 10, np.log(hi_cap) + 10
    for _ in range(60):  # bisection: mean of the drawn sizes is increasing in mu
        mid = 0.5 * (lo + hi)
        if sizes(mid).mean() < mean:
            lo = mid
        else:
            hi = mid
    a, b = sizes(lo), sizes(hi)
    return b if abs(b.mean() - mean) <= abs(a.mean() - mean) else a


def make_synthetic(
    name_or_params: str | SyntheticParams | Mapping[str, Any] = "default",
    seed: int = 0,
    **overrides: Any,
) -> RankingDataset:
    """Generate a seeded synthetic :class:`RankingDataset` (model and named sets: module doc).

    ``make_synthetic("web40", seed=3)``, ``make_synthetic("default", n_queries=50)``,
    ``make_synthetic({"n_queries": 10, "docs_per_query": 8, "n_features": 4})``.
    Deterministic: the same parameters and seed give identical arrays.
    """
    from scipy.special import ndtri

    p = synthetic_params(name_or_params, **overrides)
    seed = int(seed)
    if seed < 0:
        raise SpecError(f"seed must be a non-negative integer, got {seed}")
    lengths = _list_sizes(p, seed)
    boundaries = boundaries_from_group(lengths)
    n, f, q = int(boundaries[-1]), int(p.n_features), int(p.n_queries)
    n_inf = int(p.n_informative) if p.n_informative is not None else max(1, f // 2)
    # the relevance direction w belongs to the ranking problem (world_seed), not to the sample
    # (seed): sets with different seeds are independent samples of one problem
    w = np.zeros(f, dtype=np.float64)
    w[:n_inf] = _rng(int(p.world_seed), 2).standard_normal(n_inf)
    if p.orientation == "positive":
        w[:n_inf] = np.abs(w[:n_inf])  # oriented: larger = more relevant on average
    w /= np.linalg.norm(w) or 1.0
    rng = _rng(seed, 2)
    rng.standard_normal(n_inf)  # keeps the sample's stream where it was before world_seed existed
    offsets = rng.standard_normal((q, f)) * p.query_spread
    qidx = np.repeat(np.arange(q, dtype=np.int64), lengths)

    from . import _synthetic_kernels as K

    X = np.empty((n, f), dtype=np.float32)
    t = np.empty(n, dtype=np.float64)
    key = np.uint64(K.splitmix64(np.uint64(seed) ^ np.uint64(0x5EED5EED5EED5EED)))
    noise_rng = _rng(seed, 3)
    for lo in range(0, n, _BLOCK):
        hi = min(n, lo + _BLOCK)
        K.synth_features(X[lo:hi], t[lo:hi], offsets, qidx[lo:hi], w, key, lo)
        t[lo:hi] *= p.signal
        t[lo:hi] += noise_rng.standard_normal(hi - lo)

    probs = np.asarray(p.label_probs, dtype=np.float64)
    n_levels = len(probs)
    # P(label >= l) for l = 1..L-1
    tail = np.clip(np.cumsum(probs[::-1])[::-1][1:], 0.0, 1.0)
    labels = np.zeros(n, dtype=np.float64)
    if p.label_mode == "global":
        scale = np.sqrt(p.signal**2 + 1.0)
        for level in range(1, n_levels):
            cut = ndtri(1.0 - tail[level - 1]) * scale if tail[level - 1] > 0 else np.inf
            labels += t > cut
    else:
        if p.label_concentration is None:
            q_tail = np.broadcast_to(tail, (q, n_levels - 1))
        else:
            alpha = np.maximum(probs * p.label_concentration, 1e-3)
            pq = _rng(seed, 4).dirichlet(alpha, size=q)
            q_tail = np.cumsum(pq[:, ::-1], axis=1)[:, ::-1][:, 1:]
        # sort by query, then latent descending, with one float64 key (faster than lexsort):
        # the query index plus a squashing of -t into [0, 1)
        key = qidx + 0.5 * (1.0 - np.tanh(t / 4.0)) * (1.0 - 1e-9)
        order = np.argsort(key, kind="stable")
        del key
        rank = np.empty(n, dtype=np.float64)
        rank[order] = np.arange(n, dtype=np.float64) - np.repeat(boundaries[:-1], lengths)
        frac = (rank + 0.5) / np.repeat(lengths, lengths)
        for level in range(1, n_levels):
            labels += frac < np.repeat(q_tail[:, level - 1], lengths)
    query_ids = np.array([str(i + 1) for i in range(q)], dtype=object)
    doc_ids = None
    if p.doc_ids:
        doc_ids = np.empty(n, dtype=object)
        doc_ids[:] = [f"d{i + 1}-{j}" for i, m in enumerate(lengths.tolist()) for j in range(m)]
    name = name_or_params if isinstance(name_or_params, str) else "custom"
    return RankingDataset(
        features=X,
        labels=labels,
        boundaries=boundaries,
        query_ids=query_ids,
        doc_ids=doc_ids,
        source=format_synthetic_spec(name, seed),
    )


def estimate_text_size(
    dataset: RankingDataset,
    path: str | Any = "data.txt",
    *,
    sparse: bool = False,
    sample_docs: int = 20_000,
) -> int:
    """The bytes :func:`ndcglab.data.write_svmlight` would write for ``dataset`` to ``path``
    (gzip-compressed when it ends in ``.gz``), estimated by writing the first queries (about
    ``sample_docs`` documents) to a temporary file and scaling by the number of documents
    (``ndcglab generate`` prints it before writing; exact for sets no larger than the sample).
    """
    import tempfile
    from pathlib import Path

    from .writers import write_svmlight

    if dataset.n_docs == 0:
        return 0
    q = int(np.searchsorted(dataset.boundaries, min(sample_docs, dataset.n_docs), side="left"))
    q = max(1, min(q, dataset.n_queries))
    sample = dataset if q == dataset.n_queries else dataset.subset(np.arange(q))
    suffix = ".txt.gz" if str(path).endswith(".gz") else ".txt"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"sample{suffix}"
        write_svmlight(out, sample, sparse=sparse)
        size = out.stat().st_size
    return round(size * dataset.n_docs / max(1, sample.n_docs))
