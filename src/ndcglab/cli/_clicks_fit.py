"""``ndcglab clicks fit LOG [LOG ...] --click-model SPEC [--propensity METHOD] [--data DATA]
[--dask ADDRESS]``

Fit a click model (PBM, UBM, cascade, DCM, DBN, SDBN, trust) to click logs and print its
log-likelihood, perplexity per position and position parameters (the trust model: its affine terms
``alpha_r``, ``beta_r`` on the top position's scale, which ``ndcglab train --clicks LOG --estimator
affine --examination FIT.json`` reads); with ``--propensity``, also the position-bias propensities
(truth, randtop, swap, harvest, regression_em, trust_swap). Several logs (e.g. of several rankers,
for ``harvest``) are joined. Each log is checked row by row (and, with ``--data``, against the
features): a bad row is one error line naming the file and row.

``--dask ADDRESS`` sums each Parquet row group's counts per (query, document, position) on a Dask
worker (as ``ndcglab clicks stats --dask``) and fits from the sums: the models and methods that need
only those counts (PBM, trust; swap, harvest, trust_swap), with the same result as in memory.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ._common import add_cache_argument, add_format_argument, emit, format_table, read_options
from ._dask import add_dask_arguments


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
        help="pbm, ubm, cascade, dcm, dbn, sdbn, trust (trust bias: examination and the click "
        "probabilities of relevant and non-relevant documents per position); EM options "
        "iterations= (default 100) and tol= (default 1e-6), dbn(gamma=G) fixes gamma. "
        "Default: pbm",
    )
    p.add_argument(
        "--propensity",
        default=None,
        metavar="METHOD",
        choices=("truth", "randtop", "swap", "harvest", "regression_em", "trust_swap"),
        help="also estimate propensities: truth (the simulator's), randtop, swap, harvest "
        "(intervention harvesting over the logs' rankers), regression_em (needs --data), or "
        "trust_swap (trust bias from swap interventions: alpha as the propensity, beta as its "
        "offset, both on the top position's scale)",
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
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr (--dask)")
    add_dask_arguments(p)
    add_cache_argument(p)
    add_format_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .._atomic import write_text_atomic
    from ..clicks.click_models import fit_click_model
    from ..clicks.propensity import estimate_propensities
    from ..errors import SpecError

    if args.propensity == "regression_em" and args.data is None:
        raise SpecError(
            "--propensity regression_em reads the documents' features. Fix: add --data DATA "
            "(the data the log was simulated on)"
        )
    if args.dask is not None:
        log = counts = _dask_counts(args)
    else:
        log, counts = _in_memory(args)
    model = fit_click_model(log, args.click_model)
    k = model.k
    imp, clk = counts.per_position()
    payload: dict[str, Any] = {
        "logs": list(args.logs),
        "click_model": model.name,
        "sessions": int(imp[0]) if args.dask is not None else log.n_sessions,
        "rows": int(imp.sum()),
        "clicks": int(clk.sum()),
        "k": k,
        "iterations": model.iterations,
        "converged": model.converged,
        "log_likelihood": model.log_likelihood,
        "perplexity": model.perplexity,
        "mean_perplexity": float(np.nanmean(model.perplexity)),
    }
    if model.name in ("pbm", "ubm", "trust") and model.examination is not None:
        payload["examination"] = model.examination
    if model.name == "trust":
        payload["trust_pos"] = model.trust_pos
        payload["trust_neg"] = model.trust_neg
        payload["alpha"], payload["beta"] = model.affine()
    if model.continuation is not None:
        payload["continuation"] = model.continuation
    if model.gamma is not None:
        payload["gamma"] = model.gamma
    if args.propensity is not None:
        payload["propensity_method"] = args.propensity
        if args.propensity == "trust_swap":
            from ..clicks.propensity import swap_affine_terms

            payload["propensity"], payload["propensity_offset"] = swap_affine_terms(log)
        else:
            payload["propensity"] = estimate_propensities(log, args.propensity, dataset=args.ds)
    if args.dask is not None:
        payload["dask"] = args.dask
    if args.out is not None:
        from ._common import to_json

        full = dict(payload)
        seen = np.flatnonzero(np.isfinite(model.attractiveness))
        full["attractiveness"] = {
            "doc": seen,
            "query": counts.qids[_query_of(counts)[seen]].tolist(),
            "value": model.attractiveness[seen],
        }
        if model.satisfaction is not None:
            full["satisfaction"] = {"doc": seen, "value": model.satisfaction[seen]}
        write_text_atomic(args.out, to_json(full) + "\n")
        payload["out"] = str(args.out)
    emit(args, payload, lambda: _text(payload))
    return 0


def _in_memory(args: argparse.Namespace) -> tuple[Any, Any]:
    """The logs read whole (joined), and their counts."""
    from ..clicks import aligned_to, concat_logs, read_log
    from ..data import load_dataset

    ds = None if args.data is None else load_dataset(args.data, **read_options(args, args.data))
    args.ds = ds
    logs = [read_log(path, dataset=ds) for path in args.logs]
    if ds is not None:
        logs = [aligned_to(lg, ds) for lg in logs]
    log = logs[0] if len(logs) == 1 else concat_logs(logs)
    return log, log.stats()


def _dask_counts(args: argparse.Namespace) -> Any:
    """The logs' counts per (query, document, position), summed per row group on Dask; what
    cannot be fitted from counts is refused before the cluster starts."""
    from ..clicks import merge_stats, read_log_stats
    from ..clicks.click_models import count_model
    from ..clicks.propensity import COUNT_METHODS
    from ..distributed.cluster import (
        MIN_EVALUATE_MEMORY,
        check_memory_limit,
        check_timeout,
        parse_address,
    )
    from ..errors import DataFormatError, SpecError
    from ._dask import client_from_args, worker_path

    args.ds = None
    parse_address(args.dask)
    check_timeout(args.dask_timeout)
    check_memory_limit(args.dask_memory_limit, minimum=MIN_EVALUATE_MEMORY)
    count_model(args.click_model)  # a bad spec, or a model that needs sessions: one line
    if args.propensity is not None and args.propensity not in COUNT_METHODS:
        raise SpecError(
            f"--dask fits from the logs' counts; --propensity {args.propensity} reads the logs' "
            f"rows. Fix: use --propensity {' or '.join(COUNT_METHODS)}, or drop --dask"
        )
    if args.data is not None:
        raise SpecError(
            "--dask fits from the logs' counts and does not read the features. Fix: drop --data "
            "(check the logs against the data without --dask)"
        )
    with client_from_args(args, "ndcglab clicks fit") as client:
        parts = [read_log_stats(worker_path(path), client=client) for path in args.logs]
    for i, part in enumerate(parts[1:], start=2):
        if len(part.qids) != len(parts[0].qids) or (part.qids != parts[0].qids).any():
            raise DataFormatError(
                f"click log {i} ({args.logs[i - 1]}) has other query ids than log 1",
                fix="join logs simulated on the same dataset",
            )
    return parts[0] if len(parts) == 1 else merge_stats(parts)


def _query_of(counts: Any) -> np.ndarray:
    """The query index of each document row seen in ``counts`` (-1 elsewhere)."""
    q = np.full(int(counts.doc.max(initial=-1)) + 1, -1, dtype=np.int64)
    q[counts.doc] = counts.query
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
    if payload["click_model"] in ("pbm", "trust") and "examination" in payload:
        cols.append("examination")
        table.append(list(payload["examination"]))
    if "alpha" in payload:
        cols += ["eps+", "eps-", "alpha", "beta"]
        table += [list(payload[n]) for n in ("trust_pos", "trust_neg", "alpha", "beta")]
    if "continuation" in payload:
        cols.append("continuation")
        table.append(list(payload["continuation"]))
    if "propensity" in payload:
        cols.append(f"propensity ({payload['propensity_method']})")
        table.append(list(payload["propensity"]))
    if "propensity_offset" in payload:
        cols.append("offset")
        table.append(list(payload["propensity_offset"]))
    rows = [[str(c[i]) if j == 0 else f"{c[i]:.4f}" for j, c in enumerate(table)]
            for i in range(payload["k"])]  # fmt: skip
    tail = f"\ngamma {payload['gamma']:.4f}" if "gamma" in payload else ""
    if "out" in payload:
        tail += f"\nwrote {payload['out']}"
    return head + "\n" + format_table(cols, rows) + tail
