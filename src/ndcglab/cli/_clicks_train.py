"""``ndcglab train DATA --clicks LOG --estimator ips|snips|naive|affine|dr|dla``: the options that
train on clicks instead of judged labels, and the step that turns the training data's labels into
click labels (:mod:`ndcglab.clicks.learn`). The validation set keeps its judged labels (model
selection measures NDCG as usual)."""

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
        help="train on the clicks of LOG (made on the training data) instead of its labels",
    )
    g.add_argument(
        "--estimator",
        default="ips",
        choices=["naive", "ips", "snips", "affine", "dr", "dla"],
        help="how clicks become labels (with --clicks; default ips; see docs/clicks.md)",
    )
    g.add_argument(
        "--examination",
        default=None,
        metavar="A1,A2,...",
        help="examination probability per position; default: the log's metadata",
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


def click_training_data(
    args: argparse.Namespace, train_ds: Any, cfg: Any, say: Any
) -> tuple[Any, dict[str, Any]]:
    """``train_ds`` with click labels from ``args.clicks``, and what to report."""
    from ..clicks import read_log
    from ..clicks.learn import click_dataset, click_loss, dla_examination
    from ..errors import SpecError
    from ._clicks_evaluate import position_terms

    if not 0 <= args.tau < 1:
        raise SpecError(f"--tau must be in [0, 1), got {args.tau}. Fix: e.g. --tau 0.05")
    if args.dla_rounds < 1:
        raise SpecError(f"--dla-rounds must be at least 1, got {args.dla_rounds}")
    log = read_log(args.clicks)
    cfg.loss = click_loss(str(cfg.loss))  # a linear gain unless the loss names one
    beta: Any = None
    alpha: Any = None
    if args.estimator == "dla":
        alpha = dla_examination(
            train_ds, log, cfg, rounds=args.dla_rounds, tau=args.tau, progress=False
        )
        estimator = "ips"
    else:
        alpha, beta = (
            (None, None)
            if args.estimator == "naive"
            else position_terms(args.examination, args.trust_offset, log.meta, args.clicks)
        )
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
    say(
        f"clicks {args.clicks}: {log.n_sessions} sessions, estimator {args.estimator}, loss "
        f"{cfg.loss}"
        + ("" if alpha is None else f", examination {np.round(np.asarray(alpha), 3).tolist()}")
    )
    return data, info
