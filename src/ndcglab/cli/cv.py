"""``ndcglab cv LETOR_DIR --loss A --loss B ... [--model M] [--preset P] [--folds 1,2]``.

Cross-validation over a LETOR collection's folds: for every fold and every loss, train on the
fold's train file, select the epoch (boosted trees: the round) on its vali file
(``--validation-measure`` under ``--preset``), score its test file and measure it with the
preset's usual measure set (or each ``--measure``). Prints each measure's mean and standard
deviation over folds per loss (std: sample std, ddof = 1; 0 for a single fold). A loss whose
training diverges (the objective becomes inf or NaN) is reported as failed, with the fold and
epoch, and the other losses go on; the exit status is then 1. ``--format json``: one object per
loss (keyed by the loss spec as given) with ``"mean"`` and ``"std"`` keyed by measure name,
``"folds"`` (per fold: name, test measures, best epoch or round, validation value, seconds),
``"failed"`` (per diverged fold: fold, epoch, message; ``"mean"``/``"std"`` are then null) and the
training options. ``--tune`` chooses the optimiser's hyper-parameters on each fold's vali file
(:func:`ndcglab.training.tune`): the values chosen per fold are printed and stored in each fold's
``"tuning"`` entry (grid, target measure, every trial's validation value, the chosen values).
Progress on stderr (a bar per training run when stderr is a terminal).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import NdcglabError, SpecError
from ._common import add_cache_argument, add_format_argument, emit, format_table, read_options
from ._help import description
from .train import add_training_arguments, config_from_args, tune_settings, tuning_text

__all__ = ["add_parser", "run", "select_folds", "split_measure_list"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    from ..training.config import TrainConfig

    p = subparsers.add_parser(
        "cv",
        help="cross-validate losses over a LETOR collection's folds (train/vali/test)",
        description=description(__doc__),
    )
    p.add_argument("data", metavar="LETOR_DIR", help="folder with Fold1..Fold5 (train/vali/test)")
    p.add_argument(
        "--loss",
        action="append",
        default=None,
        metavar="SPEC",
        help=f"loss to evaluate; repeat for several (default {TrainConfig().loss})",
    )
    p.add_argument(
        "--folds",
        default=None,
        metavar="LIST",
        help="folds to run, by number or name, e.g. 1,2 (default all)",
    )
    p.add_argument(
        "--measure",
        action="append",
        default=None,
        metavar="SPEC",
        help="test measure, e.g. ndcg@10 or 'ndcg(gain=linear,discount=power:0.5)@10'; "
        "repeatable (default: the preset's usual measure set)",
    )
    p.add_argument(
        "--measures",
        default=None,
        metavar="LIST",
        help="deprecated: comma-separated test measures; use --measure once per measure",
    )
    add_training_arguments(p, single_loss=False)
    add_format_argument(p)
    add_cache_argument(p)
    p.set_defaults(func=run)
    return p


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def select_folds(folds: list[Any], spec: str | None) -> list[Any]:
    """Pick folds by 1-based number or name from ``--folds``."""
    if not spec:
        return folds
    out = []
    for tok in (t.strip() for t in spec.split(",") if t.strip()):
        match = None
        if tok.isdigit() and 1 <= int(tok) <= len(folds):
            match = folds[int(tok) - 1]
        else:
            match = next(
                (f for f in folds if f.name.lower() in (tok.lower(), f"fold{tok}".lower())), None
            )
        if match is None:
            raise NdcglabError(
                f"no fold {tok!r}; the folder has {', '.join(f.name for f in folds)}. "
                "Fix: --folds 1,2,3 or --folds Fold1"
            )
        out.append(match)
    return out


def split_measure_list(text: str) -> list[str]:
    """Split a comma-separated list of measure specs at the commas outside brackets (the
    deprecated ``--measures`` option): ``"ndcg(gain=linear,discount=power:0.5)@10,map"`` gives
    two specs."""
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur.append(ch)
    out.append("".join(cur).strip())
    if any(not m for m in out) or depth != 0:
        raise SpecError(
            f"cannot read --measures {text!r}. Fix: give one --measure per measure, e.g. "
            "--measure 'ndcg(gain=linear,discount=power:0.5)@10' --measure map"
        )
    return out


@dataclass
class _GBDTResult:
    """The fields of a training result ``cv`` reports, for boosted trees."""

    trained: Any
    best_epoch: int | None
    epochs_run: int | None
    stop_reason: str
    best_score: float | None
    measure: str | None


def _fit(
    args: argparse.Namespace,
    loss: str,
    cfg: Any,
    train_ds: Any,
    vali_ds: Any,
    tuning: dict[str, Any] | None = None,
    log: Any = None,
) -> Any:
    """Train one fold: gradient descent via the trainer (with ``tuning``: :func:`tune` on the
    fold's validation set), or boosted trees for ``--model gbdt``.

    A ``lightgbm:lambdarank`` / ``lightgbm:rank_xendcg`` loss with ``--model gbdt`` trains
    LightGBM's own objective on the same trees, for side-by-side tables.
    """
    if args.model != "gbdt":
        from ..training import train, tune

        if tuning is not None:
            return tune(
                train_ds,
                cfg,
                validation=vali_ds,
                progress=False if args.quiet else None,
                log=log,
                **tuning,
            ).result
        return train(
            train_ds,
            cfg,
            validation=vali_ds,
            progress=False if args.quiet else None,
        )
    from ._gbdt import fit_gbdt_from_args

    client = getattr(args, "dask_client", None)
    if client is not None:
        from ._dask import fit_gbdt_dask_from_args

        model = fit_gbdt_dask_from_args(args, client, train_ds, vali_ds, loss=loss)
    else:
        model = fit_gbdt_from_args(args, train_ds, vali_ds, loss=loss)
    tr = model.metadata.get("training") or {}
    rounds = tr.get("rounds_run")
    return _GBDTResult(
        trained=model,
        best_epoch=model.best_iteration,
        epochs_run=rounds,
        stop_reason="early_stopping"
        if rounds is not None and rounds < int(tr.get("num_boost_round") or 0)
        else "rounds",
        best_score=tr.get("best_valid"),
        measure=tr.get("measure"),
    )


def run(args: argparse.Namespace) -> int:
    """Cross-validate (see the module docstring); with ``--dask``, boosted trees are trained on
    one Dask client opened for the whole run (``args.dask_client``)."""
    if not getattr(args, "dask", None):
        return _run(args)
    if args.model != "gbdt":
        raise NdcglabError(
            f"--dask trains boosted trees only. Fix: add --model gbdt, or drop --dask for "
            f"--model {args.model}"
        )
    from ._dask import check_training_arguments, dask_client

    check_training_arguments(args)
    with dask_client(
        args.dask,
        memory_limit=args.dask_memory_limit,
        timeout=args.dask_timeout,
        quiet=args.quiet,
        command="ndcglab cv",
    ) as client:
        args.dask_client = client
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from ..data import load_letor_folder
    from ..measures import evaluate, parse_measures
    from ..training import TrainingDivergedError

    measures: list[str] | None = list(args.measure) if args.measure else None
    if args.measures:
        print(
            "ndcglab cv: --measures is deprecated (it cannot hold a comma inside brackets); "
            "use --measure once per measure",
            file=sys.stderr,
        )
        measures = (measures or []) + split_measure_list(args.measures)
    if measures:
        parse_measures(measures)  # fail on a bad spec before training
    configs = {}
    for spec in args.loss or [None]:  # build every configuration first: fail before training
        cfg = config_from_args(args, spec)
        configs[spec or cfg.loss] = cfg
    losses = list(configs)
    tuning = tune_settings(args)
    folds = select_folds(load_letor_folder(args.data, **read_options(args, args.data)), args.folds)
    if not folds:
        raise NdcglabError(f"{args.data} holds no folds. Fix: give a folder with Fold1..Fold5")
    preset = configs[losses[0]].preset
    unit = "round" if args.model == "gbdt" else "epoch"

    def log(msg: str) -> None:
        if not args.quiet:
            print(f"ndcglab cv: {msg}", file=sys.stderr, flush=True)

    per_loss: dict[str, list[dict[str, Any]]] = {loss: [] for loss in losses}
    failed: dict[str, list[dict[str, Any]]] = {loss: [] for loss in losses}
    names: list[str] = []
    for fold in folds:
        t0 = time.perf_counter()
        train_ds, vali_ds, test_ds = fold.train, fold.vali, fold.test
        log(
            f"{fold.name}: {train_ds.n_queries}/{vali_ds.n_queries}/{test_ds.n_queries} queries "
            f"(train/vali/test), read in {time.perf_counter() - t0:.1f} s"
        )
        for loss in losses:
            t1 = time.perf_counter()
            try:
                result = _fit(
                    args,
                    loss,
                    configs[loss],
                    train_ds,
                    vali_ds,
                    tuning,
                    log=lambda m, f=fold.name, lo=loss: log(f"{f} {lo}: {m}"),
                )
            except TrainingDivergedError as exc:
                failed[loss].append({"fold": fold.name, "epoch": exc.epoch, "error": str(exc)})
                log(f"{fold.name} {loss}: FAILED at epoch {exc.epoch}: {exc}")
                continue
            scores = result.trained.predict(test_ds)
            ev = evaluate(test_ds, scores, measures, preset=preset)
            if not names:
                names = list(ev.mean)
            seconds = time.perf_counter() - t1
            per_loss[loss].append(
                {
                    "fold": fold.name,
                    "mean": dict(ev.mean),
                    f"best_{unit}": result.best_epoch,
                    f"{unit}s_run": result.epochs_run,
                    "stop_reason": result.stop_reason,
                    "valid": result.best_score,
                    "valid_measure": result.measure,
                    "seconds": seconds,
                    "converged": getattr(result, "converged", None),
                    "tuning": None,
                }
            )
            meta = getattr(result.trained, "metadata", None) or {}
            if meta.get("tuning") is not None:
                per_loss[loss][-1]["tuning"] = meta["tuning"]
                log(f"{fold.name} {loss}: chosen {tuning_text(meta['tuning'])}")
            key = next((n for n in names if n.lower().startswith("ndcg@10")), names[0])
            log(
                f"{fold.name} {loss}: test {key} {ev.mean[key]:.4f}, "
                f"valid {_fmt(result.best_score)}, "
                f"best {unit} {result.best_epoch}/{result.epochs_run} ({result.stop_reason}), "
                f"{seconds:.1f} s"
            )

    if not names:  # every run failed: the measures' names come from the specs
        names = [str(m) for m in parse_measures(measures)] if measures else []
    payload: dict[str, Any] = {}
    for loss in losses:
        rows = per_loss[loss]
        values = {n: np.array([r["mean"][n] for r in rows], dtype=np.float64) for n in names}
        bad = bool(failed[loss])
        payload[loss] = {
            "mean": None if bad else {n: float(v.mean()) for n, v in values.items()},
            "std": None
            if bad
            else {n: float(v.std(ddof=1)) if len(v) > 1 else 0.0 for n, v in values.items()},
            "folds": rows,
            "failed": failed[loss],
            "std_ddof": 1,
            "preset": preset,
            "n_folds": len(rows),
            "training": {**configs[loss].to_dict(), "unit": unit},
            "tuned": tuning is not None,
        }

    def cell(loss: str, n: str) -> str:
        if failed[loss]:
            f = failed[loss][0]
            return f"failed ({f['fold']}, epoch {f['epoch']})"
        return f"{payload[loss]['mean'][n]:.4f}±{payload[loss]['std'][n]:.4f}"

    def text() -> str:
        header = ["measure", *losses]
        body = [[n, *(cell(loss, n) for loss in losses)] for n in names]
        out = (
            f"{len(folds)} folds of {args.data}; test measures under preset {preset}; "
            "mean±std over folds\n" + format_table(header, body)
        )
        if tuning is not None:
            out += "\nchosen by --tune (per fold):"
            for loss in losses:
                for r in per_loss[loss]:
                    out += f"\n  {loss} {r['fold']}: {tuning_text(r['tuning'])}"
        for loss in losses:
            for f in failed[loss]:
                out += f"\nfailed: {loss} on {f['fold']} at epoch {f['epoch']}: {f['error']}"
        return out

    emit(args, payload, text)
    return 1 if any(failed.values()) else 0
