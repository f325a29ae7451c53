"""``ndcglab train DATA --clicks LOG --estimator ips|snips|naive|affine|dr|dla|pairwise``: the
options that train on clicks instead of judged labels, and the step that turns the training data's
labels into click labels (:mod:`ndcglab.clicks.learn`). The validation set keeps its judged labels
(model selection measures NDCG as usual).

``--examination`` takes the numbers per position, or the JSON file of ``ndcglab clicks fit
--out`` (a trust fit: its ``alpha`` and ``beta``; a PBM fit: its examination relative to the
top; else its ``propensity``). ``--dask ADDRESS`` sums the log's counts per partition on Dask
(:func:`ndcglab.clicks.read_log_stats`) and builds the labels from the sums, as from a
statistics file: ``P(d at j)`` is then the observed share ``I_dj / N_q`` (the counts carry no
logging propensities), the same as the logged propensity for a deterministic logging policy.

``--estimator pairwise --model gbdt`` is Unbiased LambdaMART
(:mod:`ndcglab.clicks.unbiased_lambdamart`): it has no labels to give, so
:func:`click_training_data` returns, in its report under ``"trainer"``, the function that trains
it in place of :func:`ndcglab.training.fit` (the caller removes it from the report)."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np


def add_click_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("learning from clicks")
    g.add_argument(
        "--clicks",
        default=None,
        metavar="LOG",
        help="train on the clicks of LOG (made on the training data) instead of its labels; LOG "
        "may also be a statistics file (ndcglab clicks simulate --stats), then --examination is "
        "needed and P(d at j) is the observed share",
    )
    g.add_argument(
        "--estimator",
        default="ips",
        choices=["naive", "ips", "snips", "affine", "dr", "dla", "pairwise"],
        help="how clicks become labels (with --clicks; default ips; see docs/clicks.md)",
    )
    g.add_argument(
        "--examination",
        default=None,
        metavar="A1,A2,...|FIT.json",
        help="examination probability per position, or the JSON file of 'ndcglab clicks fit "
        "--out' (trust: its alpha and beta, both on the top position's scale; pbm: its "
        "examination relative to the top; else its propensity); default: the log's metadata",
    )
    g.add_argument(
        "--trust-offset",
        default=None,
        metavar="B1,B2,...",
        help="trust-bias offset per position (affine, dr); default: the log's metadata",
    )
    g.add_argument(
        "--tau", type=float, default=0.0, help="clip the expected examination at TAU (default 0)"
    )
    g.add_argument(
        "--dla-rounds", type=int, default=3, help="DLA's ranker/propensity rounds (default 3)"
    )
    g.add_argument(
        "--pairwise-p",
        type=float,
        default=0.0,
        metavar="P",
        help="pairwise: the L_p regularisation of the position biases (default 0: none)",
    )
    g.add_argument(
        "--bias-every",
        type=int,
        default=1,
        metavar="M",
        help="pairwise with --model gbdt (Unbiased LambdaMART): re-estimate the position biases "
        "every M trees (default 1)",
    )


def check_click_options(args: argparse.Namespace) -> None:
    """Refuse a bad value of the click options before any data is read (one line each)."""
    from ..errors import SpecError

    if not 0 <= args.tau < 1:
        raise SpecError(f"--tau must be in [0, 1), got {args.tau}. Fix: e.g. --tau 0.05")
    if args.dla_rounds < 1:
        raise SpecError(
            f"--dla-rounds must be at least 1, got {args.dla_rounds}. Fix: e.g. --dla-rounds 3"
        )
    if not args.pairwise_p >= 0:
        raise SpecError(f"--pairwise-p must be >= 0, got {args.pairwise_p}. Fix: e.g. 0 or 1")
    if args.bias_every < 1:
        raise SpecError(
            f"--bias-every must be at least 1, got {args.bias_every}. Fix: e.g. --bias-every 1 "
            "(the biases re-estimated after every tree)"
        )


def click_training_data(
    args: argparse.Namespace, train_ds: Any, cfg: Any, say: Any
) -> tuple[Any, dict[str, Any]]:
    """``train_ds`` with click labels from ``args.clicks``, and what to report."""
    from ..clicks.learn import click_dataset, click_loss, dla_examination
    from ..errors import SpecError

    check_click_options(args)
    unbiased_lambdamart = args.estimator == "pairwise" and _grows_trees(cfg)
    if unbiased_lambdamart and getattr(args, "loss", None) is not None:
        raise SpecError(
            f"--estimator pairwise with --model {cfg.model} is Unbiased LambdaMART, whose "
            f"objective is the debiased lambda loss, not --loss {args.loss}. Fix: drop --loss"
        )
    if not unbiased_lambdamart:
        cfg.loss = click_loss(str(cfg.loss))  # a linear gain unless the loss names one
    _resolve_fitted_terms(args)
    if getattr(args, "dask", None) is not None:
        return _from_counts(args, train_ds, cfg, _dask_counts(args), say)
    log, counts = _read_clicks(args.clicks)
    if counts is not None:  # a statistics file: counts only, no metadata, no propensities
        return _from_counts(args, train_ds, cfg, counts, say)
    if unbiased_lambdamart:
        return _unbiased_lambdamart(args, train_ds, log, say)
    beta: Any = None
    alpha: Any = None
    if args.estimator == "dla":
        alpha = dla_examination(
            train_ds, log, cfg, rounds=args.dla_rounds, tau=args.tau, progress=False
        )
        estimator = "ips"
    elif args.estimator == "pairwise":
        from ..clicks.pairwise_debias import fit_pairwise

        alpha = fit_pairwise(train_ds, log, p=args.pairwise_p).t_plus
        estimator = "ips"
    else:
        alpha, beta = (None, None) if args.estimator == "naive" else _terms(args, log.meta)
        estimator = args.estimator
    data = click_dataset(
        train_ds, log, estimator=estimator, examination=alpha, trust_offset=beta, tau=args.tau
    )
    info = {
        "clicks": str(args.clicks),
        "estimator": args.estimator,
        "sessions": log.n_sessions,
        "examination": None if alpha is None else np.asarray(alpha, float).tolist(),
    }
    if beta is not None:
        info["trust_offset"] = np.asarray(beta, float).tolist()
    say(
        f"clicks {args.clicks}: {log.n_sessions} sessions, estimator {args.estimator}, loss "
        f"{cfg.loss}"
        + ("" if alpha is None else f", examination {np.round(np.asarray(alpha), 3).tolist()}")
    )
    return data, info


def _resolve_fitted_terms(args: argparse.Namespace) -> None:
    """Read ``--examination FIT.json`` into ``args.fitted_terms`` ``(alpha, beta or None)``
    (None when ``--examination`` is numbers or absent)."""
    from ._clicks_evaluate import fitted_terms

    args.fitted_terms = fitted_terms(args.examination)
    if args.fitted_terms is not None:
        args.examination = None


def _terms(args: argparse.Namespace, meta: dict[str, Any]) -> tuple[Any, Any]:
    """``(α, β)``: from ``--examination FIT.json`` (``--trust-offset`` still overrides β), else
    :func:`~ndcglab.cli._clicks_evaluate.position_terms` (numbers or the log's metadata)."""
    from ._clicks_evaluate import position_terms

    return position_terms(
        args.examination, args.trust_offset, meta, args.clicks, fitted=args.fitted_terms
    )


def _dask_counts(args: argparse.Namespace) -> Any:
    """The log's counts per (query, document, position) summed per row group on Dask."""
    from ..clicks import read_log_stats
    from ._dask import client_from_args, worker_path

    # (estimators and options that counts cannot serve: refused by check_dask_arguments)
    with client_from_args(args, "ndcglab train (click counts)") as client:
        return read_log_stats(worker_path(args.clicks), client=client)


def objective_text(args: argparse.Namespace, cfg: Any) -> str:
    """What ``train --clicks`` optimises, for its first line: ``loss X`` with the loss the
    click labels are trained with (a linear gain unless the loss names one), or Unbiased
    LambdaMART's own objective."""
    from ..clicks.learn import click_loss

    if args.estimator == "pairwise" and _grows_trees(cfg):
        return "objective the debiased lambda loss of unbiased LambdaMART"
    return f"loss {click_loss(str(cfg.loss))}"


def _grows_trees(cfg: Any) -> bool:
    from ..training.kinds import get_kind

    return get_kind(cfg.model).route == "trees"


def _unbiased_lambdamart(
    args: argparse.Namespace, train_ds: Any, log: Any, say: Any
) -> tuple[Any, dict[str, Any]]:
    """The training data (its labels zeroed: Unbiased LambdaMART does not read them) and the
    report, whose ``"trainer"`` trains Unbiased LambdaMART on ``log`` in place of
    :func:`ndcglab.training.fit` and adds the biases it learned to the report."""
    import dataclasses

    from ..clicks.unbiased_lambdamart import fit_unbiased_lambdamart
    from ..errors import SpecError

    info: dict[str, Any] = {
        "clicks": str(args.clicks),
        "estimator": "pairwise",
        "learner": "unbiased LambdaMART",
        "sessions": log.n_sessions,
    }

    def trainer(
        train: Any, cfg: Any, *, validation: Any = None, client: Any = None, **_: Any
    ) -> Any:
        if client is not None:
            raise SpecError(
                "--estimator pairwise --model gbdt (Unbiased LambdaMART) reads the sessions in "
                "memory and does not train on Dask. Fix: drop --dask"
            )
        result, fitted = fit_unbiased_lambdamart(
            train, log, cfg, validation=validation, p=args.pairwise_p, bias_every=args.bias_every
        )
        t_plus = np.asarray(fitted.t_plus, float)
        t_minus = np.asarray(fitted.t_minus, float)
        info.update(examination=t_plus.tolist(), t_minus=t_minus.tolist())
        say(
            f"unbiased LambdaMART: click bias t+ {np.round(t_plus, 3).tolist()}, non-click bias "
            f"t- {np.round(t_minus, 3).tolist()}"
        )
        return result

    say(
        f"clicks {args.clicks}: {log.n_sessions} sessions, estimator pairwise: unbiased "
        "LambdaMART (debiased lambda gradients of the sessions' click pairs)"
    )
    info["trainer"] = trainer
    return dataclasses.replace(train_ds, labels=np.zeros(train_ds.n_docs)), info


def _read_clicks(path: str) -> tuple[Any, Any]:
    """``(log, None)`` for a click log, ``(None, counts)`` for a statistics file."""
    from ..clicks import read_log
    from ..clicks.logs import read_stats
    from ..errors import DataFormatError

    try:
        return read_log(path), None
    except DataFormatError as log_error:
        try:
            return None, read_stats(path)
        except DataFormatError:
            raise log_error from None


def _from_counts(
    args: argparse.Namespace, train_ds: Any, cfg: Any, counts: Any, say: Any
) -> tuple[Any, dict[str, Any]]:
    """Click labels from a statistics file (``ndcglab clicks simulate --stats``)."""
    import dataclasses

    from ..clicks.learn import click_labels, statistics_from_counts
    from ..errors import SpecError
    from ._clicks_evaluate import _numbers

    if args.estimator in ("dla", "pairwise"):  # (--dask refused them before reading)
        raise SpecError(
            f"{args.clicks} holds click statistics; --estimator {args.estimator} needs the "
            "sessions of a log. Fix: give the log itself, or another --estimator"
        )
    if args.estimator != "naive" and args.examination is None and args.fitted_terms is None:
        raise SpecError(
            f"{args.clicks} holds click statistics without the examination probabilities. Fix: "
            "give --examination A1,A2,..."
        )
    alpha = None if args.examination is None else _numbers(args.examination, "--examination")
    beta = None if args.trust_offset is None else _numbers(args.trust_offset, "--trust-offset")
    if getattr(args, "fitted_terms", None) is not None:
        alpha, fitted_beta = args.fitted_terms
        beta = fitted_beta if beta is None else beta
    stats = statistics_from_counts(counts, train_ds)
    labels = click_labels(
        stats,
        estimator=args.estimator,
        examination=alpha,
        trust_offset=beta,
        tau=args.tau,
        features=train_ds.features,
    )
    n_sessions = int(stats.sessions.sum())
    say(
        f"click statistics {args.clicks}: {n_sessions} sessions, estimator {args.estimator}, "
        f"loss {cfg.loss}"
    )
    info = {
        "clicks": str(args.clicks),
        "estimator": args.estimator,
        "sessions": n_sessions,
        "examination": None if alpha is None else alpha.tolist(),
    }
    if beta is not None:
        info["trust_offset"] = beta.tolist()
    if getattr(args, "dask", None) is not None:
        info["dask"] = args.dask
    return dataclasses.replace(train_ds, labels=labels), info
