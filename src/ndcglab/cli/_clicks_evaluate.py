"""``ndcglab clicks evaluate LOG --data DATA --scores NEW --measure 'dcg@5' --estimator dr``

Estimate the DCG@k or NDCG@k of a new ranker (a score file, one score per document of DATA, or a
model file) from a click log of a stochastic logging policy, with a confidence interval. The
estimators and conventions are those of :mod:`ndcglab.clicks.estimators`: ``ips``, ``snips``,
``dr`` (doubly robust) and ``cm`` (click-model estimate); the examination per position comes
from ``--examination`` (numbers, or a fitted click model's file of ``ndcglab clicks fit --out``)
or, by default, from the log's metadata (a simulated log records the true one).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ._common import add_cache_argument, add_format_argument, emit, read_options


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "evaluate",
        help="estimate a new ranker's DCG@k/NDCG@k from a click log, with an interval",
        description=(
            "Estimate the DCG@k or NDCG@k of the ranker whose scores are NEW from the click log "
            "LOG of a stochastic logging policy on DATA. The gain is the click relevance "
            "(probability of a click once examined); the value is the mean over the log's "
            "sessions. Estimators: ips (item-position IPS), snips (self-normalised), dr (doubly "
            "robust, cross-fitted), cm (click-model estimate)."
        ),
    )
    p.add_argument("log", metavar="LOG", help="click log (.parquet or .npz)")
    p.add_argument(
        "--data",
        default=None,
        metavar="DATA",
        help="the LETOR file (or synthetic:NAME) the log was made from; default: the log's "
        "metadata 'data'",
    )
    p.add_argument(
        "--scores",
        required=True,
        metavar="NEW",
        help="the new ranker: a score file (one score per document of DATA) or a model file",
    )
    p.add_argument("--measure", default="dcg@5", help="dcg@k or ndcg@k (default dcg@5)")
    p.add_argument(
        "--estimator",
        default="dr",
        choices=["ips", "snips", "dr", "cm"],
        help="the estimator (default dr)",
    )
    p.add_argument(
        "--examination",
        default=None,
        metavar="A1,A2,...|FIT.json",
        help="examination probability per position (α), or the JSON file of 'ndcglab clicks "
        "fit --out' (a trust fit gives α and β); default: the log's metadata ('alpha' under "
        "trust bias, else 'examination')",
    )
    p.add_argument(
        "--trust-offset",
        default=None,
        metavar="B1,B2,...",
        help="trust-bias offset per position (β); default: the log's metadata 'beta', else 0",
    )
    p.add_argument(
        "--normaliser",
        default="max",
        choices=["max", "labels"],
        help="NDCG's normaliser: max (every document fully relevant; default) or labels (the "
        "ideal DCG@k of DATA's labels mapped to click relevance by the log's click model)",
    )
    p.add_argument(
        "--empty",
        default="skip",
        choices=["skip", "zero"],
        help="a query whose normaliser is 0: skip its sessions (default) or count them as 0",
    )
    p.add_argument("--level", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--seed", type=int, default=0, help="seed of dr's halves and cm's bootstrap")
    add_cache_argument(p)
    add_format_argument(p)
    p.set_defaults(func=run)


def _numbers(text: str, option: str) -> np.ndarray:
    from ..errors import SpecError

    try:
        values = [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise SpecError(
            f"{option} {text!r} is not a comma-separated list of numbers. Fix: e.g. {option} "
            "1,0.5,0.33"
        ) from None
    return np.asarray(values, dtype=np.float64)


def fitted_terms(text: str | None) -> tuple[Any, Any] | None:
    """``(α, β or None)`` from ``--examination FIT.json`` (the file of ``ndcglab clicks fit
    --out``: :func:`ndcglab.clicks.click_models.read_affine_terms`); None when the option is
    absent or numbers."""
    import os

    if text is None or not (text.endswith(".json") or os.path.isfile(text)):
        return None
    from ..clicks.click_models import read_affine_terms

    return read_affine_terms(text)


def position_terms(
    examination: str | None,
    trust_offset: str | None,
    meta: dict[str, Any],
    where: str,
    fitted: tuple[Any, Any] | None = None,
) -> tuple[Any, Any]:
    """``(α, β)`` per position: from a fitted click model (``fitted``, else ``--examination
    FIT.json``; ``--trust-offset`` still overrides β), from the options' numbers, else the
    log's metadata (``alpha`` and ``beta`` under trust bias, else ``examination`` and no
    offset)."""
    from ..errors import SpecError

    if fitted is None:
        fitted = fitted_terms(examination)
    if fitted is not None:
        alpha, beta = fitted
        if trust_offset is not None:
            beta = _numbers(trust_offset, "--trust-offset")
        return alpha, beta
    if examination is not None:
        alpha = _numbers(examination, "--examination")
    elif meta.get("alpha") is not None:
        alpha = np.asarray(meta["alpha"], dtype=np.float64)
    elif meta.get("examination") is not None:
        alpha = np.asarray(meta["examination"], dtype=np.float64)
    else:
        raise SpecError(
            f"{where}: the log records no examination probabilities. Fix: give "
            "--examination A1,A2,... (e.g. from 'ndcglab clicks fit')"
        )
    if trust_offset is not None:
        beta = _numbers(trust_offset, "--trust-offset")
    elif examination is None and meta.get("beta") is not None:
        beta = np.asarray(meta["beta"], dtype=np.float64)
    else:
        beta = None
    return alpha, beta


def run(args: argparse.Namespace) -> int:
    from ..clicks import aligned_to, read_log, validate_log
    from ..clicks.estimators import counterfactual_estimate
    from ..data import load_dataset
    from ..errors import SpecError
    from ._clicks_simulate import logging_scores

    if not 0 < args.level < 1:
        raise SpecError(f"--level must be in (0, 1), got {args.level}. Fix: e.g. --level 0.95")
    log = read_log(args.log)
    data = args.data if args.data is not None else log.meta.get("data")
    if not data:
        raise SpecError(
            f"{args.log}: the log does not name its data. Fix: give --data DATA (the file the "
            "log was simulated or logged on)"
        )
    ds = load_dataset(data, **read_options(args, data))
    validate_log(log, dataset=ds, path=args.log)
    log = aligned_to(log, ds)
    scores = logging_scores(args.scores, ds)
    alpha, beta = position_terms(args.examination, args.trust_offset, log.meta, args.log)
    normaliser: Any = "max"
    if args.normaliser == "labels":
        from ..clicks.simulate import attractiveness, parse_click_model

        spec = log.meta.get("click_model")
        if not spec:
            raise SpecError(
                f"{args.log}: --normaliser labels needs the log's click model (its "
                "attractiveness mapping). Fix: --normaliser max"
            )
        model = parse_click_model(str(spec))
        ymax = model.ymax if model.ymax is not None else max(float(ds.labels.max()), 1.0)
        normaliser = attractiveness(ds.labels, model.eps, ymax)
    est = counterfactual_estimate(
        log,
        scores,
        ds.boundaries,
        measure=args.measure,
        estimator=args.estimator,
        examination=alpha,
        trust_offset=beta,
        normaliser=normaliser,
        empty=args.empty,
        level=args.level,
        seed=args.seed,
    )
    payload = {**est.to_dict(), "log": str(args.log), "scores": str(args.scores)}
    if est.measure.startswith("ndcg"):
        payload["normaliser"] = args.normaliser
        payload["empty"] = args.empty
    emit(
        args,
        payload,
        lambda: (
            f"{est.measure} ({est.estimator}): {est.value:.4f}  "
            f"[{est.low:.4f}, {est.high:.4f}] at {est.level:g}, stderr {est.stderr:.4f}, "
            f"{est.n_sessions} sessions, {est.n_queries} queries"
        ),
    )
    return 0
