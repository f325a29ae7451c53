"""Unbiased learning to rank from clicks through the one front door, :func:`ndcglab.training.fit`.

Every learner here turns a click log into **one label per document** — an estimate of its click
relevance ``r_d`` (the probability of a click once examined) computed from the log's sufficient
statistics (impressions ``I_dj`` and clicks ``C_dj`` per document and position, the number of
sessions ``N_q`` of each query, and the logging policy's probabilities ``P(d at j)``) — and then
trains any model kind (linear, MLP, boosted trees) with any registry loss on the dataset with those
labels (:func:`click_dataset`, :func:`fit_clicks`). Training therefore costs what training on
judged labels costs: the clicks are read once, not once per epoch.

Clicks follow ``P(click | d at j) = α_j·r_d + β_j`` (``examination`` ``α``; ``trust_offset``
``β``, 0 without trust bias). ``ρ_d = Σ_j P(d at j)·α_j`` is the logging policy's expected
examination of ``d`` (``P`` from the log's ``propensity`` column; where it is NaN, the observed
share ``I_dj/N_q``). The labels:

* ``naive`` — ``Σ_j C_dj / N_q``: clicks per session, biased towards the documents the logging
  policy put on top.
* ``ips`` — inverse propensity scoring, policy-aware (Oosterhuis and de Rijke, CIKM 2020; the
  per-click weights of Joachims, Swaminathan and Schnabel, WSDM 2017, when every document is
  shown): ``Σ_j C_dj / (N_q·max(ρ_d, τ))``. Unbiased for ``r_d`` when ``β = 0`` and ``ρ_d ≥ τ``;
  the clipping ``tau`` trades that for bounded weights.
* ``snips`` — self-normalised IPS per document: ``Σ_j C_dj / Σ_j α_j·I_dj`` (the weights'
  realised sum replaces their expectation ``N_q·ρ_d``); consistent, lower variance, no
  propensity of the logging policy needed.
* ``affine`` — the affine correction for trust bias (Vardasbi, Oosterhuis and de Rijke, "When
  inverse propensity scoring does not work: affine corrections for unbiased learning to rank",
  CIKM 2020): ``Σ_j (C_dj − β_j·I_dj) / (N_q·max(ρ_d, τ))``; unbiased under the affine model.
* ``dr`` — doubly robust (Oosterhuis, TOIS 2023): a regression estimate ``r̃_d`` (least squares of
  the ``snips`` labels on the features, weighted by impressions) corrected by the IPS residual
  ``r̃_d + Σ_j (C_dj − β_j·I_dj − α_j·I_dj·r̃_d) / (N_q·max(ρ_d, τ))``; unbiased when ``ρ_d ≥ τ``
  whatever ``r̃``, and close to ``r̃`` (not 0) for documents seldom shown.
* ``dla`` — the dual learning algorithm (Ai et al., SIGIR 2018), with the examination unknown:
  rounds alternate the minimisers of its two softmax losses. The ranker is trained on ``ips``
  labels under the current ``α̂``; then ``α̂_j ∝ Σ_d C_dj / r̂_d`` with ``r̂`` the ranker's
  softmax over each query's documents (the propensity loss ``−Σ_clicks (1/r̂_d)·log
  softmax(g)_j`` is minimised by these weights), scaled so that ``α̂_1 = 1`` (the paper's
  normalisation by the first position). This assumes every session shows all ``k`` positions.
* ``pairwise`` — pairwise debiasing (Hu, Wang, Peng and Li, WWW 2019), examination unknown: the
  click bias ``t⁺`` is estimated jointly with a pair-weighted logistic ranker
  (:mod:`ndcglab.clicks.pairwise_debias`); the model is then trained on ``ips`` labels under
  ``α̂ = t⁺``. With boosted trees it is the paper's Unbiased LambdaMART instead
  (:mod:`ndcglab.clicks.unbiased_lambdamart`): no labels, the trees learn from the debiased
  lambda gradients of the sessions' pairs.

A loss that is linear in the labels (``squared`` up to a constant, ``softmax_ce(target=label)``
per query) keeps the labels' unbiasedness; any other loss is consistent (the labels converge to
``r_d`` as sessions grow) but not unbiased. ``fit_clicks`` uses the loss of ``config`` (the model
kind's default when unset).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data.dataset import RankingDataset
from ..errors import DataFormatError, SpecError
from .logs import ClickLog, ClickStats, aligned_to, validate_log

__all__ = [
    "CLICK_ESTIMATORS",
    "ClickFitResult",
    "ClickStatistics",
    "click_dataset",
    "click_labels",
    "click_loss",
    "click_statistics",
    "dla_examination",
    "dla_propensities",
    "fit_clicks",
    "fit_dla",
    "merge_statistics",
    "statistics_from_counts",
]

#: the learners' label estimators, each with a one-line summary
CLICK_ESTIMATORS: dict[str, str] = {
    "naive": "clicks per session (biased by position)",
    "ips": "inverse propensity scoring, policy-aware, clipped at tau",
    "snips": "self-normalised IPS per document",
    "affine": "affine correction for trust bias (Vardasbi et al.)",
    "dr": "doubly robust: regression estimate + IPS correction (Oosterhuis)",
    "dla": "dual learning algorithm: propensities learned with the ranker (Ai et al.)",
    "pairwise": "pairwise debiasing: click and non-click biases learned with a pairwise ranker; "
    "Unbiased LambdaMART with boosted trees (Hu et al.)",
}


@dataclass(frozen=True)
class ClickStatistics:
    """The sufficient statistics the learners read, as dense arrays over the dataset's rows.

    ``impressions``/``clicks`` ``(N, k)``: per document row and position; ``placement`` ``(N,
    k)``: the logging policy's ``P(d at j)`` (the log's propensity, or ``I_dj/N_q`` where it is
    unknown); ``sessions`` ``(Q,)``: sessions per query; ``boundaries`` the dataset's;
    ``logged`` ``(N, k)``: True where ``placement`` is the log's propensity.
    """

    impressions: np.ndarray
    clicks: np.ndarray
    placement: np.ndarray
    sessions: np.ndarray
    boundaries: np.ndarray
    logged: np.ndarray

    @property
    def k(self) -> int:
        return int(self.impressions.shape[1])

    def sessions_per_row(self) -> np.ndarray:
        return np.repeat(self.sessions, np.diff(self.boundaries)).astype(np.float64)


def click_statistics(
    log: ClickLog, dataset: RankingDataset, *, placement: np.ndarray | None = None
) -> ClickStatistics:
    """Aggregate ``log`` (validated against ``dataset`` and aligned to its query order) into
    :class:`ClickStatistics`: one pass over the rows, then nothing per epoch.

    ``placement`` ``(N, k)``: the logging policy's full ``P(d at j)`` when known (for instance
    :func:`ndcglab.clicks.simulate.pl_position_marginals`); without it, the log's propensities
    give ``P(d at j)`` for the pairs it shows, and the pairs it never shows count as 0 — a
    policy-aware IPS label then over-estimates a document never logged at some position it could
    take, until the log has shown it there."""
    validate_log(log, dataset=dataset)
    log = aligned_to(log, dataset)
    n, k = dataset.n_docs, max(log.k, 1)
    j = log.position.astype(np.int64) - 1
    key = log.doc * k + j
    imp = np.bincount(key, minlength=n * k).reshape(n, k).astype(np.float64)
    clk = np.bincount(key, weights=log.click, minlength=n * k).reshape(n, k)
    starts = log.session_starts()
    sessions = np.bincount(log.query[starts[:-1]], minlength=dataset.n_queries).astype(float)
    known = ~np.isnan(log.propensity)
    prop_sum = np.bincount(key[known], weights=log.propensity[known], minlength=n * k)
    prop_n = np.bincount(key[known], minlength=n * k)
    n_q = np.repeat(sessions, np.diff(dataset.boundaries))[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        logged = (prop_sum / np.maximum(prop_n, 1)).reshape(n, k)
        empirical = np.where(n_q > 0, imp / np.maximum(n_q, 1), 0.0)
    known_dj = prop_n.reshape(n, k) > 0
    if placement is not None:
        given = np.asarray(placement, dtype=np.float64)
        if given.shape != (n, k):
            raise SpecError(
                f"placement= has shape {given.shape}; ({n}, {k}) is needed (documents × shown "
                "positions). Fix: give P(d at j) for every document and position"
            ).naming("placement")
        return ClickStatistics(
            imp, clk, given.copy(), sessions, dataset.boundaries.copy(), np.ones((n, k), bool)
        )
    chosen = np.where(known_dj, logged, empirical)
    return ClickStatistics(imp, clk, chosen, sessions, dataset.boundaries.copy(), known_dj)


def statistics_from_counts(
    counts: ClickStats, dataset: RankingDataset, *, placement: np.ndarray | None = None
) -> ClickStatistics:
    """:class:`ClickStatistics` from a log's counts alone (:class:`~ndcglab.clicks.ClickStats`:
    impressions and clicks per query × document × position, e.g. summed from a log larger than
    memory by :func:`~ndcglab.clicks.logs.read_log_stats`, or a statistics file). The sessions of
    a query are its impressions at position 1 (every session shows position 1 once).
    ``placement`` as in :func:`click_statistics`; without it ``P(d at j)`` is the observed share
    ``I_dj/N_q`` (the counts carry no propensities), which makes ``ips`` equal to ``snips``-like
    ratios of the observed exposure. Query ids are matched to ``dataset``'s; a document row
    outside its query's block is an error."""
    known = {str(q): i for i, q in enumerate(dataset.query_ids.tolist())}
    mapped = np.array([known.get(str(q), -1) for q in counts.qids.tolist()], dtype=np.int64)
    q = mapped[counts.query] if len(counts) else np.zeros(0, dtype=np.int64)
    b = dataset.boundaries
    bad = np.flatnonzero((q < 0) | (counts.doc < b[np.maximum(q, 0)]) | (counts.doc >= b[q + 1]))
    if len(bad):
        i = int(bad[0])
        raise DataFormatError(
            f"statistics row {i + 1}: query {counts.qids[counts.query[i]]!r}, document row "
            f"{int(counts.doc[i])} is not in the dataset",
            fix="use the statistics of a log made on this dataset",
        )
    n, k = dataset.n_docs, max(int(counts.k), 1)
    key = counts.doc.astype(np.int64) * k + counts.position.astype(np.int64) - 1
    imp = np.bincount(key, weights=counts.impressions, minlength=n * k).reshape(n, k)
    clk = np.bincount(key, weights=counts.clicks, minlength=n * k).reshape(n, k)
    first = counts.position == 1
    sessions = np.bincount(q[first], weights=counts.impressions[first], minlength=len(b) - 1)
    if placement is not None:
        given = np.asarray(placement, dtype=np.float64)
        if given.shape != (n, k):
            raise SpecError(
                f"placement= has shape {given.shape}; ({n}, {k}) is needed. Fix: give P(d at j) "
                "for every document and position"
            ).naming("placement")
        return ClickStatistics(imp, clk, given.copy(), sessions, b.copy(), np.ones((n, k), bool))
    n_q = np.repeat(sessions, np.diff(b))[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        empirical = np.where(n_q > 0, imp / np.maximum(n_q, 1), 0.0)
    return ClickStatistics(imp, clk, empirical, sessions, b.copy(), np.zeros((n, k), bool))


def merge_statistics(parts: list[ClickStatistics]) -> ClickStatistics:
    """The statistics of several logs of one logging policy on one dataset (chunks of sessions):
    impressions, clicks and sessions add; ``P(d at j)`` is the logged propensity where any part
    logged it (the sessions-weighted mean over those parts), else the merged share
    ``I_dj/N_q``."""
    if not parts:
        raise SpecError("merge_statistics needs at least one part")
    sessions = np.sum([p.sessions for p in parts], axis=0)
    imp = np.sum([p.impressions for p in parts], axis=0)
    clk = np.sum([p.clicks for p in parts], axis=0)
    num = np.zeros_like(imp)
    den = np.zeros_like(imp)
    for p in parts:
        w = p.sessions_per_row()[:, None] * p.logged
        num += p.placement * w
        den += w
    logged = np.logical_or.reduce([p.logged for p in parts])
    n_q = np.repeat(sessions, np.diff(parts[0].boundaries)).astype(np.float64)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        empirical = np.where(n_q > 0, imp / np.maximum(n_q, 1), 0.0)
        placement = np.where(logged, num / np.where(den > 0, den, 1.0), empirical)
    return ClickStatistics(imp, clk, placement, sessions, parts[0].boundaries, logged)


def _positions(values: Any, k: int, name: str, default: float) -> np.ndarray:
    if values is None:
        return np.full(k, default)
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    if len(arr) < k:
        raise SpecError(
            f"{name}= has {len(arr)} values for {k} shown positions. Fix: one value per "
            f"position 1..{k}"
        ).naming(name)
    return arr[:k]


def click_labels(
    stats: ClickStatistics,
    *,
    estimator: str = "ips",
    examination: Any = None,
    trust_offset: Any = None,
    tau: float = 0.0,
    features: np.ndarray | None = None,
    regression: np.ndarray | None = None,
) -> np.ndarray:
    """One relevance label per document row from :class:`ClickStatistics` (formulas in the
    module docstring). ``examination`` ``α`` (default 1) and ``trust_offset`` ``β`` (default 0,
    required by ``affine``) per position; ``tau`` the clipping of ``ρ_d``; ``dr`` needs
    ``features`` (for its regression) or ``regression`` (``r̃`` itself). Documents of a query
    without sessions get 0. ``dla`` and ``pairwise`` are not label rules (see
    :func:`fit_clicks`)."""
    if estimator not in CLICK_ESTIMATORS or estimator in ("dla", "pairwise"):
        known = ", ".join(e for e in CLICK_ESTIMATORS if e not in ("dla", "pairwise"))
        raise SpecError(
            f"unknown label estimator {estimator!r}; known: {known} (dla and pairwise train "
            "through fit_clicks)"
        ).naming("estimator")
    if not 0 <= tau < 1:
        raise SpecError(f"tau must be in [0, 1), got {tau}").naming("tau")
    k = stats.k
    alpha = _positions(examination, k, "examination", 1.0)
    beta = _positions(trust_offset, k, "trust_offset", 0.0)
    if estimator == "affine" and trust_offset is None:
        raise SpecError(
            "the affine estimator needs the trust-bias offsets. Fix: give trust_offset= (β per "
            "position)"
        ).naming("trust_offset")
    if estimator in ("ips", "snips", "naive"):
        beta = np.zeros(k)  # IPS and SNIPS ignore trust bias by definition
    n_q = stats.sessions_per_row()
    imp, clk = stats.impressions, stats.clicks
    with np.errstate(invalid="ignore", divide="ignore"):
        if estimator == "naive":
            return np.where(n_q > 0, clk.sum(1) / np.maximum(n_q, 1), 0.0)
        if estimator == "snips":
            den = imp @ alpha
            return np.where(den > 0, clk.sum(1) / np.where(den > 0, den, 1.0), 0.0)
        rho = np.maximum(stats.placement @ alpha, tau)
        scale = n_q * rho
        ok = scale > 0
        resid = clk.sum(1) - imp @ beta
        if estimator in ("ips", "affine"):
            return np.where(ok, resid / np.where(ok, scale, 1.0), 0.0)
        # dr
        if regression is None:
            if features is None:
                raise SpecError(
                    "the doubly robust estimator needs features for its regression. Fix: give "
                    "features= (or regression=)"
                ).naming("features")
            regression = _regression(stats, features, alpha)
        r_tilde = np.asarray(regression, dtype=np.float64).reshape(-1)
        corr = (resid - (imp @ alpha) * r_tilde) / np.where(ok, scale, 1.0)
        return np.where(ok, r_tilde + corr, r_tilde)


def _regression(stats: ClickStatistics, features: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Weighted least squares (a small ridge) of the snips labels on the features and a bias."""
    y = click_labels(stats, estimator="snips", examination=alpha)
    w = stats.impressions @ alpha
    x = np.column_stack([np.asarray(features, dtype=np.float64), np.ones(len(y))])
    xw = x * w[:, None]
    a = x.T @ xw + 1e-6 * np.eye(x.shape[1]) * max(float(w.sum()), 1.0)
    coef = np.linalg.solve(a, xw.T @ y)
    return np.clip(x @ coef, 0.0, 1.0)


def click_loss(spec: str) -> str:
    """The loss ``spec`` with ``gain=linear`` added when the loss has a gain and none is given:
    click labels are relevance probabilities (and IPS labels can exceed 1), whose default
    ``exp2`` gain would be a biased, exploding transform. A gain given explicitly is kept."""
    from .._spec import parse_spec
    from ..losses import get_loss, loss_class

    parsed = parse_spec(spec)
    has_gain = any(p.name == "gain" for p in loss_class(parsed.name).parameters)
    given = dict(parsed.params)
    if not has_gain or "gain" in given:
        return str(get_loss(spec).name)
    inner = ",".join(f"{k}={v}" for k, v in {**given, "gain": "linear"}.items())
    cut = "" if parsed.cutoff is None else f"@{parsed.cutoff}"
    return str(get_loss(f"{parsed.name}({inner}){cut}").name)


def click_dataset(
    dataset: RankingDataset,
    log: ClickLog,
    *,
    estimator: str = "ips",
    examination: Any = None,
    trust_offset: Any = None,
    tau: float = 0.0,
) -> RankingDataset:
    """``dataset`` with its labels replaced by the click labels of ``estimator`` (see
    :func:`click_labels`): what :func:`ndcglab.training.fit` trains on. The features, query ids
    and boundaries are the dataset's; a query without sessions keeps labels 0 (the trainer's
    ``skip_uninformative`` leaves it out)."""
    stats = click_statistics(log, dataset)
    labels = click_labels(
        stats,
        estimator=estimator,
        examination=examination,
        trust_offset=trust_offset,
        tau=tau,
        features=dataset.features,
    )
    return dataclasses.replace(dataset, labels=labels)


@dataclass(frozen=True)
class ClickFitResult:
    """What :func:`fit_clicks` returns: the training result (``result.model`` scores new data),
    the labels it trained on (empty for Unbiased LambdaMART, which trains on the sessions'
    pairs), and the examination used (``α̂`` learned by ``dla``, ``t⁺`` by ``pairwise``);
    ``t_minus``: the non-click bias ``t⁻`` of ``pairwise`` (else ``None``)."""

    result: Any
    labels: np.ndarray
    examination: np.ndarray
    estimator: str
    t_minus: np.ndarray | None = None

    @property
    def model(self) -> Any:
        return self.result.model

    def predict(self, data: Any) -> Any:
        return self.result.predict(data)


def dla_propensities(stats: ClickStatistics, relevance: np.ndarray) -> np.ndarray:
    """DLA's propensity step: ``α̂_j ∝ Σ_d C_dj / r̂_d``, ``α̂_1 = 1`` (``relevance`` per row,
    positive; rows without clicks do not count)."""
    r = np.asarray(relevance, dtype=np.float64)
    clicked = stats.clicks.sum(1) > 0
    if np.any(r[clicked] <= 0):
        raise DataFormatError(
            "DLA needs a positive relevance for every clicked document",
            fix="give relevances from a softmax (all positive)",
        )
    w = (stats.clicks[clicked] / r[clicked, None]).sum(0)
    if w[0] <= 0:
        raise DataFormatError(
            "no click at position 1: DLA normalises the propensities by the first position",
            fix="log clicks at position 1 (more sessions)",
        )
    return np.asarray(w / w[0], dtype=np.float64)


def _query_softmax(scores: np.ndarray, boundaries: np.ndarray) -> np.ndarray:
    qid = np.repeat(np.arange(len(boundaries) - 1), np.diff(boundaries))
    top = np.full(len(boundaries) - 1, -np.inf)
    np.maximum.at(top, qid, scores)
    e = np.exp(scores - top[qid])
    return np.asarray(e / np.bincount(qid, weights=e)[qid], dtype=np.float64)


def fit_clicks(
    dataset: RankingDataset,
    log: ClickLog,
    config: Any = None,
    *,
    estimator: str = "ips",
    examination: Any = None,
    trust_offset: Any = None,
    tau: float = 0.0,
    dla_rounds: int = 3,
    pairwise_rounds: int = 5,
    pairwise_p: float = 0.0,
    bias_every: int = 1,
    validation: RankingDataset | None = None,
    **options: Any,
) -> ClickFitResult:
    """Train on ``dataset``'s features from the clicks of ``log`` through
    :func:`ndcglab.training.fit` (``config`` and ``options`` as there: model kind, loss, epochs
    ...). ``estimator`` one of :data:`CLICK_ESTIMATORS`; ``validation`` (judged labels) chooses
    the epoch as usual. ``dla`` runs ``dla_rounds`` rounds of ranker and propensity steps from
    ``α̂ = 1`` and ignores ``examination``; ``pairwise`` estimates the click bias ``t⁺`` by
    ``pairwise_rounds`` rounds of :func:`~ndcglab.clicks.pairwise_debias.fit_pairwise` and trains
    on ``ips`` labels under ``α̂ = t⁺`` (it ignores ``examination`` too) — except with
    ``model="gbdt"``, where it is Unbiased LambdaMART
    (:func:`~ndcglab.clicks.unbiased_lambdamart.fit_unbiased_lambdamart`: trees grown from the
    debiased lambda gradients of the sessions' pairs, the biases re-estimated every
    ``bias_every`` trees with the regularisation ``pairwise_p``; a ``loss`` is refused, since
    the objective is its own). The loss gets ``gain=linear`` unless it names its gain
    (:func:`click_loss`)."""
    from ..training import fit
    from ..training.config import config_with

    if estimator not in CLICK_ESTIMATORS:
        raise SpecError(
            f"unknown estimator {estimator!r}; known: {', '.join(CLICK_ESTIMATORS)}"
        ).naming("estimator")
    if estimator == "pairwise":
        from ..training.kinds import get_kind

        tree_config = config_with(config, **options)
        if get_kind(tree_config.model).route == "trees":
            from .unbiased_lambdamart import fit_unbiased_lambdamart

            if "loss" in options:
                raise SpecError(
                    "estimator='pairwise' with model='gbdt' is Unbiased LambdaMART, whose "
                    f"objective is the debiased lambda loss, not loss={options['loss']!r}. Fix: "
                    "drop loss="
                ).naming("loss")
            trained, ulm = fit_unbiased_lambdamart(
                dataset,
                log,
                tree_config,
                validation=validation,
                p=pairwise_p,
                bias_every=bias_every,
            )
            return ClickFitResult(trained, np.zeros(0), ulm.t_plus, estimator, ulm.t_minus)
    stats = click_statistics(log, dataset)
    config = config_with(config, **options)
    config = dataclasses.replace(config, loss=click_loss(str(config.loss)))
    options = {}
    if estimator == "pairwise":
        from .pairwise_debias import fit_pairwise

        pw = fit_pairwise(dataset, log, rounds=pairwise_rounds, p=pairwise_p)
        alpha = pw.t_plus
        labels = click_labels(stats, estimator="ips", examination=alpha, tau=tau)
        trained = fit(
            dataclasses.replace(dataset, labels=labels), config, validation=validation, **options
        )
        return ClickFitResult(trained, labels, alpha, estimator, pw.t_minus)
    if estimator != "dla":
        alpha = _positions(examination, stats.k, "examination", 1.0)
        labels = click_labels(
            stats,
            estimator=estimator,
            examination=alpha,
            trust_offset=trust_offset,
            tau=tau,
            features=dataset.features,
        )
        trained = fit(
            dataclasses.replace(dataset, labels=labels), config, validation=validation, **options
        )
        return ClickFitResult(trained, labels, alpha, estimator)
    alpha, labels, result = fit_dla(
        stats, dataset, config, rounds=dla_rounds, tau=tau, validation=validation, **options
    )
    return ClickFitResult(result, labels, alpha, estimator)


def fit_dla(
    stats: ClickStatistics,
    dataset: RankingDataset,
    config: Any = None,
    *,
    rounds: int = 3,
    tau: float = 0.0,
    validation: RankingDataset | None = None,
    **options: Any,
) -> tuple[np.ndarray, np.ndarray, Any]:
    """DLA from sufficient statistics: ``rounds`` rounds of the ranker step (training through
    :func:`ndcglab.training.fit` on ``ips`` labels under ``α̂``, from ``α̂ = 1``) and the
    propensity step (:func:`dla_propensities` on the ranker's softmax per query). Returns ``(α̂``
    after the last propensity step``, the last labels, the last training result)``."""
    from ..training import fit

    if int(rounds) < 1:
        raise SpecError(f"dla_rounds must be at least 1, got {rounds}").naming("dla_rounds")
    alpha = np.ones(stats.k)
    result: Any = None
    labels = np.zeros(dataset.n_docs)
    for _ in range(int(rounds)):
        labels = click_labels(stats, estimator="ips", examination=alpha, tau=tau)
        result = fit(
            dataclasses.replace(dataset, labels=labels), config, validation=validation, **options
        )
        scores = np.asarray(result.predict(dataset), dtype=np.float64)
        alpha = dla_propensities(stats, _query_softmax(scores, dataset.boundaries))
    return alpha, labels, result


def dla_examination(
    dataset: RankingDataset,
    log: ClickLog,
    config: Any = None,
    *,
    rounds: int = 3,
    tau: float = 0.0,
    **options: Any,
) -> np.ndarray:
    """The examination ``α̂`` (``α̂_1 = 1``) that ``rounds`` rounds of DLA learn from ``log``
    (as in :func:`fit_clicks` with ``estimator="dla"``); training on ``ips`` labels under it is
    DLA's next ranker step."""
    stats = click_statistics(log, dataset)
    return fit_dla(stats, dataset, config, rounds=rounds, tau=tau, **options)[0]
