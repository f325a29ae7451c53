"""``ndcglab cv DATA --loss A --loss B ... [--model M] [--preset P] [--folds 1,2]``.

Cross-validation (:func:`ndcglab.training.cross_validate`) over a LETOR collection's folds, or
five folds of ``synthetic:NAME[:SEED]`` (queries shuffled with ``--seed``, rotated as LETOR's):
for every fold and every loss, train on the fold's train file, select the epoch (trees: the round)
on its vali file
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
from typing import Any

from .._warn import terminal_safe
from ._common import add_cache_argument, add_format_argument, emit, format_table
from ._help import description
from ._training import (
    add_training_arguments,
    config_from_args,
    fold_line,
    load_folds,
    measures_from_args,
    tune_settings,
    tuning_text,
)

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    from ..training.config import TrainConfig

    p = subparsers.add_parser(
        "cv",
        help="cross-validate losses over a LETOR collection's folds (train/vali/test)",
        description=description(__doc__),
    )
    p.add_argument(
        "data",
        metavar="DATA",
        help="folder with Fold1..Fold5 (train/vali/test), or synthetic:NAME[:SEED]",
    )
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


def run(args: argparse.Namespace) -> int:
    """Cross-validate (see the module docstring); with ``--dask``, boosted trees are trained on
    one Dask client opened for the whole run."""
    from ..training import cross_validate
    from ..training.kinds import get_kind
    from ._dask import check_dask_arguments, client_from_args

    check_dask_arguments(args)
    measures = measures_from_args(args)

    def log(msg: str) -> None:
        if not args.quiet:
            print(f"ndcglab cv: {terminal_safe(msg)}", file=sys.stderr, flush=True)

    configs = {}
    for spec in args.loss or [None]:  # build every configuration first: fail before training
        cfg = config_from_args(args, spec)
        configs[spec or cfg.loss] = cfg
    losses = list(configs)
    tuning = tune_settings(args)
    folds = load_folds(args, log)
    preset = configs[losses[0]].preset
    unit = get_kind(args.model).unit

    with client_from_args(args, "ndcglab cv") as client:
        cv = cross_validate(
            folds,
            configs,
            measures=measures,
            preset=preset,
            client=client,
            tuning=tuning,
            progress=False if args.quiet else None,
            log=log,
            on_fold=lambda r: log(fold_line(r, unit).replace("\n", "\nndcglab cv: ")),
        )
    names = cv.measure_names(measures)
    payload = {
        loss: {
            **cv.to_dict(loss, names, unit),
            "preset": preset,
            "n_folds": len(cv.of(loss)),
            "training": {**configs[loss].to_dict(), "unit": unit},
            "tuned": tuning is not None,
        }
        for loss in losses
    }
    failed = {loss: cv.failures(loss) for loss in losses}

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
                for r in payload[loss]["folds"]:
                    out += f"\n  {loss} {r['fold']}: {tuning_text(r['tuning'])}"
        for loss in losses:
            for f in failed[loss]:
                out += f"\nfailed: {loss} on {f['fold']} at epoch {f['epoch']}: {f['error']}"
        return out

    emit(args, payload, text)
    return 1 if any(failed.values()) else 0
