"""Simulated clicks: click models, logging policies, and :func:`simulate_clicks`.

**Relevance to attractiveness.** A document of label ``y`` is attractive (the user would click it
once examined) with probability ``a(y) = eps + (1 - eps) (2^y - 1) / (2^ymax - 1)``, with
``eps`` (default 0.1, noise clicks on non-relevant documents) and ``ymax`` (default: the
dataset's largest label, at least 1) parameters of every click model. The DBN's satisfaction
after a click is ``s(y) = (2^y - 1) / (2^ymax - 1)``.

**Click models** (specs in the project's grammar, :mod:`ndcglab._spec`; ``r`` is the position,
1 = top, ``theta_r = r^-eta``):

* ``pbm(eta=1)`` — position-based: click iff examined (``theta_r``) and attractive.
* ``cascade`` — the user scans down, clicks the first attractive document and stops.
* ``dcm(lam=0.6)`` — dependent click model: as cascade, but after a click at ``r`` goes on with
  probability ``lam`` (one value for every position).
* ``dbn(gamma=0.9)`` / ``sdbn`` — dynamic Bayesian network: after a click the user is satisfied
  with probability ``s(y)`` and stops; otherwise (clicked or not) goes on with probability
  ``gamma`` (``sdbn``: ``gamma = 1``).
* ``ubm(eta=1, beta=0.5)`` — user browsing model: examination of position ``r`` depends on ``r``
  and on the last clicked position ``r'`` above it (``r' = 0`` without one):
  ``gamma(r, r') = min(1, r^-eta (r / (r - r'))^beta)`` — a click just above raises examination;
  ``beta = 0`` is the PBM.
* ``trust(eta=1, pos=1, neg=0.65)`` — trust bias (affine): ``P(click | r) = theta_r (eps+_r a +
  eps-_r (1 - a)) = alpha_r a + beta_r`` with ``eps+_r = pos`` and ``eps-_r = neg / r``, so
  ``alpha_r = theta_r (eps+_r - eps-_r)`` and ``beta_r = theta_r eps-_r``.

**Logging policies** (:func:`make_policy`): a score per document, shown in decreasing order
(``deterministic``; ties keep the dataset's order), or sampled: ``pl(temperature=T)`` draws a
Plackett-Luce ranking with weights ``exp(score / T)`` (Gumbel top-k); ``randtop(n=N)`` shuffles
the top ``N`` of the deterministic ranking uniformly; ``swap`` swaps the top document with the
one at a position drawn uniformly from ``1..m`` (Joachims et al., "Unbiased learning-to-rank
with biased feedback", WSDM 2017). Each shown row carries its *logging propensity*, the policy's
probability of showing that document at that position: 1 for ``deterministic``; ``1/N`` in the
shuffled top for ``randtop``; ``1/m`` or ``(m-1)/m`` for ``swap``; for ``pl`` the exact
marginal, computed by the exponential-race integral (see :func:`pl_position_marginals`).

Each session draws its query uniformly among the queries with at least one document and shows
its top ``m = min(k, n_q)`` documents. Sessions are seeded independently: session ``i`` of
seed ``s`` is the same whatever the number of sessions or threads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._spec import parse_real, parse_spec
from ..errors import SpecError
from .logs import ClickLog

__all__ = [
    "CLICK_MODELS",
    "ClickModel",
    "LoggingPolicy",
    "attractiveness",
    "make_policy",
    "parse_click_model",
    "pl_position_marginals",
    "simulate_clicks",
]

#: click model name -> (parameter defaults) besides eps and ymax
CLICK_MODELS: dict[str, dict[str, float]] = {
    "pbm": {"eta": 1.0},
    "cascade": {},
    "dcm": {"lam": 0.6},
    "dbn": {"gamma": 0.9},
    "sdbn": {},
    "ubm": {"eta": 1.0, "beta": 0.5},
    "trust": {"eta": 1.0, "pos": 1.0, "neg": 0.65},
}
_RANGES: dict[str, tuple[float, float | None]] = {
    "eta": (0.0, None),
    "lam": (0.0, 1.0),
    "gamma": (0.0, 1.0),
    "beta": (0.0, None),
    "pos": (0.0, 1.0),
    "neg": (0.0, 1.0),
    "eps": (0.0, 1.0),
    "ymax": (1.0, 1000.0),
}


def attractiveness(labels: np.ndarray, eps: float, ymax: float) -> np.ndarray:
    """``eps + (1 - eps) (2^y - 1) / (2^ymax - 1)`` per label ``y`` (clipped to ``[0, ymax]``)."""
    y = np.clip(np.asarray(labels, dtype=np.float64), 0.0, ymax)
    return eps + (1.0 - eps) * np.expm1(y * np.log(2.0)) / np.expm1(ymax * np.log(2.0))


@dataclass(frozen=True)
class ClickModel:
    """A parsed click model spec: ``name`` (a key of :data:`CLICK_MODELS`) and its parameters
    (``eps`` and ``ymax`` included; ``ymax`` is None until fixed by the data)."""

    name: str
    params: dict[str, float] = field(default_factory=dict)
    ymax: float | None = None

    def __str__(self) -> str:
        inner = ",".join(f"{k}={_num(v)}" for k, v in sorted(self.params.items()))
        if self.ymax is not None:
            inner = (inner + "," if inner else "") + f"ymax={_num(self.ymax)}"
        return f"{self.name}({inner})" if inner else self.name

    @property
    def eps(self) -> float:
        return float(self.params.get("eps", 0.1))

    def theta(self, k: int) -> np.ndarray:
        """``r^-eta`` for r = 1..k (the examination of PBM and trust bias; UBM's without click)."""
        eta = float(self.params.get("eta", 1.0))
        return np.arange(1, k + 1, dtype=np.float64) ** -eta

    def examination(self, k: int) -> np.ndarray | None:
        """The true examination probability per position (PBM, trust), else None (a cascade
        model's examination depends on the clicks above)."""
        return self.theta(k) if self.name in ("pbm", "trust") else None

    def trust_terms(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(alpha, beta)`` per position of trust bias: P(click | r) = alpha_r a + beta_r."""
        th = self.theta(k)
        pos = float(self.params.get("pos", 1.0))
        neg = float(self.params.get("neg", 0.65)) / np.arange(1, k + 1)
        return th * (pos - neg), th * neg

    def ubm_table(self, k: int) -> np.ndarray:
        """``gamma[r-1, r']`` for r = 1..k and last click r' = 0..k (0: none; r' >= r unused)."""
        eta = float(self.params.get("eta", 1.0))
        beta = float(self.params.get("beta", 0.5))
        g = np.ones((k, k + 1))
        for r in range(1, k + 1):
            for last in range(r):
                g[r - 1, last] = min(1.0, r**-eta * (r / (r - last)) ** beta)
        return g

    def gamma(self) -> float:
        if self.name == "sdbn":
            return 1.0
        return float(self.params.get("gamma", 0.9))

    def lam(self) -> float:
        return float(self.params.get("lam", 0.6))

    def click_probabilities(self, attract: np.ndarray, satisfy: np.ndarray | None = None) -> Any:
        """The probability of a click at each position of one ranking whose documents have
        attractiveness ``attract`` (and DBN satisfaction ``satisfy``), in rank order."""
        a = np.asarray(attract, dtype=np.float64)
        k = len(a)
        if self.name == "pbm":
            return self.theta(k) * a
        if self.name == "trust":
            al, be = self.trust_terms(k)
            return al * a + be
        if self.name == "ubm":
            g = self.ubm_table(k)
            last = np.zeros(k + 1)
            last[0] = 1.0  # P(last click so far at r'), r' = 0..k
            out = np.zeros(k)
            for r in range(1, k + 1):
                pc = g[r - 1, :r] * a[r - 1] * last[:r]
                out[r - 1] = pc.sum()
                last[:r] -= pc
                last[r] = pc.sum()
            return out
        s = np.zeros(k) if satisfy is None else np.asarray(satisfy, dtype=np.float64)
        exam = 1.0
        out = np.zeros(k)
        for r in range(k):
            out[r] = exam * a[r]
            if self.name == "cascade":
                exam *= 1.0 - a[r]
            elif self.name == "dcm":
                exam *= 1.0 - a[r] + a[r] * self.lam()
            else:
                exam *= self.gamma() * (1.0 - a[r] * s[r])
        return out


def _num(v: float) -> str:
    from .._spec import format_number

    return format_number(float(v))


def parse_click_model(spec: str | ClickModel) -> ClickModel:
    """Parse a click model spec (``pbm(eta=1)``, ``dbn(gamma=0.7,eps=0.05)`` ...; see the module
    docstring); unknown names, unknown keys and values out of range raise
    :class:`~ndcglab.errors.SpecError` with the fix."""
    if isinstance(spec, ClickModel):
        return spec
    parsed = parse_spec(spec, what="click model")
    if parsed.name not in CLICK_MODELS:
        raise SpecError(
            f"unknown click model {parsed.name!r}. Fix: use one of "
            f"{', '.join(CLICK_MODELS)} (e.g. 'pbm(eta=1)')"
        )
    if parsed.cutoff is not None:
        raise SpecError(
            f"click model {spec!r} takes no @cutoff. Fix: give the number shown with --k"
        )
    allowed = {**CLICK_MODELS[parsed.name], "eps": 0.1, "ymax": 0.0}
    params = dict(CLICK_MODELS[parsed.name])
    params["eps"] = 0.1
    ymax = None
    for key, text in parsed.params:
        if key not in allowed:
            raise SpecError(
                f"click model {parsed.name} has no parameter {key!r}. Fix: use "
                f"{', '.join(sorted(allowed))}"
            )
        lo, hi = _RANGES[key]
        value = parse_real(text, what=f"{parsed.name} parameter {key}", lo=lo, hi=hi)
        if key == "ymax":
            ymax = value
        else:
            params[key] = value
    if parsed.name == "trust" and params["neg"] > params["pos"]:
        raise SpecError(
            f"trust bias needs neg <= pos (a relevant document is clicked at least as often as "
            f"a non-relevant one); got pos={params['pos']}, neg={params['neg']}. Fix: lower neg"
        )
    return ClickModel(parsed.name, params, ymax)


# --------------------------------------------------------------------------- policies

_SAMPLINGS = ("deterministic", "pl", "randtop", "swap")


@dataclass(frozen=True)
class LoggingPolicy:
    """A logging policy: one score per dataset row and how rankings are drawn from them
    (``sampling`` in ``deterministic``, ``pl``, ``randtop``, ``swap``; ``temperature`` for
    ``pl``, ``n`` for ``randtop``); ``name`` is what the log's ``meta['policy']`` records."""

    scores: np.ndarray
    sampling: str = "deterministic"
    temperature: float = 1.0
    n: int = 0
    name: str = "deterministic"


def make_policy(scores: Any, sampling: str = "deterministic", *, name: str = "") -> LoggingPolicy:
    """A :class:`LoggingPolicy` from ``scores`` (one per document) and a ``sampling`` spec:
    ``deterministic``, ``pl(temperature=T)`` (default T = 1), ``randtop(n=N)`` or ``swap``."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    if not np.isfinite(s).all():
        bad = int(np.flatnonzero(~np.isfinite(s))[0])
        raise SpecError(
            f"logging scores must be finite; score {bad + 1} is {s[bad]!r}. Fix: give finite scores"
        )
    parsed = parse_spec(sampling, what="sampling")
    if parsed.name not in _SAMPLINGS:
        raise SpecError(
            f"unknown sampling {parsed.name!r}. Fix: use deterministic, pl(temperature=T), "
            "randtop(n=N) or swap"
        )
    keys = {"pl": {"temperature"}, "randtop": {"n"}}.get(parsed.name, set())
    for key, _ in parsed.params:
        if key not in keys:
            raise SpecError(
                f"sampling {parsed.name} has no parameter {key!r}. Fix: use "
                f"{', '.join(sorted(keys)) or 'none'}"
            )
    temperature = 1.0
    n = 0
    if parsed.name == "pl":
        temperature = parse_real(
            parsed.param("temperature", "1") or "1", what="temperature", lo=0.0, lo_open=True
        )
    if parsed.name == "randtop":
        from .._spec import parse_int

        n = parse_int(parsed.param("n", "") or "", what="randtop n", lo=2, hi=1_000_000)
    return LoggingPolicy(s, parsed.name, temperature, n, name or str(parsed))


def pl_position_marginals(
    scores: np.ndarray, boundaries: np.ndarray, k: int, temperature: float = 1.0
) -> np.ndarray:
    """``P[d, p-1]``: the probability that Plackett-Luce with weights ``exp(score / T)`` puts
    document ``d`` at position ``p`` (1..k) of its query's ranking (within 1e-8 of the sum
    over all permutations in the tests).

    Computed from the exponential race (``T_i ~ Exp(w_i)``, ranking by arrival): ``P(d at p) =
    integral over t of w_d exp(-w_d t) P(exactly p-1 others arrived before t) dt``, the count
    being Poisson-binomial, the integral a trapezoid rule in ``log t``.
    """
    from ._simulate_kernels import pl_marginals

    logw = np.asarray(scores, dtype=np.float64) / float(temperature)
    b = np.asarray(boundaries, dtype=np.int64)
    return np.asarray(pl_marginals(logw, b, int(k), 0.25))


# --------------------------------------------------------------------------- simulation


def _deterministic_order(scores: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Dataset rows of each query sorted by decreasing score (stable: ties keep row order)."""
    qid = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
    return np.lexsort((np.arange(len(scores)), -scores, qid)).astype(np.int64)


def simulate_clicks(
    dataset: Any,
    click_model: str | ClickModel = "pbm(eta=1)",
    policy: LoggingPolicy | None = None,
    n_sessions: int = 1000,
    *,
    k: int = 10,
    seed: int = 0,
    first_session: int = 0,
    marginals: np.ndarray | None = None,
) -> ClickLog:
    """Simulate ``n_sessions`` sessions of ``click_model`` on ``dataset`` (a
    :class:`~ndcglab.data.RankingDataset`) under ``policy`` (default: the labels' order,
    deterministic — the ideal ranker), showing the top ``k``; see the module docstring.

    Session ids are ``first_session .. first_session + n_sessions - 1``, so logs simulated in
    chunks concatenate to the log of one call. Returns a :class:`~ndcglab.clicks.ClickLog` whose
    ``meta`` records the click model, the policy, the seed, ``k``, the attractiveness mapping
    and, for PBM and trust bias, the true examination per position (``examination``; trust bias
    also ``alpha`` and ``beta``).

    ``marginals``: for a Plackett-Luce policy, its position marginals
    ``pl_position_marginals(policy.scores, dataset.boundaries, k, policy.temperature)`` when
    the caller has them already (a caller simulating many logs under one policy saves their
    computation); an array of another shape is refused. Ignored by the other samplings.
    """
    from .._spec import parse_int
    from ._simulate_kernels import (
        CASCADE,
        DBN,
        DCM,
        DETERMINISTIC,
        PBM,
        PLACKETT_LUCE,
        RANDTOP,
        SWAP,
        TRUST,
        UBM,
        choose_queries,
        simulate_sessions,
    )

    model = parse_click_model(click_model)
    k = parse_int(str(k), what="k (documents shown)", lo=1, hi=10_000)
    n_sessions = parse_int(str(n_sessions), what="number of sessions", lo=0, hi=10**12)
    seed = parse_int(str(seed), what="seed", lo=0, hi=2**63 - 1)
    bounds = np.asarray(dataset.boundaries, dtype=np.int64)
    labels = np.asarray(dataset.labels, dtype=np.float64)
    n_docs = len(labels)
    if policy is None:
        policy = make_policy(labels, "deterministic", name="ideal (labels)")
    if len(policy.scores) != n_docs:
        raise SpecError(
            f"the logging policy has {len(policy.scores)} scores for {n_docs} documents. Fix: "
            "give one score per document of the data, in its order"
        )
    sizes = np.diff(bounds)
    eligible = np.flatnonzero(sizes > 0).astype(np.int64)
    if len(eligible) == 0 and n_sessions:
        raise SpecError("the data has no query with a document. Fix: give other data")
    ymax = model.ymax if model.ymax is not None else max(1.0, float(labels.max(initial=1.0)))
    attract = attractiveness(labels, model.eps, ymax)
    satisfy = attractiveness(labels, 0.0, ymax)

    queries, shown = choose_queries(seed, first_session, n_sessions, eligible, bounds, k)
    offsets = np.zeros(n_sessions + 1, dtype=np.int64)
    np.cumsum(shown, out=offsets[1:])
    rows = int(offsets[-1])
    out_doc = np.empty(rows, dtype=np.int64)
    out_pos = np.empty(rows, dtype=np.int32)
    out_click = np.empty(rows, dtype=np.int8)
    out_prop = np.empty(rows, dtype=np.float64)

    code = {
        "pbm": PBM, "cascade": CASCADE, "dcm": DCM, "dbn": DBN, "sdbn": DBN, "ubm": UBM,
        "trust": TRUST,
    }[model.name]  # fmt: skip
    pcode = {"deterministic": DETERMINISTIC, "pl": PLACKETT_LUCE, "randtop": RANDTOP,
             "swap": SWAP}[policy.sampling]  # fmt: skip
    theta = model.theta(k)
    eps_pos = np.full(k, float(model.params.get("pos", 1.0)))
    eps_neg = float(model.params.get("neg", 0.65)) / np.arange(1, k + 1)
    logw = policy.scores / policy.temperature
    base = _deterministic_order(policy.scores, bounds)
    ubm = model.ubm_table(k) if code == UBM else np.ones((1, 1))
    if pcode == PLACKETT_LUCE and marginals is not None:
        pl_prop = np.ascontiguousarray(marginals, dtype=np.float64)
        if pl_prop.shape != (n_docs, k):
            raise SpecError(
                f"marginals has shape {pl_prop.shape}, not (documents, k) = ({n_docs}, {k}). "
                "Fix: pass pl_position_marginals(policy.scores, dataset.boundaries, k, "
                "policy.temperature)"
            )
    elif pcode == PLACKETT_LUCE:
        pl_prop = pl_position_marginals(policy.scores, bounds, k, policy.temperature)
    else:
        pl_prop = np.zeros((1, 1))
    simulate_sessions(
        seed, first_session, queries, offsets, bounds, base, logw, pcode, policy.n, code,
        theta, np.full(k, model.lam()), model.gamma(), ubm, eps_pos, eps_neg,
        attract, satisfy, pl_prop, out_doc, out_pos, out_click, out_prop,
    )  # fmt: skip
    meta: dict[str, Any] = {
        "click_model": str(ClickModel(model.name, model.params, ymax)),
        "policy": policy.name,
        "seed": seed,
        "k": k,
        "attractiveness": {"eps": model.eps, "ymax": ymax},
        "data": getattr(dataset, "source", None),
    }
    exam = model.examination(k)
    if exam is not None:
        meta["examination"] = exam.tolist()
    if model.name == "trust":
        al, be = model.trust_terms(k)
        meta["alpha"], meta["beta"] = al.tolist(), be.tolist()
    session = np.repeat(np.arange(first_session, first_session + n_sessions), shown)
    return ClickLog(
        session=session,
        query=np.repeat(queries, shown),
        doc=out_doc,
        position=out_pos,
        click=out_click,
        propensity=out_prop,
        qids=dataset.query_ids,
        meta=meta,
    )
