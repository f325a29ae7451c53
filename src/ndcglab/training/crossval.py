"""Cross-validation: folds → fit → evaluate, for every model kind.

:func:`cross_validate` trains every *run* on every fold's training part (model selection on its
validation part), scores the fold's test part and evaluates it with
:func:`ndcglab.measures.evaluate`. Folds are visited in order and, inside a fold, the runs in
order. A run is a :class:`~ndcglab.training.TrainConfig` (trained by
:func:`ndcglab.training.fit`, or :func:`ndcglab.training.tune` when ``tuning`` is given and the
kind is tunable) or a function ``fitter(fold) -> result`` for protocols of one's own; a result
has ``predict(dataset)`` (:class:`~ndcglab.training.TrainResult` has).

A run whose training diverges (:class:`~ndcglab.training.TrainingDivergedError`) is recorded as
failed on that fold (fold, epoch, message) and the other runs go on; ``failures="raise"`` lets
the error through instead. :meth:`CVResult.summary` gives each measure's mean and sample standard
deviation (ddof = 1; 0 for one fold) over the folds of a run, None for a run that failed anywhere.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import SpecError
from .config import TrainConfig, TrainingDivergedError

__all__ = ["CVResult", "FoldResult", "cross_validate"]


@dataclass
class FoldResult:
    """One run on one fold: the training result (``None`` when it failed), the test evaluation
    (an :class:`~ndcglab.measures.EvaluationResult`), the seconds spent (training, scoring and
    evaluating) and, for a failed run, ``failure`` = ``{"fold", "epoch", "error"}``."""

    fold: str
    run: str
    result: Any
    evaluation: Any
    seconds: float
    failure: dict[str, Any] | None = None

    def __repr__(self) -> str:
        """One line: run, fold, seconds, and the test means (or the failure), no arrays."""
        if self.failure is not None:
            what = f"failed: {self.failure.get('error')}"
        elif self.evaluation is not None:
            what = ", ".join(f"{k} {v:.4f}" for k, v in self.evaluation.mean.items())
        else:
            what = "not evaluated"
        return f"FoldResult({self.run!r} on {self.fold!r}, {self.seconds:.1f} s: {what})"

    def to_dict(self, unit: str = "epoch") -> dict[str, Any]:
        """The fold's record (a trained run): ``fold``, the test ``mean`` per measure,
        ``best_<unit>``, ``<unit>s_run``, ``stop_reason``, the best validation value ``valid``
        and its ``valid_measure``, ``seconds``, ``converged`` and the ``tuning`` record."""
        res = self.result
        meta = getattr(res.trained, "metadata", None) or {}
        return {
            "fold": self.fold,
            "mean": dict(self.evaluation.mean),
            f"best_{unit}": res.best_epoch,
            f"{unit}s_run": res.epochs_run,
            "stop_reason": res.stop_reason,
            "valid": res.best_score,
            "valid_measure": res.measure,
            "seconds": self.seconds,
            "converged": res.converged,
            "tuning": meta.get("tuning"),
        }


@dataclass
class CVResult:
    """Every :class:`FoldResult` of a cross-validation, in the order they ran."""

    runs: list[str]
    folds: list[str]
    results: list[FoldResult] = field(default_factory=list)

    def __repr__(self) -> str:
        """A summary, not every array: the runs and folds, then per run the mean ± sample std
        of each measure over its folds (or how many folds failed)."""
        lines = [
            f"CVResult({len(self.runs)} run(s) x {len(self.folds)} fold(s): "
            f"folds {', '.join(self.folds) or '-'}; {len(self.results)} fold result(s))"
        ]
        names = self.measure_names()
        for run in self.runs:
            failed = self.failures(run)
            if failed:
                lines.append(f"  {run}: {len(failed)} fold(s) failed")
                continue
            summ = self.summary(run, names)
            cells = [f"{n} {summ['mean'][n]:.4f}±{summ['std'][n]:.4f}" for n in names]
            lines.append(f"  {run}: {', '.join(cells) or 'no fold trained'}")
        return "\n".join(lines)

    def of(self, run: str) -> list[FoldResult]:
        """The folds of ``run`` that trained (in fold order)."""
        return [r for r in self.results if r.run == run and r.failure is None]

    def failures(self, run: str) -> list[dict[str, Any]]:
        """The failed folds of ``run``: ``{"fold", "epoch", "error"}`` each."""
        return [r.failure for r in self.results if r.run == run and r.failure is not None]

    def measure_names(self, specs: Sequence[str] | None = None) -> list[str]:
        """The printed names of the measures evaluated; when every run failed, those of
        ``specs`` (the measures asked for; empty without them)."""
        done = next((r for r in self.results if r.evaluation is not None), None)
        if done is not None:
            return list(done.evaluation.mean)
        from ..measures import parse_measures

        return [str(m) for m in parse_measures(list(specs))] if specs else []

    def to_dict(self, run: str, names: Sequence[str], unit: str = "epoch") -> dict[str, Any]:
        """``run``'s record: :meth:`summary`'s ``mean`` and ``std``, the trained ``folds``
        (:meth:`FoldResult.to_dict`), the ``failed`` ones and ``std_ddof`` (1)."""
        rows = [r.to_dict(unit) for r in self.of(run)]
        return {
            **self.summary(run, names),
            "folds": rows,
            "failed": self.failures(run),
            "std_ddof": 1,
        }

    def summary(self, run: str, names: Sequence[str] | None = None) -> dict[str, Any]:
        """``{"mean": {measure: value}, "std": {...}}`` over the folds of ``run`` (sample std,
        ddof = 1; 0 for a single fold); both None when the run failed on some fold."""
        names = list(self.measure_names() if names is None else names)
        if self.failures(run):
            return {"mean": None, "std": None}
        rows = self.of(run)
        values = {
            n: np.array([r.evaluation.mean[n] for r in rows], dtype=np.float64) for n in names
        }
        return {
            "mean": {n: float(v.mean()) for n, v in values.items()},
            "std": {n: float(v.std(ddof=1)) if len(v) > 1 else 0.0 for n, v in values.items()},
        }


def cross_validate(
    folds: Iterable[Any],
    runs: Mapping[str, TrainConfig | Callable[[Any], Any]],
    *,
    measures: Sequence[str] | None = None,
    preset: str | None = None,
    client: Any = None,
    tuning: Mapping[str, Any] | None = None,
    progress: bool | None = None,
    failures: str = "record",
    log: Callable[[str], None] | None = None,
    before: Callable[[Any, str], None] | None = None,
    on_fold: Callable[[FoldResult], None] | None = None,
) -> CVResult:
    """Train, test and evaluate every run on every fold; see the module docstring.

    ``folds``: objects with ``name``, ``train``, ``vali`` (None: no model selection) and
    ``test`` (:class:`ndcglab.data.LetorFold`, or a fold of one's own). ``runs``: name →
    :class:`~ndcglab.training.TrainConfig` or ``fitter(fold)``. ``measures`` (None: the preset's
    usual set) are evaluated under ``preset`` (None: the first configuration's preset).
    ``client``: a Dask client for the kinds that train on one. ``tuning``: keyword arguments of
    :func:`ndcglab.training.tune` (``grid``, ``select_epoch``) to choose the optimiser's options
    on each fold's validation part. ``progress``: progress bars of the training runs.
    ``log(message)`` receives the tuning's lines (prefixed by fold and run); ``before(fold,
    run)`` is called before each training, ``on_fold`` with each :class:`FoldResult` as it is
    done.
    """
    from ..measures import evaluate

    if failures not in ("record", "raise"):
        raise SpecError(
            f"failures={failures!r} is not a failure rule. Fix: pass failures='record' (name the "
            "failed runs and go on) or failures='raise'"
        ).naming("failures")
    if preset is None:
        preset = next((c.preset for c in runs.values() if isinstance(c, TrainConfig)), None)
    wanted = list(measures) if measures else None
    out = CVResult(runs=list(runs), folds=[])
    for fold in folds:
        out.folds.append(fold.name)
        for name, run in runs.items():
            if before is not None:
                before(fold, name)
            t0 = time.perf_counter()
            try:
                result = _fit_run(run, fold, client, tuning, progress, log, name)
            except TrainingDivergedError as exc:
                if failures == "raise":
                    raise
                failure = {"fold": fold.name, "epoch": exc.epoch, "error": str(exc)}
                done = FoldResult(fold.name, name, None, None, time.perf_counter() - t0, failure)
            else:
                scores = result.predict(fold.test)
                ev = evaluate(fold.test, scores, wanted, preset=preset)
                done = FoldResult(fold.name, name, result, ev, time.perf_counter() - t0)
            out.results.append(done)
            if on_fold is not None:
                on_fold(done)
    return out


def _fit_run(
    run: TrainConfig | Callable[[Any], Any],
    fold: Any,
    client: Any,
    tuning: Mapping[str, Any] | None,
    progress: bool | None,
    log: Callable[[str], None] | None,
    name: str,
) -> Any:
    if not isinstance(run, TrainConfig):
        return run(fold)
    from .kinds import get_kind

    if tuning is not None and get_kind(run.model).tunable:
        from .tuning import tune

        line = None if log is None else (lambda m: log(f"{fold.name} {name}: {m}"))
        return tune(
            fold.train, run, validation=fold.vali, progress=progress, log=line, **tuning
        ).result
    from .fitting import fit

    return fit(fold.train, run, validation=fold.vali, client=client, progress=progress)
