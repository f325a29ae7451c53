"""Named training protocols for the learning experiments (``cost-sensitive``, ``consistency``,
``qnorm``), so that each claim can be checked under more than one way of training.

A protocol says how a linear model is fitted to a loss and whether, and on what, anything is chosen
on the validation part. Four are defined; every experiment runs three of them and names one the
*primary* (the paper's own protocol as far as the paper describes it):

* ``line-search`` — full-batch L-BFGS with a strong-Wolfe line search (no step size to choose),
  float64, run to the loss's minimiser: until the max-norm of the objective's gradient is at most
  ``gtol`` or the relative change of the objective at most ``tol``, capped at ``epochs``
  iterations; no tuning and no validation selection. Each run's convergence (converged / stalled /
  iteration cap, and the final gradient norm) is recorded. This is Ravikumar et al.'s "gradient
  descent without any parameter tuning": for a convex loss and a linear model, running to the
  minimiser is what a step-size-free method does.
* ``tuned-gd`` — plain full-batch gradient descent with a learning rate η, stopped when the
  objective changes by less than a tolerance ε (``|L_t − L_{t−1}| < ε``) or at the epoch cap, as
  Lu et al.'s Fig. 1; η and ε chosen per fold on the validation part by the measure the method
  targets — NDCG@k for CS-ListMLE@k, NDCG@10 otherwise — with
  :func:`ndcglab.training.tune` (``select_epoch=False``: each grid point trains to its own
  stopping rule and is scored once on validation; ties go to the first grid point).
* ``fixed-gd`` — the cost-sensitive experiment's original protocol: gradient descent with one
  learning rate (0.1, divided by 10 only if the loss diverges), the epoch kept by validation
  NDCG@10.
* ``adam`` — the consistency and q-norm experiments' original protocol: full-batch Adam, learning
  rate 0.01, a fixed number of epochs, no selection.

AdaRank has no gradient hyper-parameters: it is boosted the same way under every protocol (its
round chosen on validation NDCG@10), trained once per fold and shared by the protocols.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data.dataset import RankingDataset
from ._common import Settings

__all__ = [
    "PROTOCOLS",
    "Protocol",
    "add_verdict_table",
    "convergence_summary",
    "experiment_protocols",
    "fit_fold",
    "fit_protocol",
    "protocol_by_name",
]

#: the protocols by name, in the order they are described
PROTOCOLS: tuple[str, ...] = ("line-search", "tuned-gd", "fixed-gd", "adam")

#: each experiment's protocols, its primary (the paper's) first
_EXPERIMENTS: dict[str, tuple[str, ...]] = {
    "cost-sensitive": ("tuned-gd", "line-search", "fixed-gd"),
    "consistency": ("line-search", "tuned-gd", "adam"),
    "qnorm": ("line-search", "tuned-gd", "adam"),
}


@dataclass(frozen=True)
class Protocol:
    """One way of training a linear model (see the module docstring).

    ``optimizer``/``lr``/``epochs``/``tol``/``gtol``/``dtype`` are the
    :class:`~ndcglab.training.TrainConfig` fields; ``select_epoch`` keeps the epoch with the best
    validation NDCG@10; ``grid`` (tuned protocols) maps options to the values tried per fold;
    ``source`` says whose protocol it is; ``reduced`` what a reduced run (``--quick``) changed.
    """

    name: str
    optimizer: str
    epochs: int
    tol: float
    lr: float | None = None
    gtol: float | None = None
    dtype: str = "float32"
    select_epoch: bool = False
    grid: tuple[tuple[str, tuple[float, ...]], ...] = ()
    source: str = ""
    reduced: str = ""
    #: feature normalisation (the run's ``--normalize``)
    normalize: str = "zscore"

    @property
    def tuned(self) -> bool:
        return bool(self.grid)

    @property
    def slug(self) -> str:
        """The name as a file-stem suffix (``line_search``)."""
        return self.name.replace("-", "_")

    def grid_dict(self) -> dict[str, list[float]]:
        return {k: list(v) for k, v in self.grid}

    def grid_text(self) -> str:
        sym = {"lr": "η", "tol": "ε"}
        return " × ".join(
            f"{sym.get(k, k)} ∈ {{{', '.join(f'{x:g}' for x in v)}}}" for k, v in self.grid
        )

    def describe(self) -> str:
        """One paragraph: what the protocol does, with every number."""
        if self.name == "line-search":
            text = (
                "line-search: full-batch L-BFGS with a strong-Wolfe line search (no step size), "
                f"{self.dtype}, run to the minimiser: stops when the gradient's max-norm is at "
                f"most {self.gtol:g} or the relative change of the objective at most {self.tol:g} "
                f"(at most {self.epochs} iterations); no tuning, no validation selection; every "
                "run's convergence is recorded"
            )
        elif self.name == "tuned-gd":
            text = (
                f"tuned-gd: full-batch gradient descent in {self.dtype} with learning rate η until "
                f"|L_t − L_(t−1)| < ε (at most {self.epochs} epochs); η and ε chosen per fold on "
                "the validation part by the measure the method targets (NDCG@k for "
                f"CS-ListMLE@k, NDCG@10 otherwise) over the grid {self.grid_text()}; the chosen "
                "point's final weights are used (no epoch selection); if every η diverges, the "
                "grid's η are divided by 10 and the tuning repeated (at most four times)"
            )
        elif self.name == "fixed-gd":
            text = (
                f"fixed-gd: full-batch gradient descent, learning rate {self.lr or 0.1:g} "
                f"(divided by 10 only if the loss diverges), at most {self.epochs} epochs or until "
                f"the loss changes by less than {self.tol:g}; the epoch with the best validation "
                "NDCG@10 is kept"
            )
        else:
            text = (
                f"adam: full-batch Adam, learning rate {self.lr:g}, {self.epochs} epochs (or "
                f"until the loss changes by less than {self.tol:g}); no tuning, no selection"
            )
        if self.source:
            text += f" [{self.source}]"
        return text + "."

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "optimizer": self.optimizer,
            "lr": self.lr,
            "epochs": self.epochs,
            "tol": self.tol,
            "gtol": self.gtol,
            "dtype": self.dtype,
            "select_epoch": self.select_epoch,
            "grid": self.grid_dict(),
            "source": self.source,
            "reduced": self.reduced,
            "description": self.describe(),
        }


#: What ``--quick`` changes in ``tuned-gd`` (printed on the pages; keep it equal to the quick grid
#: and epoch cap of :func:`protocol_by_name`, which a test checks).
TUNED_GD_QUICK = (
    "a 2 × 2 grid (η ∈ {0.001, 0.1}, not {0.001, 0.01, 0.1, 1}; ε ∈ {1e-4, 1e-5}, not "
    "{1e-3, 1e-4, 1e-5}) and at most 40 epochs (not 300)"
)


def protocol_by_name(name: str, experiment: str, settings: Settings) -> Protocol:
    """The protocol ``name`` with the caps and grid of ``settings``' mode for ``experiment``, and
    the run's feature normalisation (``settings.normalize``)."""
    from dataclasses import replace

    return replace(_protocol(name, experiment, settings), normalize=settings.normalize)


def _protocol(name: str, experiment: str, settings: Settings) -> Protocol:
    """The protocol ``name`` with the caps and grid of ``settings``' mode for ``experiment``."""
    from ..errors import NdcglabError

    cs = experiment == "cost-sensitive"
    if name == "line-search":
        return Protocol(
            "line-search",
            "lbfgs",
            epochs=settings.pick(500, 60, 5),
            tol=1e-10,
            gtol=1e-6,
            dtype="float64",
            source="Ravikumar et al.'s protocol" if not cs else "each convex loss to its minimiser",
            reduced="" if settings.mode == "full" else "at most 60 L-BFGS iterations (not 500)",
        )
    if name == "tuned-gd":
        grid = settings.pick(
            (("lr", (0.001, 0.01, 0.1, 1.0)), ("tol", (1e-3, 1e-4, 1e-5))),
            (("lr", (0.001, 0.1)), ("tol", (1e-4, 1e-5))),
            (("lr", (0.1, 1.0)), ("tol", (1e-3,))),
        )
        return Protocol(
            "tuned-gd",
            "gd",
            epochs=settings.pick(300, 40, 4),
            tol=1e-5,
            dtype="float64",
            grid=grid,
            source="Lu et al.'s protocol (Fig. 1)" if cs else "η and ε chosen on validation",
            reduced="" if settings.mode == "full" else TUNED_GD_QUICK,
        )
    if name == "fixed-gd":
        return Protocol(
            "fixed-gd",
            "gd",
            epochs=settings.pick(300, 80, 4),
            tol=1e-6,
            lr=None,
            select_epoch=True,
            source="this experiment's original protocol",
        )
    if name == "adam":
        return Protocol(
            "adam",
            "adam",
            epochs=settings.pick(300, 80, 3),
            tol=1e-6,
            lr=0.01,
            source="this experiment's original protocol",
        )
    raise NdcglabError(f"unknown protocol {name!r}; known: {', '.join(PROTOCOLS)}")


def experiment_protocols(experiment: str, settings: Settings) -> list[Protocol]:
    """The protocols ``experiment`` runs, its primary (the paper's) first."""
    return [protocol_by_name(n, experiment, settings) for n in _EXPERIMENTS[experiment]]


def fit_protocol(
    protocol: Protocol,
    loss: str,
    train: RankingDataset,
    score_sets: Mapping[str, RankingDataset],
    *,
    validation: RankingDataset | None,
    seed: int,
    preset: str | None,
    normalize: str | None = None,
    rounds: int | None = None,
) -> Any:
    """Train ``loss`` on ``train`` under ``protocol`` and score every set in ``score_sets``.

    Returns a :class:`._fit.Fitted` with the protocol's name, the convergence (``converged``,
    ``grad_norm``) and, for a tuned protocol, the chosen values and every trial.
    ``fixed-gd`` and ``adam`` go through :func:`._fit.fit_scores` exactly as the experiments
    always did (same calls, same numbers). ``normalize`` defaults to the protocol's (the run's
    ``--normalize``).
    """
    from ._fit import fit_scores

    normalize = normalize or protocol.normalize
    if protocol.name == "fixed-gd":
        fit = fit_scores(
            loss,
            train,
            score_sets,
            validation=validation,
            epochs=protocol.epochs,
            seed=seed,
            preset=preset,
            validation_measure="ndcg@10",
            rounds=rounds,
            normalize=normalize,
        )
    elif protocol.name == "adam":
        fit = fit_scores(
            loss,
            train,
            score_sets,
            validation=None,
            epochs=protocol.epochs,
            lr=protocol.lr,
            tol=protocol.tol,
            seed=seed,
            preset=preset,
            optimizer="adam",
            normalize=normalize,
        )
    elif protocol.name == "line-search":
        fit = _fit_config(
            loss,
            train,
            score_sets,
            dict(
                optimizer="lbfgs",
                dtype=protocol.dtype,
                tol=protocol.tol,
                gtol=protocol.gtol,
                epochs=protocol.epochs,
                normalize=normalize,
                preset=preset,
                seed=seed,
            ),
        )
    elif protocol.name == "tuned-gd":
        if validation is None:
            from ..errors import NdcglabError

            raise NdcglabError(
                "the tuned-gd protocol chooses η and ε on a validation part and the data have "
                "none (a single LETOR file). Fix: give a LETOR folder with Fold1..5"
            )
        fit = _tune(loss, train, score_sets, protocol, validation, seed, preset, normalize)
    else:  # pragma: no cover - protocol_by_name refuses other names
        raise AssertionError(protocol.name)
    fit.protocol = protocol.name
    return fit


def fit_fold(
    protocol: Protocol,
    loss: str,
    fold: Any,
    *,
    seed: int,
    preset: str | None,
    rounds: int | None = None,
) -> Any:
    """:func:`fit_protocol` on one fold (``.train``, ``.vali``, ``.test``): trained on its
    training part, validated on its validation part, scoring its test part (``"test"``)."""
    return fit_protocol(
        protocol,
        loss,
        fold.train,
        {"test": fold.test},
        validation=fold.vali,
        seed=seed,
        preset=preset,
        rounds=rounds,
    )


def _fit_config(
    loss: str,
    train: RankingDataset,
    score_sets: Mapping[str, RankingDataset],
    options: Mapping[str, Any],
) -> Any:
    from ..training import config_from_options, fit
    from ._fit import fitted_from

    cfg = config_from_options({"loss": loss, "batch_size": None, **options})  # a linear model
    t0 = time.perf_counter()
    res = fit(train, cfg, validation=None, progress=False)
    return fitted_from(loss, res, score_sets, t0, lr=None)


def _tune(
    loss: str,
    train: RankingDataset,
    score_sets: Mapping[str, RankingDataset],
    protocol: Protocol,
    validation: RankingDataset,
    seed: int,
    preset: str | None,
    normalize: str,
) -> Any:
    from ..training import config_from_options, tune
    from ._fit import fitted_from

    cfg = config_from_options(  # a linear model, full-batch gradient descent
        dict(
            loss=loss,
            optimizer="gd",
            epochs=protocol.epochs,
            tol=protocol.tol,
            normalize=normalize,
            validation_measure="ndcg@10",
            preset=preset,
            seed=int(seed),
            batch_size=None,
        )
    )
    from ..training import TrainingDivergedError

    t0 = time.perf_counter()
    grid = protocol.grid_dict()
    failed: list[dict[str, Any]] = []
    for shift in range(_GRID_SHIFTS + 1):
        try:
            tr = tune(train, cfg, validation=validation, grid=grid, select_epoch=False)
            break
        except TrainingDivergedError:
            if shift == _GRID_SHIFTS or "lr" not in grid:
                raise
            failed += [
                {"params": {"lr": lr}, "score": None, "stop_reason": "diverged"}
                for lr in grid["lr"]
            ]
            grid = {**grid, "lr": [lr / 10.0 for lr in grid["lr"]]}
    fit = fitted_from(loss, tr.result, score_sets, t0, lr=tr.chosen.get("lr"))
    fit.chosen = dict(tr.chosen)
    fit.trials = failed + [dict(t) for t in tr.trials]
    fit.target = str(tr.target)
    return fit


#: tuned-gd: when every learning rate of the grid diverges, the grid's learning rates are divided
#: by 10 and the tuning repeated, at most this many times (the same loss-agnostic rule as
#: fixed-gd's; losses summed over a list, such as the squared loss, need far smaller steps)
_GRID_SHIFTS = 4


def convergence_text(fit: Any) -> str:
    """``"converged"`` / ``"stalled (|g| 3e-4)"`` / ... for a training table."""
    status = str(fit.stop_reason)
    g = getattr(fit, "grad_norm", None)
    if g is not None and np.isfinite(g):
        status += f" (|∇|∞ {g:.1e})"
    return status


def convergence_summary(protocol: Protocol, fits: Sequence[tuple[str, str, Any]]) -> str:
    """One sentence on how the runs of ``protocol`` ended: how many met the stopping rule, how
    the others stopped, and the range of the final gradient norms (gradient protocols)."""
    runs = [fit for _, name, fit in fits if fit.converged is not None]
    if not runs:
        return ""
    ok = [f for f in runs if f.converged]
    others: dict[str, int] = {}
    for f in runs:
        if not f.converged:
            others[str(f.stop_reason)] = others.get(str(f.stop_reason), 0) + 1
    grads = [
        float(f.grad_norm) for f in runs if f.grad_norm is not None and np.isfinite(f.grad_norm)
    ]
    text = (
        f"Convergence under {protocol.name}: {len(ok)} of {len(runs)} runs met the stopping rule"
        + (
            " (" + ", ".join(f"{n} stopped by {k}" for k, n in sorted(others.items())) + ")"
            if others
            else ""
        )
    )
    if grads:
        text += f"; final max-norm of the gradient {min(grads):.1e} … {max(grads):.1e}" + (
            f" (the rule asks for ≤ {protocol.gtol:g})" if protocol.gtol else ""
        )
    return text + ". Every run's status is in the training table below."


def chosen_text(fit: Any) -> str:
    """The chosen grid values (``η=0.1, ε=1e-05``), or ``""`` for an untuned run."""
    chosen = getattr(fit, "chosen", None) or {}
    names = {"lr": "η", "tol": "ε"}
    return ", ".join(f"{names.get(k, k)}={v:g}" for k, v in chosen.items())


def fit_record(fold: str, name: str, fit: Any) -> dict[str, Any]:
    """One training run for results.json: every number the training tables show, and the
    tuning trials."""
    return {
        "fold": fold,
        "method": name,
        "protocol": getattr(fit, "protocol", ""),
        "loss": fit.loss_name,
        "lr": fit.lr,
        "epochs_run": fit.epochs_run,
        "best_epoch": fit.best_epoch,
        "stop_reason": fit.stop_reason,
        "converged": getattr(fit, "converged", None),
        "grad_norm": getattr(fit, "grad_norm", None),
        "validation_score": fit.best_score,
        "chosen": dict(getattr(fit, "chosen", None) or {}),
        "target": getattr(fit, "target", ""),
        "trials": list(getattr(fit, "trials", None) or []),
        "seconds": round(fit.seconds, 3),
    }


def protocol_texts(protocols: Sequence[Protocol]) -> list[str]:
    """One paragraph per protocol, the primary marked."""
    return [
        ("primary — " if i == 0 else "")
        + p.describe()
        + (f" Reduced run: {p.reduced}." if p.reduced else "")
        for i, p in enumerate(protocols)
    ]


def add_verdict_table(report: Any, per_protocol: Mapping[str, Sequence[Any]]) -> None:
    """The table "each claim's verdict under each protocol, and combined" of a report whose last
    findings are the combined ones of ``per_protocol`` (protocol -> its
    :class:`~ndcglab.reproduce.verdicts.Finding` list, in the same order)."""
    from .report import Table

    names = list(per_protocol)
    n = len(per_protocol[names[0]])
    rows = [
        [f["claim"], *[per_protocol[p][i].verdict.verdict for p in names], f["verdict"]]
        for i, f in enumerate(report.findings[-n:])
    ]
    report.add_table(
        Table(
            "verdicts_by_protocol",
            "Each claim's verdict under each training protocol, and combined",
            ["claim", *names, "combined"],
            rows,
            notes=["combined by the robustness rule (listed with the rules under the verdicts)"],
            collapsed=True,
        )
    )
