"""Unbiased LambdaMART (Hu, Wang, Peng and Li, "Unbiased LambdaMART: An Unbiased Pairwise
Learning-to-Rank Algorithm", WWW 2019): boosted trees grown from the lambda gradients of the
(clicked, unclicked) pairs of each logged session, each pair divided by the click bias of the
clicked document's position and the non-click bias of the other's, the biases re-estimated
from the pairs' lambda loss between boosting rounds.

Conventions (formulas in docs/clicks.md, "Pairwise debiasing"):

* **Sessions.** Each logged session is one list: the documents it showed (rows of the dataset)
  at positions ``1..m`` and their clicks. Identical sessions (same documents at the same
  positions, same clicks) are merged and counted (``count``); a session without a click, or
  without a shown unclicked document, has no pair and is dropped.
* **Pairs.** Every clicked document ``a`` at logged position ``i`` and unclicked document ``b``
  at logged position ``j`` of the same session (any ``i``, ``j``).
* **Lambda loss of a pair** at scores ``s``: ``ℓ_ab = |ΔNDCG_ab| · log(1 + exp(−σ(s_a − s_b)))``
  where ``|ΔNDCG_ab| = |D(r_a) − D(r_b)| / IDCG`` is the change of the session's NDCG when ``a``
  and ``b`` swap places in the session's ranking by the current scores (``r``: ranks 1..m,
  ties broken by the logged position; ``D(r) = 1/log2(r + 1)``; the gain of a click is
  ``2^1 − 1 = 1``, so ``IDCG = Σ_{r ≤ #clicks} D(r)``). As in LambdaMART, ``|ΔNDCG|`` is held
  fixed when differentiating.
* **Gradients.** With ``ρ_ab = 1 / (1 + exp(σ(s_a − s_b)))`` and the pair's weight
  ``w_ab = count / (t⁺_i · t⁻_j)``: ``∂/∂s_a = −σ·|ΔNDCG|·ρ·w``, ``∂/∂s_b = +σ·|ΔNDCG|·ρ·w``,
  and the Hessian diagonal ``σ²·|ΔNDCG|·ρ(1 − ρ)·w`` for both, summed over the pairs of all
  sessions **per document row of the dataset**. The trees are grown on the dataset's rows: a
  tree's split gains and leaf values depend on the gradients only through their sums over the
  rows in a leaf, which are the same as with one row per impression.
* **Bias step** (:func:`~ndcglab.clicks.pairwise_debias.bias_step`): after every ``bias_every``
  trees (and after the last), the closed-form minimisers of ``Σ w_ab·ℓ_ab`` with an ``L_p``
  regularisation, relative to position 1, from the pairs' lambda losses at the current scores.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import DataFormatError, SpecError
from .logs import ClickLog, aligned_to, validate_log
from .pairwise_debias import bias_step

__all__ = [
    "BIAS_LOSSES",
    "SessionPairs",
    "UnbiasedLambdaMART",
    "UnbiasedLambdaObjective",
    "fit_unbiased_lambdamart",
    "session_pairs",
    "train_unbiased_lambdamart",
]


@dataclass(frozen=True)
class SessionPairs:
    """The sessions of a log as padded ``(S, k)`` arrays and their (clicked, unclicked) pairs.

    ``doc``: the dataset row shown at each position (``-1``: nothing shown); ``click``: 0/1;
    ``count``: how many logged sessions were this one; ``inv_idcg``: ``1 / IDCG`` of each
    session's clicks. The pairs: ``session`` (index into the rows above), ``col_hi`` /
    ``col_lo`` (0-based positions of the clicked and the unclicked document), ``hi`` / ``lo``
    (their dataset rows). ``n_docs``: the dataset's rows; ``k``: the log's positions."""

    doc: np.ndarray
    click: np.ndarray
    count: np.ndarray
    inv_idcg: np.ndarray
    session: np.ndarray
    col_hi: np.ndarray
    col_lo: np.ndarray
    hi: np.ndarray
    lo: np.ndarray
    n_docs: int
    k: int

    def __len__(self) -> int:
        return len(self.hi)


def session_pairs(log: ClickLog, dataset: Any) -> SessionPairs:
    """The sessions and pairs of ``log`` on ``dataset`` (module docstring). The log is validated
    against ``dataset`` and aligned to its query order first."""
    validate_log(log, dataset=dataset)
    log = aligned_to(log, dataset)
    k = max(int(log.k), 1)
    starts = log.session_starts()
    n_sessions = len(starts) - 1
    row_session = np.repeat(np.arange(n_sessions), np.diff(starts))
    col = np.asarray(log.position, dtype=np.int64) - 1
    doc = np.full((n_sessions, k), -1, dtype=np.int64)
    click = np.zeros((n_sessions, k), dtype=np.int64)
    doc[row_session, col] = np.asarray(log.doc, dtype=np.int64)
    click[row_session, col] = np.asarray(log.click, dtype=np.int64)
    shown = doc >= 0
    n_click = click.sum(1)
    useful = (n_click > 0) & ((shown & (click == 0)).sum(1) > 0)
    doc, click = doc[useful], click[useful]
    if len(doc):
        merged, count = np.unique(np.concatenate([doc, click], axis=1), axis=0, return_counts=True)
        doc, click = merged[:, :k], merged[:, k:]
    else:
        count = np.zeros(0, dtype=np.int64)
    from ..measures import get_discount

    ideal = np.concatenate(([0.0], np.cumsum(get_discount("log").table(k))))
    n_click = click.sum(1)
    inv_idcg = np.where(n_click > 0, 1.0 / ideal[n_click], 0.0)
    unclicked = (doc >= 0) & (click == 0)
    s, a, b = np.nonzero((click == 1)[:, :, None] & unclicked[:, None, :])
    return SessionPairs(
        doc=doc,
        click=click,
        count=count.astype(np.float64),
        inv_idcg=inv_idcg,
        session=s.astype(np.int64),
        col_hi=a.astype(np.int64),
        col_lo=b.astype(np.int64),
        hi=doc[s, a],
        lo=doc[s, b],
        n_docs=int(dataset.n_docs),
        k=k,
    )


#: what the bias step reads of each pair: the lambda loss (the paper) or the plain logistic loss
BIAS_LOSSES = ("lambda", "logistic")


def _check(sigma: float, p: float, bias_every: int, bias_loss: str = "lambda") -> None:
    if bias_loss not in BIAS_LOSSES:
        raise SpecError(f"unknown bias_loss {bias_loss!r}; known: {', '.join(BIAS_LOSSES)}").naming(
            "bias_loss"
        )
    if not float(sigma) > 0:
        raise SpecError(f"sigma must be positive, got {sigma}").naming("sigma")
    if not float(p) >= 0:
        raise SpecError(f"the regularisation p must be >= 0, got {p}").naming("p")
    if int(bias_every) < 1:
        raise SpecError(
            f"bias_every must be at least 1 (trees between bias steps), got {bias_every}"
        ).naming("bias_every")


@dataclass
class UnbiasedLambdaObjective:
    """The debiased lambda objective of :class:`SessionPairs` with its biases ``t_plus``,
    ``t_minus`` (length ``k``, position 1 = 1), usable as LightGBM's custom objective
    (``__call__(preds, train_data)``): before each tree after the first ``bias_every``, the
    biases are re-estimated from the scores reached (:meth:`update_biases`)."""

    pairs: SessionPairs
    sigma: float = 1.0
    p: float = 0.0
    bias_every: int = 1
    bias_loss: str = "lambda"
    t_plus: np.ndarray = field(default_factory=lambda: np.zeros(0))
    t_minus: np.ndarray = field(default_factory=lambda: np.zeros(0))
    round: int = 0
    #: ``(t_plus, t_minus)`` after each bias step
    history: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)

    def __post_init__(self) -> None:
        _check(self.sigma, self.p, self.bias_every, self.bias_loss)
        k = self.pairs.k
        if len(self.t_plus) == 0:
            self.t_plus = np.ones(k)
        if len(self.t_minus) == 0:
            self.t_minus = np.ones(k)

    @staticmethod
    def _discount(rank: np.ndarray) -> np.ndarray:
        """NDCG's discount ``1 / log2(1 + r)`` (the measures' ``log`` discount)."""
        from ..measures import get_discount

        return np.asarray(get_discount("log")(rank), dtype=np.float64)

    def _delta(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(|ΔNDCG| of each pair, s_hi − s_lo)`` at ``scores`` (dataset rows)."""
        pr = self.pairs
        s = np.asarray(scores, dtype=np.float64)
        shown = pr.doc >= 0
        mat = np.where(shown, s[np.maximum(pr.doc, 0)], -np.inf)
        order = np.argsort(-mat, axis=1, kind="stable")  # ties: the logged order
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(1, pr.k + 1)[None, :], axis=1)
        disc = self._discount(rank)
        delta = (
            np.abs(disc[pr.session, pr.col_hi] - disc[pr.session, pr.col_lo])
            * pr.inv_idcg[pr.session]
        )
        return delta, s[pr.hi] - s[pr.lo]

    def pair_losses(self, scores: np.ndarray) -> np.ndarray:
        """The lambda loss ``|ΔNDCG|·log(1 + exp(−σ(s_hi − s_lo)))`` of each pair (not weighted
        by the biases or the session count)."""
        delta, d = self._delta(scores)
        return np.asarray(delta * np.logaddexp(0.0, -float(self.sigma) * d), dtype=np.float64)

    def weights(self) -> np.ndarray:
        """``count / (t⁺_i · t⁻_j)`` of each pair."""
        pr = self.pairs
        return np.asarray(
            pr.count[pr.session] / (self.t_plus[pr.col_hi] * self.t_minus[pr.col_lo]),
            dtype=np.float64,
        )

    def loss(self, scores: np.ndarray) -> float:
        """The debiased objective ``Σ_pairs w·ℓ`` at ``scores`` (``|ΔNDCG|`` at ``scores``)."""
        return float(np.dot(self.weights(), self.pair_losses(scores)))

    def grad_hess(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(grad, hess)`` float64 ``(n_docs,)`` at ``scores`` under the current biases."""
        pr = self.pairs
        sigma = float(self.sigma)
        delta, d = self._delta(scores)
        rho = 0.5 * (1.0 - np.tanh(0.5 * sigma * d))  # 1 / (1 + exp(σd)), overflow-free
        w = self.weights() * delta
        lam = -sigma * rho * w
        hes = sigma * sigma * rho * (1.0 - rho) * w
        n = pr.n_docs
        g = np.bincount(pr.hi, weights=lam, minlength=n) - np.bincount(
            pr.lo, weights=lam, minlength=n
        )
        h = np.bincount(pr.hi, weights=hes, minlength=n) + np.bincount(
            pr.lo, weights=hes, minlength=n
        )
        return g[:n], h[:n]

    def update_biases(self, scores: np.ndarray) -> None:
        """The bias step at ``scores`` (:func:`~ndcglab.clicks.pairwise_debias.bias_step` on
        the pairs' lambda losses — or, with ``bias_loss="logistic"``, their logistic losses
        ``log(1 + exp(−σ(s_hi − s_lo)))`` — times their session counts)."""
        pr = self.pairs
        if self.bias_loss == "lambda":
            losses = self.pair_losses(scores)
        else:
            s = np.asarray(scores, dtype=np.float64)
            losses = np.logaddexp(0.0, -float(self.sigma) * (s[pr.hi] - s[pr.lo]))
        weighted = pr.count[pr.session] * losses
        self.t_plus, self.t_minus = bias_step(
            pr.col_hi + 1, pr.col_lo + 1, weighted, self.t_plus, self.t_minus, p=self.p
        )
        self.history.append((self.t_plus.copy(), self.t_minus.copy()))

    def __deepcopy__(self, memo: dict[int, Any]) -> UnbiasedLambdaObjective:
        # lightgbm.train deep-copies its params: share this object, whose biases are the state
        return self

    def __call__(self, preds: np.ndarray, train_data: Any) -> tuple[np.ndarray, np.ndarray]:
        """LightGBM's custom objective: the bias step every ``bias_every`` trees, then
        ``(grad, hess)`` at ``preds``."""
        if self.round > 0 and self.round % int(self.bias_every) == 0:
            self.update_biases(preds)
        self.round += 1
        return self.grad_hess(preds)


@dataclass(frozen=True)
class UnbiasedLambdaMART:
    """What :func:`train_unbiased_lambdamart` returns: the boosted trees (``model``, a
    :class:`~ndcglab.gbdt.GBDTModel`: ``predict``, ``save``), the final click and non-click
    biases ``t_plus``, ``t_minus`` (position 1 = 1) and their values after each bias step
    (``history``)."""

    model: Any
    t_plus: np.ndarray
    t_minus: np.ndarray
    history: list[tuple[np.ndarray, np.ndarray]]

    def predict(self, data: Any) -> np.ndarray:
        return np.asarray(self.model.predict(data), dtype=np.float64)


def train_unbiased_lambdamart(
    dataset: Any,
    log: ClickLog,
    *,
    num_boost_round: int = 100,
    learning_rate: float = 0.1,
    num_leaves: int = 31,
    min_data_in_leaf: int = 20,
    sigma: float = 1.0,
    p: float = 0.0,
    bias_every: int = 1,
    bias_loss: str = "lambda",
    valid: Any = None,
    early_stopping_rounds: int | None = None,
    measure: str = "ndcg@10",
    preset: str | None = "letor4",
    seed: int = 0,
    num_threads: int = 0,
    params: dict[str, Any] | None = None,
) -> UnbiasedLambdaMART:
    """Unbiased LambdaMART on the sessions of ``log`` (rows of ``dataset``, a
    :class:`~ndcglab.data.RankingDataset`, whose labels are not read): LightGBM trees grown
    from :class:`UnbiasedLambdaObjective` for ``num_boost_round`` rounds from ``t⁺ = t⁻ = 1``
    and scores 0, the biases re-estimated every ``bias_every`` trees and once after the last
    (module docstring; ``bias_loss="logistic"``: the bias step reads the pairs' logistic loss
    without ``|ΔNDCG|``). ``valid`` (judged labels) with ``early_stopping_rounds`` stops on
    ``measure`` under ``preset``; ``params`` adds LightGBM parameters."""
    from .._compat import lightgbm
    from ..gbdt import GBDTModel
    from ..gbdt.common import model_metadata
    from ..gbdt.model import model_versions
    from ..gbdt.params import engine_refusal
    from ..gbdt.train import MeasureFeval, lightgbm_params, to_lgb_dataset, training_record
    from ..training.config import default_threads

    _check(sigma, p, bias_every, bias_loss)
    pairs = session_pairs(log, dataset)
    if len(pairs) == 0:
        raise DataFormatError(
            "the log has no session with both a click and a shown document without one",
            fix="give a log with more sessions",
        )
    objective = UnbiasedLambdaObjective(
        pairs, sigma=sigma, p=p, bias_every=bias_every, bias_loss=bias_loss
    )
    lgb = lightgbm()
    settings = lightgbm_params(
        learning_rate=learning_rate,
        num_leaves=num_leaves,
        min_data_in_leaf=min_data_in_leaf,
        seed=seed,
        num_threads=int(num_threads) or default_threads(dataset.n_docs, dataset.n_features),
    )
    settings["objective"] = objective
    settings.update(dict(params or {}))
    dtrain = to_lgb_dataset(dataset, params={"feature_pre_filter": False})
    history: dict[str, Any] = {}
    callbacks: list[Any] = [lgb.record_evaluation(history)]
    feval = None
    valid_sets: list[Any] = []
    if valid is not None:
        feval = MeasureFeval(measure, preset)
        valid_sets = [to_lgb_dataset(valid, reference=dtrain, params={"feature_pre_filter": False})]
        if early_stopping_rounds:
            callbacks.append(
                lgb.early_stopping(
                    int(early_stopping_rounds), first_metric_only=True, verbose=False
                )
            )
    t0 = time.perf_counter()
    try:
        booster = lgb.train(
            settings,
            dtrain,
            num_boost_round=int(num_boost_round),
            valid_sets=valid_sets or None,
            valid_names=["valid"] if valid_sets else None,
            feval=feval,
            callbacks=callbacks,
        )
    except lgb.basic.LightGBMError as exc:
        raise engine_refusal("lightgbm", exc, dict(params or {})) from None
    seconds = time.perf_counter() - t0
    best = int(booster.best_iteration or 0)
    scores = np.asarray(booster.predict(dataset.features, num_iteration=best or None), np.float64)
    objective.update_biases(scores)  # the paper's last step: the biases of the final model
    curve = history.get("valid", {}).get(feval.name, []) if feval is not None else []
    stored = {k: v for k, v in settings.items() if k != "objective"}
    stored["objective"] = "custom"
    spec = (
        f"unbiased_lambdamart(sigma={float(sigma):g},p={float(p):g},"
        f"bias_every={int(bias_every)},bias_loss={bias_loss})"
    )
    meta = model_metadata(
        loss=spec,
        objective={
            "hessian": "closed",
            "estimator": "pairwise",
            "t_plus": objective.t_plus.tolist(),
            "t_minus": objective.t_minus.tolist(),
            "pairs": len(pairs),
            "sessions": int(pairs.count.sum()),
        },
        params=stored,
        model={"kind": GBDTModel.kind, "best_iteration": best},
        feature_names=dataset.feature_names,
        training_data=dataset.source,
        training=training_record(
            booster,
            curve,
            num_boost_round=num_boost_round,
            early_stopping_rounds=early_stopping_rounds,
            measure=measure,
            preset=preset,
            watched=feval is not None,
            seconds=seconds,
        ),
        seed=seed,
        versions=model_versions(),
    )
    model = GBDTModel(booster=booster, metadata=meta)
    return UnbiasedLambdaMART(
        model, objective.t_plus.copy(), objective.t_minus.copy(), list(objective.history)
    )


#: the settings of :func:`ndcglab.gbdt.train.settings_from_config` that
#: :func:`train_unbiased_lambdamart` takes by name (the rest are LightGBM parameters)
_NAMED = frozenset(
    {
        "num_boost_round",
        "learning_rate",
        "num_leaves",
        "min_data_in_leaf",
        "early_stopping_rounds",
        "measure",
        "preset",
        "seed",
        "num_threads",
    }
)


def fit_unbiased_lambdamart(
    dataset: Any,
    log: ClickLog,
    config: Any,
    *,
    validation: Any = None,
    p: float = 0.0,
    bias_every: int = 1,
    bias_loss: str = "lambda",
) -> tuple[Any, UnbiasedLambdaMART]:
    """:func:`train_unbiased_lambdamart` with the tree options of a
    :class:`~ndcglab.training.TrainConfig` (``model="gbdt"``: ``rounds``, ``lr``, ``patience``,
    ``trees.num_leaves`` ...; the LightGBM engine only; its loss is not read). Returns
    ``(the training result, the fit)`` — the result as :func:`ndcglab.training.fit` gives it
    for boosted trees."""
    from ..gbdt.train import settings_from_config
    from ..training.fitting import tree_result
    from ..training.kinds import get_kind

    if get_kind(config.model).route != "trees":
        raise SpecError(
            f"Unbiased LambdaMART grows boosted trees, not model {config.model!r}. Fix: "
            "model='gbdt'"
        ).naming("model")
    if config.trees.engine != "lightgbm":
        raise SpecError(
            f"Unbiased LambdaMART grows LightGBM trees, not {config.trees.engine} ones. Fix: "
            "the lightgbm engine (XGBoost's own debiasing is the baseline "
            "ndcglab.clicks.baselines.xgboost_unbiased)"
        ).naming("engine")
    settings = settings_from_config(config)
    hessian = settings.pop("hessian", "auto")
    if hessian not in ("auto", "closed"):
        raise SpecError(
            f"Unbiased LambdaMART has its own closed-form Hessian; hessian={hessian!r} does not "
            "apply. Fix: leave hessian at auto"
        ).naming("hessian")
    named = {k: v for k, v in settings.items() if k in _NAMED}
    extra = {k: v for k, v in settings.items() if k not in _NAMED}
    if validation is None:
        named.pop("early_stopping_rounds", None)
    fitted = train_unbiased_lambdamart(
        dataset,
        log,
        valid=validation,
        p=p,
        bias_every=bias_every,
        bias_loss=bias_loss,
        params=extra,
        **named,
    )
    return tree_result(fitted.model), fitted
