"""``ndcglab clicks fit LOG [LOG ...] --click-model SPEC [--propensity METHOD] [--data DATA]``

Fit a click model (PBM, UBM, cascade, DCM, DBN, SDBN) to click logs and print its
log-likelihood, perplexity per position and position parameters; with ``--propensity``, also
the position-bias propensities (truth, randtop, swap, harvest, regression_em). Several logs
(e.g. of several rankers, for ``harvest``) are joined. Each log is checked row by row (and,
with ``--data``, against the features): a bad row is one error line naming the file and row.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ._common import add_cache_argument, add_format_argument, emit, format_table, read_options


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "fit",
        help="fit a click model and position-bias propensities to click logs",
        description=(
            "Fit a click model to LOG (several logs are joined) by EM or maximum likelihood and "
            "print its log-likelihood, perplexity per position and position parameters; "
            "--propensity also estimates the examination propensities relative to the top."
        ),
    )
    p.add_argument("logs", nargs="+", metavar="LOG", help="click log(s): .parquet or .npz")
    p.add_argument(
        "--click-model",
        default="pbm",
        metavar="SPEC",
        help="pbm, ubm, cascade, dcm, dbn, sdbn; EM options iterations= (default 100) and "
        "tol= (default 1e-6), dbn(gamma=G) fixes gamma. Default: pbm",
    )
    p.add_argument(
        "--propensity",
        default=None,
        metavar="METHOD",
        choices=("truth", "randtop", "swap", "harvest", "regression_em"),
        help="also estimate propensities: truth (the simulator's), randtop, swap, harvest "
        "(intervention harvesting over the logs' rankers) or regression_em (needs --data)",
    )
    p.add_argument(
        "--data",
        default=None,
        metavar="DATA",
        help="the dataset the logs were simulated on (LETOR file or synthetic:NAME): the logs "
        "are checked against it, and regression_em reads its features",
    )
    p.add_argument("--out", default=None, metavar="FILE",
                   help="write the fitted parameters as JSON")  # fmt: skip
    add_cache_argument(p)
    add_format_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._atomic import write_text_atomic
    from ..clicks import aligned_to, concat_logs, read_log
    from ..clicks.click_models import fit_click_model
    from ..clicks.propensity import estimate_propensities
    from ..data import load_dataset
    from ..errors import SpecError

    if args.propensity == "regression_em" and args.data is None:
        raise SpecError(
            "--propensity regression_em reads the documents' features. Fix: add --data DATA "
            "(the data the log was simulated on)"
        )
    ds = None if args.data is None else load_dataset(args.data, **read_options(args, args.data))
    logs = [read_log(path, dataset=ds) for path in args.logs]
    if ds is not None:
        logs = [aligned_to(lg, ds) for lg in logs]
    log = logs[0] if len(logs) == 1 else concat_logs(logs)
    model = fit_click_model(log, args.click_model)
    k = model.k
    payload: dict[str, Any] = {
        "logs": list(args.logs),
        "click_model": model.name,
        "sessions": log.n_sessions,
        "rows": len(log),
        "clicks": int(log.click.sum()),
        "k": k,
        "iterations": model.iterations,
        "converged": model.converged,
        "log_likelihood": model.log_likelihood,
        "perplexity": model.perplexity,
        "mean_perplexity": float(np.nanmean(model.perplexity)),
    }
    if model.name == "pbm" and model.examination is not None:
        payload["examination"] = model.examination
    if model.name == "ubm" and model.examination is not None:
        payload["examination"] = model.examination
    if model.continuation is not None:
        payload["continuation"] = model.continuation
    if model.gamma is not None:
        payload["gamma"] = model.gamma
    if args.propensity is not None:
        payload["propensity_method"] = args.propensity
        payload["propensity"] = estimate_propensities(log, args.propensity, dataset=ds)
    if args.out is not None:
        from ._common import to_json

        full = dict(payload)
        seen = np.flatnonzero(np.isfinite(model.attractiveness))
        full["attractiveness"] = {
            "doc": seen,
            "query": log.qids[_query_of(log)[seen]].tolist(),
            "value": model.attractiveness[seen],
        }
        if model.satisfaction is not None:
            full["satisfaction"] = {"doc": seen, "value": model.satisfaction[seen]}
        write_text_atomic(args.out, to_json(full) + "\n")
        payload["out"] = str(args.out)
    emit(args, payload, lambda: _text(payload))
    return 0


def _query_of(log: Any) -> np.ndarray:
    """The query index of each document row seen in ``log`` (-1 elsewhere)."""
    q = np.full(int(log.doc.max(initial=-1)) + 1, -1, dtype=np.int64)
    q[log.doc] = log.query
    return q


def _text(payload: dict[str, Any]) -> str:
    head = (
        f"{payload['click_model']} fitted to {payload['sessions']} sessions "
        f"({payload['rows']} shown, {payload['clicks']} clicks; {payload['iterations']} "
        f"iterations{'' if payload['converged'] else ', not converged'}); log-likelihood "
        f"{payload['log_likelihood']:.6g}, mean perplexity {payload['mean_perplexity']:.4f}"
    )
    cols = ["position", "perplexity"]
    table: list[list[Any]] = [list(range(1, payload["k"] + 1)), list(payload["perplexity"])]
    if payload["click_model"] == "pbm" and "examination" in payload:
        cols.append("examination")
        table.append(list(payload["examination"]))
    if "continuation" in payload:
        cols.append("continuation")
        table.append(list(payload["continuation"]))
    if "propensity" in payload:
        cols.append(f"propensity ({payload['propensity_method']})")
        table.append(list(payload["propensity"]))
    rows = [[str(c[i]) if j == 0 else f"{c[i]:.4f}" for j, c in enumerate(table)]
            for i in range(payload["k"])]  # fmt: skip
    tail = f"\ngamma {payload['gamma']:.4f}" if "gamma" in payload else ""
    if "out" in payload:
        tail += f"\nwrote {payload['out']}"
    return head + "\n" + format_table(cols, rows) + tail
