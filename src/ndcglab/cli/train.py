"""``ndcglab train DATA... --loss SPEC --model linear|mlp|adarank|gbdt --out MODEL [options]``.

Trains one model and writes it to one file (weights, normalisation, loss, options, versions).
DATA is a LETOR fold folder (its ``train`` file is trained on and its ``vali`` file used for model
selection unless ``--validation`` is given), one or more LETOR/SVMlight files (concatenated), or
``synthetic:NAME[:SEED]``. Progress goes to stderr; the summary to stdout (``--format json``: an
object with ``"mean"`` = the best validation value keyed by the measure's name, the epochs (trees:
rounds), the stopping reason and the model path). Ctrl-C stops with one line saying what was saved
and the command that continues (``--resume``), exit status 130. The training itself is
:func:`ndcglab.training.fit` (``--tune``: :func:`ndcglab.training.tune`); ``--dask`` trains boosted
trees on a Dask cluster.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from .._warn import terminal_safe
from ..errors import NdcglabError
from ._clicks_train import add_click_arguments
from ._common import add_cache_argument, add_format_argument, emit, format_table
from ._help import description
from ._training import (
    add_training_arguments,
    config_from_args,
    load_training_data,
    round_text,
    train_payload,
    tune_settings,
    tuning_text,
)

__all__ = [
    "add_parser",
    "add_training_arguments",
    "config_from_args",
    "load_training_data",
    "run",
    "tune_settings",
    "tuning_text",
]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "train",
        help="train a ranking model (linear, MLP, AdaRank, boosted trees) with a listwise loss",
        description=description(__doc__),
    )
    p.add_argument(
        "data",
        nargs="+",
        metavar="DATA",
        help="a LETOR fold folder, LETOR/SVMlight file(s), or synthetic:NAME[:SEED]",
    )
    p.add_argument(
        "--validation",
        default=None,
        metavar="FILE",
        help="validation file for model selection (default: the fold's vali file)",
    )
    p.add_argument("--out", required=True, metavar="MODEL", help="model file to write")
    p.add_argument(
        "--checkpoint",
        default=None,
        metavar="DIR",
        help="write an atomic checkpoint to DIR after every epoch",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue from the checkpoint in --checkpoint DIR (same options and data)",
    )
    add_training_arguments(p)
    add_click_arguments(p)
    add_format_argument(p)
    add_cache_argument(p)
    p.set_defaults(func=run)
    return p


def _command_line(extra: str) -> str:
    """The command that was run (when this process is ``ndcglab train …``) with ``extra``
    appended, for the line printed on Ctrl-C."""
    argv = sys.argv[1:]
    if "train" not in argv[:1]:
        return f"the same ndcglab train command with {extra}"
    if extra.split()[0] not in argv:
        argv = [*argv, *shlex.split(extra)]
    return "ndcglab " + shlex.join(argv)


def run(args: argparse.Namespace) -> int:
    """Train (see the module docstring); Ctrl-C prints one line and returns 130."""
    from ..training.kinds import get_kind

    done = {"epoch": 0}
    try:
        return _run(args, done)
    except KeyboardInterrupt:
        epoch = done["epoch"]
        if not get_kind(args.model).checkpoints:
            what = "nothing saved (boosted trees have no checkpoints); rerun the same command"
        elif args.checkpoint and epoch:
            what = (
                f"the checkpoint in {args.checkpoint} holds epoch {epoch} (no model file "
                f"written); continue with: {_command_line('--resume')}"
            )
        elif args.checkpoint:
            what = (
                f"no epoch finished in this run; {args.checkpoint} holds what an earlier run "
                f"saved, if any; continue with: {_command_line('--resume')}"
            )
        else:
            what = (
                "nothing saved (no --checkpoint); to be able to continue after an interruption, "
                f"run: {_command_line('--checkpoint ndcglab-checkpoint')}"
            )
        after = f" after epoch {epoch}" if epoch else ""
        print(
            f"ndcglab train: interrupted{after}; {terminal_safe(what)}", file=sys.stderr, flush=True
        )
        return 130


def _run(args: argparse.Namespace, done: dict[str, int]) -> int:
    from ..training import fit, tune
    from ..training.kinds import get_kind

    kind = get_kind(args.model)
    if args.resume and not args.checkpoint:
        raise NdcglabError("--resume needs --checkpoint DIR (where the interrupted run wrote it)")
    if not kind.checkpoints and (args.checkpoint or args.resume):
        raise NdcglabError(
            f"--checkpoint/--resume apply to models trained epoch by epoch. Fix: drop them for "
            f"--model {kind.name} (it is fast to rerun; use --patience for early stopping)"
        )
    if args.checkpoint:  # one run per folder: a second one is refused before any work
        from ..training.checkpoint import lock_checkpoint_dir

        lock_checkpoint_dir(args.checkpoint)
    from ._dask import check_dask_arguments, trains_on_dask

    check_dask_arguments(args)
    if args.clicks is not None:
        from ._clicks_train import check_click_options

        check_click_options(args)
    cfg = config_from_args(args, args.loss)
    tuning = tune_settings(args)
    train_ds, valid_ds = load_training_data(args.data, args.validation, args)
    if tuning is not None and valid_ds is None:
        raise NdcglabError(
            "--tune chooses hyper-parameters on a validation set and none was found. Fix: give "
            "a fold folder with a vali file, or --validation FILE"
        )
    say = (
        (lambda m: None)
        if args.quiet
        else (lambda m: print(f"ndcglab train: {terminal_safe(m)}", file=sys.stderr))
    )
    objective = f"loss {cfg.loss}"
    if args.clicks is not None:
        from ._clicks_train import objective_text

        objective = objective_text(args, cfg)
    say(
        f"{train_ds.n_queries} training queries, {train_ds.n_docs} documents, "
        f"{train_ds.n_features} features"
        + (f"; validation {valid_ds.n_queries} queries" if valid_ds is not None else "")
        + f"; {objective}, model {cfg.model}"
        + (f", optimizer {cfg.optimizer}" if kind.route == "gradient" else "")
    )
    clicks = None
    trainer = fit
    if args.clicks is not None:  # learning from clicks: the training labels become click labels
        from ._clicks_train import click_training_data

        train_ds, clicks = click_training_data(args, train_ds, cfg, say)
        trainer = clicks.pop("trainer", fit)  # Unbiased LambdaMART trains on the sessions
    if tuning is not None:
        if args.checkpoint or args.resume:
            raise NdcglabError(
                "--checkpoint/--resume apply to one training run; --tune trains one per grid "
                "point. Fix: drop --checkpoint/--resume, or tune first and train the chosen "
                "values with a checkpoint"
            )
        tuned = tune(
            train_ds,
            cfg,
            validation=valid_ds,
            progress=None if not args.quiet else False,
            log=None if args.quiet else say,
            **tuning,
        )
        result = tuned.result
        say(f"chosen {tuning_text(tuned.to_dict())}")
    else:
        with trains_on_dask(args, kind) as client:
            result = trainer(
                train_ds,
                cfg,
                validation=valid_ds,
                client=client,
                checkpoint_dir=args.checkpoint,
                resume=args.resume,
                progress=None if not args.quiet else False,
                callback=lambda info: done.update(epoch=int(info["epoch"])),
            )
        if client is not None:
            say(round_text(result))
    path = result.trained.save(args.out)
    payload = train_payload(result, path, cfg, kind.unit)
    if clicks is not None:
        payload["clicks"] = clicks

    def text() -> str:
        rows = [[_SHOWN[k], _cell(v)] for k, v in payload.items() if k in _SHOWN and v is not None]
        if result.measure is not None and result.best_score is not None:
            rows.append([f"validation {result.measure}", f"{result.best_score:.4f}"])
        if payload.get("tuning") is not None:
            rows.append(["tuned", tuning_text(payload["tuning"])])
        return format_table(["", "value"], rows)

    emit(args, payload, text)
    return 0


#: the summary's rows in the text output and their labels (the JSON holds every key)
_SHOWN = {
    "model": "model file",
    "loss": "loss",
    "model_kind": "model",
    "epochs_run": "epochs run",
    "rounds_run": "rounds run",
    "stop_reason": "stopped",
    "best_epoch": "best epoch",
    "best_iteration": "best round",
    "objective": "hessian",
    "converged": "converged",
    "grad_norm": "gradient max-norm",
}


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, dict):  # the trees' objective: how its second derivatives were had
        used = value.get("hessian_used")
        return str(value.get("hessian")) + (f" ({used})" if used else "")
    return str(value)
