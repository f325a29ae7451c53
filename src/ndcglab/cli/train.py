"""``ndcglab train DATA... --loss SPEC --model linear|mlp|adarank --out MODEL [options]``.

Trains one model and writes it to one file (weights, normalisation, loss, options, versions).
DATA is a LETOR fold folder (its ``train`` file is trained on and its ``vali`` file used for model
selection unless ``--validation`` is given), one or more LETOR/SVMlight files (concatenated), or
``synthetic:NAME[:SEED]``. Progress goes to stderr; the summary to stdout (``--format json``: an
object with ``"mean"`` = the best validation value keyed by the measure's name, the epochs, the
stopping reason and the model path). Ctrl-C stops with one line saying what was saved and the
command that continues (``--resume``), exit status 130.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from ..errors import NdcglabError
from ._common import (
    add_cache_argument,
    add_format_argument,
    emit,
    format_table,
    positive_int,
    read_options,
)
from ._help import description

__all__ = [
    "add_parser",
    "add_training_arguments",
    "config_from_args",
    "load_training_data",
    "run",
    "tune_settings",
    "tuning_text",
]


def _hidden(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(t) for t in text.replace(" ", "").split(",") if t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--hidden takes sizes like 64,32, got {text!r}") from None
    if not sizes or any(s < 1 for s in sizes):
        raise argparse.ArgumentTypeError(f"--hidden takes positive sizes like 64,32, got {text!r}")
    return sizes


def _batch(text: str) -> int | None:
    if text.lower() in ("all", "none", "full"):
        return None
    return int(text)


def add_training_arguments(p: argparse.ArgumentParser, *, single_loss: bool = True) -> None:
    """The training options shared by ``train`` and ``cv`` (defaults from TrainConfig)."""
    from ..data.normalize import NORMALIZATIONS
    from ..gbdt.train import DEFAULTS as TREES
    from ..training.config import DEFAULT_EPOCHS, DEFAULT_LR, OPTIMIZERS, TrainConfig
    from ..training.tuning import DEFAULT_GRIDS, format_grid

    d = TrainConfig()  # every default stated once, in TrainConfig
    if single_loss:
        p.add_argument(
            "--loss",
            default=None,
            metavar="SPEC",
            help="loss spec, e.g. listnet, cs_listmle@10, consistent_listnet(norm=z10), "
            f"ranksvm(l2=0.001), adarank(measure=map) (default: {d.loss}; adarank for --model "
            "adarank)",
        )
    p.add_argument(
        "--model",
        default=d.model,
        choices=("linear", "mlp", "adarank", "gbdt"),
        help=f"model family (default {d.model}; adarank = boosting over single features; "
        "gbdt = LightGBM trees with the loss as custom objective)",
    )
    p.add_argument(
        "--optimizer",
        default=d.optimizer,
        choices=OPTIMIZERS,
        help="gd: full-batch gradient descent until the loss changes less than --tol "
        "(Lu et al.'s protocol); adam: minibatch Adam; lbfgs: full-batch L-BFGS with a "
        "strong-Wolfe line search (no step size to choose) until the gradient's max-norm is "
        f"below --gtol or the loss's relative change below --tol (default {d.optimizer})",
    )
    p.add_argument(
        "--lr",
        type=float,
        default=None,
        help=f"learning rate (default {DEFAULT_LR['gd']:g} for gd, {DEFAULT_LR['adam']:g} for "
        f"adam, {TREES['learning_rate']:g} for gbdt; lbfgs: first trial step of each line "
        f"search, default {DEFAULT_LR['lbfgs']:g})",
    )
    p.add_argument(
        "--epochs",
        type=int,
        default=None,
        help=f"maximum epochs (default {DEFAULT_EPOCHS['adam']} for adam, "
        f"{DEFAULT_EPOCHS['gd']} for gd, {DEFAULT_EPOCHS['lbfgs']} iterations for lbfgs)",
    )
    p.add_argument(
        "--batch-size",
        type=_batch,
        default=d.batch_size,
        metavar="Q",
        help=f"queries per Adam step, or 'all' (default {d.batch_size})",
    )
    p.add_argument(
        "--tol",
        type=float,
        default=d.tol,
        help=f"gd stops when the loss changes less than this; lbfgs when its relative change "
        f"is at most this (default {d.tol:g})",
    )
    p.add_argument(
        "--gtol",
        type=float,
        default=d.gtol,
        help=f"lbfgs stops when the gradient's max-norm is at most this (default {d.gtol:g})",
    )
    p.add_argument(
        "--tune",
        action="store_true",
        help="choose the optimiser's hyper-parameters on the validation set, per fold, by the "
        "measure the loss targets (NDCG@k for a loss with @k, else --validation-measure); "
        "grid: --tune-grid (default per optimiser: "
        + "; ".join(f"{o}: {format_grid(g)}" for o, g in DEFAULT_GRIDS.items())
        + ")",
    )
    p.add_argument(
        "--tune-grid",
        default=None,
        metavar="GRID",
        help="the values tried by --tune, e.g. 'lr=0.01,0.1,1;tol=1e-3,1e-5' (options: lr, "
        "tol, gtol, l2, C, epochs, batch_size, dropout, patience, rounds)",
    )
    p.add_argument(
        "--tune-select",
        default="final",
        choices=("final", "best-epoch"),
        help="final: each grid point trains to its stopping rule and its final weights are "
        "scored on validation (the papers' protocol); best-epoch: each keeps its best "
        "validation epoch (default final)",
    )
    p.add_argument(
        "--patience",
        type=int,
        default=d.patience,
        help="stop after this many epochs (gbdt: rounds) without validation improvement "
        f"(default: off; {TREES['early_stopping_rounds']} for gbdt)",
    )
    p.add_argument(
        "--normalize",
        default=d.normalize,
        choices=NORMALIZATIONS,
        help=f"feature normalisation; NaN filled with 0 afterwards (default {d.normalize})",
    )
    p.add_argument(
        "--validation-measure",
        default=d.validation_measure,
        metavar="MEASURE",
        help=f"model-selection measure on the validation set (default {d.validation_measure})",
    )
    p.add_argument(
        "--preset",
        default=d.preset,
        help=f"measure conventions for selection and reports (default {d.preset})",
    )
    p.add_argument(
        "--l2",
        type=float,
        default=None,
        help="L2 penalty l2*||w||^2 on the weights (default 0; ranksvm: its spec's l2)",
    )
    p.add_argument(
        "--C", type=float, default=None, dest="C", help="RankSVM's C: sets l2 = 1/(2*C*queries)"
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="boosting rounds: AdaRank (default: the adarank spec's rounds) or gbdt "
        f"(default {TREES['num_boost_round']})",
    )
    p.add_argument(
        "--hidden",
        type=_hidden,
        default=d.hidden,
        metavar="SIZES",
        help="MLP hidden sizes, e.g. 64,32 (default %(default)s)",
    )
    p.add_argument(
        "--activation", default=d.activation, help=f"MLP activation (default {d.activation})"
    )
    p.add_argument(
        "--dropout", type=float, default=d.dropout, help=f"MLP dropout (default {d.dropout:g})"
    )
    p.add_argument("--seed", type=int, default=d.seed, help=f"random seed (default {d.seed})")
    p.add_argument("--device", default=d.device, help=f"cpu, cuda or auto (default {d.device})")
    p.add_argument(
        "--threads",
        type=positive_int,
        default=None,
        help="torch CPU threads while training (default: 1 for data with fewer than 10 million "
        "feature values, documents x features; for larger data the idle cores: torch's thread "
        "count minus the one-minute load average, at least 1)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    from ._dask import add_dask_arguments
    from ._gbdt import add_gbdt_arguments

    add_gbdt_arguments(p)
    add_dask_arguments(p)


def config_from_args(args: argparse.Namespace, loss: str | None) -> Any:
    """A :class:`~ndcglab.training.TrainConfig` from parsed arguments and one loss spec.

    ``loss=None`` means the default: listnet, or adarank for ``--model adarank``.
    """
    from ..training.config import TrainConfig

    return TrainConfig(
        loss=loss,
        model=args.model,
        optimizer=args.optimizer,
        lr=args.lr,
        epochs=args.epochs,
        batch_size=args.batch_size,
        tol=args.tol,
        gtol=args.gtol,
        patience=args.patience,
        normalize=args.normalize,
        validation_measure=args.validation_measure,
        preset=None if str(args.preset).lower() == "none" else args.preset,
        l2=args.l2,
        C=args.C,
        rounds=args.rounds,
        hidden=tuple(args.hidden),
        activation=args.activation,
        dropout=args.dropout,
        seed=args.seed,
        device=args.device,
        num_threads=args.threads,
    )


def tune_settings(args: argparse.Namespace) -> dict[str, Any] | None:
    """``tune`` keyword arguments (``grid``, ``select_epoch``) from ``--tune``/``--tune-grid``/
    ``--tune-select``, or None without ``--tune``; a bad grid or a model that cannot be tuned
    fails here, before any data is read."""
    from ..training.tuning import parse_grid

    grid_text = getattr(args, "tune_grid", None)
    if not getattr(args, "tune", False):
        if grid_text:
            raise NdcglabError(
                "--tune-grid is given without --tune. Fix: add --tune (or drop --tune-grid)"
            )
        return None
    if args.model in ("gbdt", "adarank"):
        raise NdcglabError(
            f"--tune chooses gradient-training hyper-parameters; --model {args.model} has none "
            "(its rounds are chosen on validation already). Fix: drop --tune, or use --model "
            "linear or mlp"
        )
    return {
        "grid": parse_grid(grid_text) if grid_text else None,
        "select_epoch": args.tune_select == "best-epoch",
    }


def tuning_text(tuning: dict[str, Any]) -> str:
    """``lr=0.1, tol=0.001 (by NDCG@1 on validation)``: the chosen values of a tuning record."""
    chosen = ", ".join(f"{k}={v:g}" for k, v in tuning["chosen"].items())
    return f"{chosen} (by {tuning['target']} on validation)"


def _concat(parts: list[Any]) -> Any:
    import numpy as np

    from ..data.dataset import RankingDataset, boundaries_from_group

    if len(parts) == 1:
        return parts[0]
    f = {p.n_features for p in parts}
    if len(f) != 1:
        raise NdcglabError(
            f"the data files have different feature counts {sorted(f)}. "
            "Fix: give files of one collection"
        )
    doc_ids = None
    if all(p.doc_ids is not None for p in parts):
        doc_ids = np.concatenate([p.doc_ids for p in parts])
    return RankingDataset(
        features=np.concatenate([p.features for p in parts]),
        labels=np.concatenate([p.labels for p in parts]),
        boundaries=boundaries_from_group(np.concatenate([p.query_lengths for p in parts])),
        query_ids=np.concatenate([p.query_ids for p in parts]),
        doc_ids=doc_ids,
        feature_names=parts[0].feature_names,
        source="+".join(str(p.source) for p in parts),
    )


def load_training_data(
    paths: list[str], validation: str | None, args: argparse.Namespace | None = None
) -> tuple[Any, Any]:
    """(train, validation) datasets from ``train``'s DATA arguments (see the module docstring);
    ``args`` carries the read options (``--cache``)."""
    from ..data import load_dataset

    def opts(spec: str) -> dict[str, Any]:
        return {} if args is None else read_options(args, spec)

    valid = None
    if len(paths) == 1 and Path(paths[0]).is_dir():
        from ..data import load_letor_folder

        folds = load_letor_folder(paths[0], **opts(paths[0]))
        if len(folds) != 1:
            names = ", ".join(f.name for f in folds)
            raise NdcglabError(
                f"{paths[0]} holds {len(folds)} folds ({names}). Fix: give one fold folder "
                f"(e.g. {Path(paths[0]) / folds[0].name}) or run `ndcglab cv {paths[0]}`"
            )
        fold = folds[0]
        train = fold.train
        if validation is None and getattr(fold, "vali_path", None) is not None:
            valid = fold.vali
    else:
        train = _concat([load_dataset(p, **opts(p)) for p in paths])
    if validation is not None:
        valid = load_dataset(validation, **opts(validation))
    if valid is not None and valid.n_features != train.n_features:  # sparse files: absent = 0
        width = max(train.n_features, valid.n_features)
        train, valid = train.with_n_features(width), valid.with_n_features(width)
    return train, valid


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "train",
        help="train a ranking model (linear, MLP, AdaRank) with a listwise loss",
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
    done = {"epoch": 0}
    try:
        return _run(args, done)
    except KeyboardInterrupt:
        epoch = done["epoch"]
        if args.model == "gbdt":
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
        print(f"ndcglab train: interrupted{after}; {what}", file=sys.stderr, flush=True)
        return 130


def _run(args: argparse.Namespace, done: dict[str, int]) -> int:
    from ..training import train

    if args.resume and not args.checkpoint:
        raise NdcglabError("--resume needs --checkpoint DIR (where the interrupted run wrote it)")
    if args.model == "gbdt" and (args.checkpoint or args.resume):
        raise NdcglabError(
            "--checkpoint/--resume apply to gradient-descent models. Fix: drop them for "
            "--model gbdt (boosting is fast to rerun; use --patience for early stopping)"
        )
    if args.checkpoint:  # one run per folder: a second one is refused before any work
        from ..training.checkpoint import lock_checkpoint_dir

        lock_checkpoint_dir(args.checkpoint)
    if getattr(args, "dask", None) and args.model != "gbdt":
        raise NdcglabError(
            f"--dask trains boosted trees only. Fix: add --model gbdt, or drop --dask for "
            f"--model {args.model}"
        )
    if getattr(args, "dask", None):
        from ._dask import check_training_arguments

        check_training_arguments(args)
    cfg = config_from_args(args, args.loss)
    tuning = tune_settings(args)
    train_ds, valid_ds = load_training_data(args.data, args.validation, args)
    if tuning is not None and valid_ds is None:
        raise NdcglabError(
            "--tune chooses hyper-parameters on a validation set and none was found. Fix: give "
            "a fold folder with a vali file, or --validation FILE"
        )
    if not args.quiet:
        print(
            f"ndcglab train: {train_ds.n_queries} training queries, {train_ds.n_docs} documents, "
            f"{train_ds.n_features} features"
            + (f"; validation {valid_ds.n_queries} queries" if valid_ds is not None else "")
            + f"; loss {cfg.loss}, model {cfg.model}"
            + ("" if cfg.model == "gbdt" else f", optimizer {cfg.optimizer}"),
            file=sys.stderr,
        )
    if args.model == "gbdt":
        return _run_gbdt(args, train_ds, valid_ds)
    if tuning is not None:
        if args.checkpoint or args.resume:
            raise NdcglabError(
                "--checkpoint/--resume apply to one training run; --tune trains one per grid "
                "point. Fix: drop --checkpoint/--resume, or tune first and train the chosen "
                "values with a checkpoint"
            )
        from ..training import tune

        log = None if args.quiet else (lambda m: print(f"ndcglab train: {m}", file=sys.stderr))
        tuned = tune(
            train_ds,
            cfg,
            validation=valid_ds,
            progress=None if not args.quiet else False,
            log=log,
            **tuning,
        )
        result = tuned.result
        if not args.quiet:
            print(f"ndcglab train: chosen {tuning_text(tuned.to_dict())}", file=sys.stderr)
    else:
        result = train(
            train_ds,
            cfg,
            validation=valid_ds,
            checkpoint_dir=args.checkpoint,
            resume=args.resume,
            progress=None if not args.quiet else False,
            callback=lambda info: done.update(epoch=int(info["epoch"])),
        )
    path = result.trained.save(args.out)
    meta = result.trained.metadata
    payload = {
        "model": str(path),
        "loss": result.trained.metadata.get("loss"),
        "model_kind": result.model.kind,
        "mean": {} if result.measure is None else {result.measure: result.best_score},
        "best_epoch": result.best_epoch,
        "epochs_run": result.epochs_run,
        "stop_reason": result.stop_reason,
        "final_loss": result.history[-1]["loss"] if result.history else None,
        "n_features": result.model.n_features,
        "normalization": cfg.normalize,
        "training": meta.get("training", cfg.to_dict()),
        "converged": result.converged,
        "grad_norm": result.grad_norm,
        "tuning": meta.get("tuning"),
    }

    def text() -> str:
        rows = [
            ["model file", str(path)],
            ["loss", str(payload["loss"])],
            ["model", result.model.kind],
            ["epochs run", str(result.epochs_run)],
            ["stopped", result.stop_reason],
            ["best epoch", str(result.best_epoch)],
        ]
        if result.converged is not None:
            rows.append(["converged", "yes" if result.converged else "no"])
            rows.append(["gradient max-norm", f"{result.grad_norm:.3g}"])
        if result.measure is not None:
            rows.append([f"validation {result.measure}", f"{result.best_score:.4f}"])
        if payload["tuning"] is not None:
            rows.append(["tuned", tuning_text(payload["tuning"])])
        return format_table(["", "value"], rows)

    emit(args, payload, text)
    return 0


def _run_gbdt(args: argparse.Namespace, train_ds: Any, valid_ds: Any) -> int:
    from ._gbdt import fit_gbdt_from_args, gbdt_payload

    if getattr(args, "dask", None):
        from ._dask import dask_client, fit_gbdt_dask_from_args

        with dask_client(
            args.dask,
            memory_limit=args.dask_memory_limit,
            timeout=args.dask_timeout,
            quiet=args.quiet,
            command="ndcglab train",
        ) as client:
            model = fit_gbdt_dask_from_args(args, client, train_ds, valid_ds)
        if not args.quiet:
            tr = model.metadata.get("training") or {}
            if tr.get("best_valid") is not None:
                print(
                    f"ndcglab train: chosen round {model.best_iteration} of {tr['rounds_run']} "
                    f"(best validation {tr['measure']} = {tr['best_valid']:.4f})",
                    file=sys.stderr,
                )
            else:
                print(
                    f"ndcglab train: {tr.get('rounds_run')} rounds, all kept (no validation set "
                    "to choose the round on)",
                    file=sys.stderr,
                )
    else:
        model = fit_gbdt_from_args(args, train_ds, valid_ds)
    path = model.save(args.out)
    payload = gbdt_payload(model, path)

    def text() -> str:
        rows = [[k, str(v)] for k, v in payload.items() if k not in ("params", "mean")]
        rows += [[f"validation {k}", f"{v:.4f}"] for k, v in payload["mean"].items()]
        return format_table(["", "value"], rows)

    emit(args, payload, text)
    return 0
