"""The training options shared by ``ndcglab train`` and ``ndcglab cv``: their arguments
(defaults from :class:`~ndcglab.training.TrainConfig`, model choices from
:data:`~ndcglab.training.kinds.KINDS`), the configuration built from them, tuning settings and
reading the training data.

The options keep one meaning for every model kind: ``--loss``, ``--lr`` (learning rate; trees:
0.05 by default), ``--rounds`` (AdaRank's or the trees' rounds), ``--patience``,
``--validation-measure``, ``--preset``, ``--seed``, ``--threads``; the trees' own options
(``--engine``, ``--num-leaves``, ``--min-data-in-leaf``, ``--hessian``, ``--gbdt-param KEY=VALUE``)
fill :class:`~ndcglab.training.config.TreeOptions`. Options that only concern gradient descent
(``--optimizer``, ``--epochs``, ``--batch-size``, ``--normalize`` …) are ignored for trees.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import NdcglabError, SpecError
from ._common import positive_int, read_options

__all__ = [
    "add_training_arguments",
    "config_from_args",
    "fold_line",
    "load_folds",
    "load_training_data",
    "measures_from_args",
    "round_text",
    "select_folds",
    "split_measure_list",
    "train_payload",
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
    from ..training.config import (
        DEFAULT_EPOCHS,
        DEFAULT_LR,
        OPTIMIZERS,
        TREE_DEFAULTS,
        TrainConfig,
    )
    from ..training.kinds import KINDS
    from ..training.tuning import DEFAULT_GRIDS, format_grid

    d = TrainConfig()  # every default stated once, in TrainConfig
    if single_loss:
        p.add_argument(
            "--loss",
            default=None,
            metavar="SPEC",
            help="loss spec, e.g. listnet, cs_listmle@10, consistent_listnet(norm=z10), "
            f"ranksvm(l2=0.001), adarank(measure=map) (default: {d.loss}; "
            + "; ".join(
                f"{k.default_loss} for --model {k.name}"
                for k in KINDS.values()
                if k.default_loss != d.loss
            )
            + ")",
        )
    p.add_argument(
        "--model",
        default=d.model,
        choices=tuple(KINDS),
        help=f"model family (default {d.model}; "
        + "; ".join(f"{k.name} = {k.summary}" for k in KINDS.values())
        + ")",
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
        f"adam, {TREE_DEFAULTS['lr']:g} for trees; lbfgs: first trial step of each line "
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
        f"(default: off; {TREE_DEFAULTS['patience']} for trees)",
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
        help="boosting rounds: AdaRank (default: the adarank spec's rounds) or trees "
        f"(default {TREE_DEFAULTS['rounds']})",
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
    _add_attention_arguments(p, d)
    p.add_argument("--seed", type=int, default=d.seed, help=f"random seed (default {d.seed})")
    p.add_argument("--device", default=d.device, help=f"cpu, cuda or auto (default {d.device})")
    p.add_argument(
        "--threads",
        type=positive_int,
        default=None,
        help="CPU threads while training: torch's, and LightGBM's or XGBoost's for trees (one "
        "rule; default: 1 for data with fewer than 10 million feature values, documents x "
        "features; for larger data the idle cores: the cores this process may use minus the "
        "one-minute load average, at least 1)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    from ._dask import add_dask_arguments

    _add_tree_arguments(p)
    add_dask_arguments(p)


def _add_attention_arguments(parser: argparse.ArgumentParser, d: Any) -> None:
    """The self-attention model's options and the DASALC recipe's (defaults from TrainConfig)."""
    g = parser.add_argument_group(
        "self-attention (--model attention; --hidden is its input projection) and DASALC"
    )
    g.add_argument(
        "--heads", type=positive_int, default=d.heads, help=f"attention heads (default {d.heads})"
    )
    g.add_argument(
        "--blocks",
        type=int,
        default=d.blocks,
        help=f"encoder blocks (default {d.blocks})",
    )
    g.add_argument(
        "--ff-width",
        type=positive_int,
        default=d.ff_width,
        help=f"feed-forward width of a block (default {d.ff_width})",
    )
    g.add_argument(
        "--layer-norm",
        choices=("pre", "post"),
        default=d.layer_norm,
        help=f"layer normalisation before or after each sub-layer (default {d.layer_norm})",
    )
    g.add_argument(
        "--input-norm", action="store_true", help="layer-normalise the input features first"
    )
    g.add_argument(
        "--noise",
        type=float,
        default=d.noise,
        metavar="SIGMA",
        help="standard deviation of Gaussian noise added to the normalised training features "
        f"(default {d.noise:g}: none)",
    )
    g.add_argument(
        "--ensemble",
        type=positive_int,
        default=d.ensemble,
        metavar="K",
        help=f"train K models with different seeds and average their scores (default {d.ensemble})",
    )


def _add_tree_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of boosted trees only (:class:`~ndcglab.training.config.TreeOptions`)."""
    from ..gbdt import HESSIAN_MODES
    from ..training.config import TREE_ENGINES, TreeOptions

    t = TreeOptions()
    g = parser.add_argument_group("boosted trees (--model gbdt)")
    g.add_argument(
        "--engine", default=None, choices=TREE_ENGINES, help=f"tree engine (default {t.engine})"
    )
    g.add_argument(
        "--num-leaves", type=int, default=None, help=f"leaves per tree (default {t.num_leaves})"
    )
    g.add_argument(
        "--min-data-in-leaf",
        type=int,
        default=None,
        help=f"minimum documents per leaf (default {t.min_data_in_leaf})",
    )
    g.add_argument(
        "--hessian",
        default=None,
        choices=HESSIAN_MODES,
        help="second derivatives: auto (closed form, else exact/Hutchinson; |diagonal| for "
        "losses marked so, e.g. approx_ndcg), closed, exact, hutchinson, abs (absolute value of "
        f"the diagonal: saddle-free Newton), constant (default {t.hessian})",
    )
    g.add_argument(
        "--gbdt-param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any other parameter of the tree engine, by that engine's name, e.g. --gbdt-param "
        "lambda_l2=1 (LightGBM) or --gbdt-param lambda=1 (XGBoost); a name the engine does not "
        "know, a value it refuses, or a key ndcglab sets itself (objective, metric) is refused "
        "(repeatable)",
    )


def _param_value(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def _tree_params(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or []:
        key, eq, val = str(item).partition("=")
        if not eq or not key.strip():
            raise SpecError(
                f"cannot read --gbdt-param {item!r}. Fix: write KEY=VALUE, e.g. lambda_l2=1"
            )
        out[key.strip()] = _param_value(val.strip())
    return out


#: option names of the command line that differ from :class:`TrainConfig`'s
_RENAMED = {"threads": "num_threads", "gbdt_param": "tree_params"}


def config_from_args(args: argparse.Namespace, loss: str | None) -> Any:
    """A :class:`~ndcglab.training.TrainConfig` from parsed arguments and one loss spec, through
    :func:`ndcglab.training.config.config_from_options` (the one builder).

    ``loss=None`` means the model kind's default loss.
    """
    from ..training.config import config_from_options, option_names

    known = option_names()
    options = {name: v for k, v in vars(args).items() if (name := _RENAMED.get(k, k)) in known}
    options["tree_params"] = _tree_params(getattr(args, "gbdt_param", None) or []) or None
    cfg = config_from_options({**options, "loss": loss})
    check_loss_name(cfg.loss)
    from ..training.kinds import get_kind

    if get_kind(cfg.model).route == "trees":  # the loss and the engine's parameters, now
        from ..gbdt.train import check_tree_config

        check_tree_config(cfg)
    return cfg


def check_loss_name(spec: Any) -> None:
    """Refuse an unknown loss name before any data is read (the error names the closest
    losses, :func:`ndcglab.losses.base.loss_class`); an engine's own objective
    (``lightgbm:lambdarank``) is checked by the engine's route."""
    from .._spec import parse_spec

    if not isinstance(spec, str) or ":" in spec:
        return
    from ..losses.base import loss_class

    loss_class(parse_spec(spec, what="loss").name)


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
    from ..training.kinds import KINDS, get_kind

    if not get_kind(args.model).tunable:
        able = " or ".join(k.name for k in KINDS.values() if k.tunable)
        raise NdcglabError(
            f"--tune chooses gradient-training hyper-parameters; --model {args.model} has none "
            f"(its rounds are chosen on validation already). Fix: drop --tune, or use --model "
            f"{able}"
        )
    return {
        "grid": parse_grid(grid_text) if grid_text else None,
        "select_epoch": args.tune_select == "best-epoch",
    }


def tuning_text(tuning: dict[str, Any]) -> str:
    """``lr=0.1, tol=0.001 (by NDCG@1 on validation)``: the chosen values of a tuning record."""
    chosen = ", ".join(f"{k}={v:g}" for k, v in tuning["chosen"].items())
    return f"{chosen} (by {tuning['target']} on validation)"


def load_training_data(
    paths: list[str], validation: str | None, args: argparse.Namespace | None = None
) -> tuple[Any, Any]:
    """(train, validation) datasets from ``train``'s DATA arguments (see the module docstring);
    ``args`` carries the read options (``--cache``)."""
    from ..data import RankingDataset, load_dataset

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
        train = RankingDataset.concat([load_dataset(p, **opts(p)) for p in paths])
    if validation is not None:
        valid = load_dataset(validation, **opts(validation))
    if valid is not None and valid.n_features != train.n_features:  # sparse files: absent = 0
        width = max(train.n_features, valid.n_features)
        train, valid = train.with_n_features(width), valid.with_n_features(width)
    return train, valid


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


def measures_from_args(args: argparse.Namespace) -> list[str] | None:
    """``cv``'s test measures: every ``--measure`` and the deprecated ``--measures`` list, each
    checked now (None: the preset's usual set)."""
    import sys

    from ..measures import parse_measures

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
    return measures


def load_folds(args: argparse.Namespace, log: Any) -> list[Any]:
    """``cv``'s folds (``--folds`` of DATA: a LETOR folder's, or the five rotation folds of
    ``synthetic:NAME[:SEED]`` shuffled with ``--seed``); ``log`` announces each with its sizes
    when it is first read."""
    from ..data import load_dataset, load_letor_folder
    from ..data.folds import rotation_folds
    from ..data.synthetic import SYNTHETIC_PREFIX

    if str(args.data).startswith(SYNTHETIC_PREFIX):
        every = rotation_folds(load_dataset(args.data), seed=args.seed)
    else:
        every = load_letor_folder(args.data, **read_options(args, args.data))
    folds = select_folds(every, args.folds)
    if not folds:
        raise NdcglabError(f"{args.data} holds no folds. Fix: give a folder with Fold1..Fold5")
    return [_Announced(f, log) for f in folds]


class _Announced:
    """A fold whose parts are read (and announced by ``log``) on first use of ``train``."""

    def __init__(self, fold: Any, log: Any) -> None:
        self.fold, self.log, self.name = fold, log, fold.name

    def __getattr__(self, part: str) -> Any:
        import time

        if part not in ("train", "vali", "test"):
            raise AttributeError(part)
        t0 = time.perf_counter()
        tr, va, te = self.fold.train, self.fold.vali, self.fold.test
        self.log(
            f"{self.name}: {tr.n_queries}/{va.n_queries}/{te.n_queries} queries "
            f"(train/vali/test), read in {time.perf_counter() - t0:.1f} s"
        )
        self.train, self.vali, self.test = tr, va, te
        return getattr(self, part)


def fold_line(r: Any, unit: str) -> str:
    """The progress line of one run on one fold (:class:`ndcglab.training.FoldResult`): its test
    NDCG@10 (or first measure), best validation value, chosen epoch or round, stopping reason and
    time; the values chosen by tuning; or why it failed."""
    if r.failure is not None:
        return f"{r.fold} {r.run}: FAILED at epoch {r.failure['epoch']}: {r.failure['error']}"
    res = r.result
    names = list(r.evaluation.mean)
    key = next((n for n in names if n.lower().startswith("ndcg@10")), names[0])
    valid = "-" if res.best_score is None else f"{res.best_score:.4f}"
    line = (
        f"{r.fold} {r.run}: test {key} {r.evaluation.mean[key]:.4f}, valid {valid}, "
        f"best {unit} {res.best_epoch}/{res.epochs_run} ({res.stop_reason}), {r.seconds:.1f} s"
    )
    tuned = (getattr(res.trained, "metadata", None) or {}).get("tuning")
    return line if tuned is None else f"{r.fold} {r.run}: chosen {tuning_text(tuned)}\n{line}"


def round_text(result: Any) -> str:
    """The line printed after boosting on Dask: the round chosen on validation, or all kept."""
    if result.best_score is not None:
        return (
            f"chosen round {result.best_epoch} of {result.epochs_run} "
            f"(best validation {result.measure} = {result.best_score:.4f})"
        )
    return f"{result.epochs_run} rounds, all kept (no validation set to choose the round on)"


def train_payload(result: Any, path: Any, cfg: Any, unit: str) -> dict[str, Any]:
    """The JSON summary: the same keys for every model kind, plus the trees' own."""
    meta = result.trained.metadata
    mean = (
        {}
        if result.measure is None or result.best_score is None
        else {result.measure: result.best_score}
    )
    if unit == "round":
        return {
            "model": str(path),
            "loss": meta.get("loss"),
            "model_kind": cfg.model,
            "mean": mean,
            "best_iteration": result.best_epoch,
            "rounds_run": result.epochs_run,
            "stop_reason": result.stop_reason,
            "n_features": result.trained.n_features,
            "objective": meta.get("objective"),
            "params": meta.get("params"),
        }
    return {
        "model": str(path),
        "loss": meta.get("loss"),
        "model_kind": result.model.kind,
        "mean": mean,
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
