"""Training and evaluation steps shared by the experiments (thin wrappers over the library).

Training goes through :func:`ndcglab.training.fit` (linear model, the papers' setting; AdaRank for
its boosting loss), the configuration built by :func:`ndcglab.training.config_from_options`;
folds → fit → evaluate through :func:`ndcglab.training.cross_validate` (:func:`cross_fit`);
evaluation through :func:`ndcglab.measures.evaluate`. Nothing here computes a gain, a discount or
a measure.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..data.dataset import RankingDataset
from ._common import FoldData, Settings, timed

if TYPE_CHECKING:
    from .report import Report

__all__ = ["Fitted", "PerQueryStore", "cross_fit", "evaluate", "fit_on_fold", "fit_scores"]


@dataclass
class Fitted:
    """One trained model's scores on the requested sets, and how the training went."""

    loss: str
    scores: dict[str, np.ndarray]
    best_epoch: int
    epochs_run: int
    stop_reason: str
    best_score: float | None
    seconds: float
    loss_name: str = ""
    lr: float | None = None
    #: the protocol's name (:mod:`.protocols`), ``""`` when trained outside one
    protocol: str = ""
    #: whether the optimiser's stopping rule was met (None: Adam, AdaRank) and the final max-norm
    #: of the gradient (gradient descent and L-BFGS)
    converged: bool | None = None
    grad_norm: float | None = None
    #: tuned protocols: the chosen grid values, every trial and the validation target's name
    chosen: dict[str, Any] = field(default_factory=dict)
    trials: list[dict[str, Any]] = field(default_factory=list)
    target: str = ""
    #: the datasets scored, by the names of ``scores``
    sets: Mapping[str, RankingDataset] = field(default_factory=dict, repr=False)

    def predict(self, ds: RankingDataset) -> np.ndarray:
        """The scores of ``ds``, one of the sets scored after training (as a training result's
        ``predict``, for :func:`ndcglab.training.cross_validate`)."""
        for name, scored in self.sets.items():
            if scored is ds:
                return self.scores[name]
        raise KeyError("this dataset was not scored after training")


def fit_scores(
    loss: str,
    train: RankingDataset,
    score_sets: Mapping[str, RankingDataset],
    *,
    validation: RankingDataset | None = None,
    epochs: int = 200,
    lr: float | None = None,
    tol: float = 1e-6,
    seed: int = 0,
    preset: str | None = "letor3",
    validation_measure: str = "ndcg@10",
    rounds: int | None = None,
    normalize: str = "zscore",
    optimizer: str = "gd",
    patience: int | None = None,
    eval_every: int = 1,
) -> Fitted:
    """Train a linear model with ``loss`` on ``train`` and score every set in ``score_sets``.

    Full-batch gradient descent (``optimizer="gd"``) until the objective changes by less than
    ``tol`` or ``epochs`` epochs; with ``validation`` the epoch with the best
    ``validation_measure`` (under ``preset``) is kept. AdaRank (``loss="adarank..."``) is boosted
    for ``rounds`` rounds instead.

    If the objective diverges (the trainer stops with "the training loss became inf/nan … lower the
    learning rate"), the run is repeated with the learning rate divided by 10, up to four times —
    a fixed, loss-agnostic rule (losses summed over a list, such as the squared loss, need a
    smaller step than those normalised per list); the rate used is returned in ``Fitted.lr``.
    """
    from ..errors import NdcglabError
    from ..training import DEFAULT_LR

    rate = float(lr) if lr is not None else DEFAULT_LR[optimizer]
    for attempt in range(5):
        try:
            return _fit_once(
                loss,
                train,
                score_sets,
                validation=validation,
                epochs=epochs,
                lr=rate,
                tol=tol,
                seed=seed,
                preset=preset,
                validation_measure=validation_measure,
                rounds=rounds,
                normalize=normalize,
                optimizer=optimizer,
                patience=patience,
                eval_every=eval_every,
            )
        except NdcglabError as exc:
            if "learning rate" not in str(exc) or attempt == 4:
                raise
            rate /= 10.0
    raise AssertionError("unreachable")  # pragma: no cover


def _fit_once(
    loss: str,
    train: RankingDataset,
    score_sets: Mapping[str, RankingDataset],
    *,
    validation: RankingDataset | None,
    epochs: int,
    lr: float,
    tol: float,
    seed: int,
    preset: str | None,
    validation_measure: str,
    rounds: int | None,
    normalize: str,
    optimizer: str,
    patience: int | None,
    eval_every: int,
) -> Fitted:
    from ..losses import get_loss
    from ..training import config_from_options, fit
    from ..training.kinds import get_kind, kind_for_loss

    kind = get_kind(kind_for_loss(get_loss(loss).kind))
    cfg = config_from_options(
        dict(
            loss=loss,
            model=kind.name,
            optimizer=optimizer,
            lr=lr,
            epochs=int(epochs),
            tol=tol,
            normalize=normalize,
            validation_measure=validation_measure,
            preset=preset,
            seed=int(seed),
            rounds=rounds,
            patience=patience,
            eval_every=eval_every,
            batch_size=None,  # full batch for both optimisers
        )
    )
    t0 = time.perf_counter()
    res = fit(train, cfg, validation=validation, progress=False)
    return fitted_from(loss, res, score_sets, t0, lr=lr if kind.tunable else None)


def fitted_from(
    loss: str,
    res: Any,
    score_sets: Mapping[str, RankingDataset],
    t0: float,
    *,
    lr: float | None,
) -> Fitted:
    """A :class:`Fitted` from a training result ``res`` (``TrainResult``): its scores on every
    set of ``score_sets`` and how the training went; ``t0`` is when the training started."""
    scores = {
        name: np.asarray(res.trained.predict(ds), dtype=np.float64)
        for name, ds in score_sets.items()
    }
    return Fitted(
        loss=loss,
        scores=scores,
        best_epoch=int(res.best_epoch),
        epochs_run=int(res.epochs_run),
        stop_reason=str(res.stop_reason),
        best_score=res.best_score,
        seconds=time.perf_counter() - t0,
        loss_name=str(res.trained.metadata.get("loss", loss)),
        lr=lr,
        converged=getattr(res, "converged", None),
        grad_norm=getattr(res, "grad_norm", None),
        sets=dict(score_sets),
    )


def fit_on_fold(
    report: Report,
    settings: Settings,
    store: PerQueryStore,
    fold: FoldData,
    name: str,
    loss: str,
    *,
    preset: str,
    **options: Any,
) -> Fitted:
    """Train ``loss`` on ``fold.train`` (:func:`fit_scores` with ``options``, seeded by the
    run's seed), evaluate its test scores on the store's measures with ``preset`` and add them to
    ``store`` as system ``name``. The time spent is added to ``report.timings[name]``."""
    settings.say(f"{report.experiment}: {fold.name}: {name}")
    with timed(report.timings, name):
        fit = fit_scores(
            loss, fold.train, {"test": fold.test}, seed=settings.seed, preset=preset, **options
        )
        res = evaluate(fold.test, fit.scores["test"], store.measures, preset)
    store.add(name, fold.name, res)
    return fit


def cross_fit(
    report: Report,
    settings: Settings,
    folds: Iterable[FoldData],
    runs: Mapping[str, Callable[[FoldData], Fitted]],
    measures: Sequence[str],
    preset: str | None,
    *,
    timing: Callable[[str], str] = lambda run: run,
) -> Any:
    """:func:`ndcglab.training.cross_validate` of the experiment's ``runs`` (name → a function
    training on a fold and returning a :class:`Fitted`): each fold's test part evaluated on
    ``measures`` under ``preset``, every run announced by ``settings.say`` and its time added to
    ``report.timings[timing(run)]``; a failed run raises (no failure is recorded and skipped)."""
    from ..training import cross_validate

    def before(fold: Any, run: str) -> None:
        settings.say(f"{report.experiment}: {fold.name}: {run}")

    def done(r: Any) -> None:
        key = timing(r.run)
        report.timings[key] = report.timings.get(key, 0.0) + r.seconds

    return cross_validate(
        folds,
        runs,
        measures=list(measures),
        preset=preset,
        failures="raise",
        before=before,
        on_fold=done,
    )


def evaluate(
    ds: RankingDataset, scores: np.ndarray, measures: Sequence[str], preset: str | None
) -> Any:
    """:func:`ndcglab.measures.evaluate` (``EvaluationResult``)."""
    from ..measures import evaluate as _evaluate

    return _evaluate(ds, scores, list(measures), preset=preset)


def record_lengths(folds: Iterable[Any], stores: Iterable[PerQueryStore]) -> Iterator[Any]:
    """``folds`` as they are, each fold's test list lengths recorded in every store (for
    :meth:`PerQueryStore.short_list_note`) as the fold passes."""
    stores = list(stores)
    for fold in folds:
        lengths = np.diff(np.asarray(fold.test.boundaries))
        for st in stores:
            st.list_lengths[str(fold.name)] = lengths
        yield fold


@dataclass
class PerQueryStore:
    """Per-query values of several systems on several measures, gathered fold by fold.

    ``add(system, fold, result)`` appends an ``EvaluationResult``'s per-query arrays (in the order
    of ``measures``, keyed by the short names given); queries of different folds are distinct, so
    the concatenation over folds covers every test query once.
    """

    measures: Sequence[str]
    values: dict[str, dict[str, list[np.ndarray]]] = field(default_factory=dict)
    fold_means: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    printed: dict[str, str] = field(default_factory=dict)
    conventions: dict[str, dict[str, Any]] = field(default_factory=dict)
    empty_queries: dict[str, int] = field(default_factory=dict)
    #: fold -> the document count of each of its test queries (:func:`record_lengths`)
    list_lengths: dict[str, np.ndarray] = field(default_factory=dict)

    def short_list_note(self, ks: Sequence[int]) -> str:
        """The note under a table of NDCG@k when the measures count NDCG@k of a query with
        fewer than k documents as 0 (the ``short=zero`` rule of the LETOR scripts,
        Eval-Score-3.0/4.0.pl) and some test queries are that short: how many are shorter than
        each k, and where the mean falls most; ``""`` otherwise."""
        conv = next(iter(self.conventions.values()), {})
        if conv.get("short") != "zero" or not self.list_lengths:
            return ""
        n = np.concatenate(list(self.list_lengths.values()))
        shorter = {k: int((n < k).sum()) for k in ks}
        if not any(shorter.values()):
            return ""
        steps = {k: shorter[k] - shorter.get(k - 1, 0) for k in ks}
        k_max = max(steps, key=lambda k: steps[k])
        counts = ", ".join(f"k = {k}: {c}" for k, c in shorter.items() if c)
        preset = str(conv.get("preset", "the LETOR preset"))
        return (
            f"LETOR's short-list rule ({preset}, as Eval-Score-3.0/4.0.pl): NDCG@k of a query "
            f"with fewer than k documents counts as 0, so a mean drops where k passes the "
            f"lists' lengths; test queries shorter than k, of {n.size}: {counts} (the largest "
            f"step, {steps[k_max]} queries, between N@{k_max - 1} and N@{k_max})"
        )

    def add(self, system: str, fold: str, result: Any) -> None:
        per = self.values.setdefault(system, {})
        fm = self.fold_means.setdefault(system, {})
        from .report.document import measure_convention

        names = [str(m) for m in result.measures]
        conv = result.convention
        for short, printed in zip(self.measures, names):
            arr = np.asarray(result.per_query[printed], dtype=np.float64)
            per.setdefault(short, []).append(arr)
            fm.setdefault(short, []).append(float(np.nanmean(arr)) if arr.size else float("nan"))
            self.printed[short] = printed
            self.conventions[printed] = measure_convention(conv, printed)
        self.empty_queries[f"{system}/{fold}"] = int(getattr(result, "empty_queries", 0) or 0)

    def resolved(self, measure: str) -> str:
        """The fully resolved printed spec of a measure (every option stated), for axis labels."""
        conv = self.conventions.get(self.printed.get(measure, measure), {})
        return str(conv.get("resolved", self.printed.get(measure, measure)))

    def systems(self) -> list[str]:
        return list(self.values)

    def per_query(self, system: str, measure: str) -> np.ndarray:
        return np.concatenate(self.values[system][measure])

    def mean(self, system: str, measure: str) -> float:
        v = self.per_query(system, measure)
        return float(np.nanmean(v)) if v.size else float("nan")

    def fold_std(self, system: str, measure: str) -> float | None:
        f = self.fold_means[system][measure]
        return float(np.std(f, ddof=1)) if len(f) > 1 else None

    def sem(self, system: str, measure: str) -> float:
        v = self.per_query(system, measure)
        v = v[~np.isnan(v)]
        return float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan")

    def as_mapping(self, systems: Sequence[str] | None = None) -> dict[str, dict[str, np.ndarray]]:
        """``{system: {measure: per-query array}}`` for
        :func:`ndcglab.analysis.significance.compare_rankers`."""
        return {
            s: {m: self.per_query(s, m) for m in self.measures} for s in (systems or self.systems())
        }
