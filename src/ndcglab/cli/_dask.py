"""The ``--dask ADDRESS`` options of ``evaluate``, ``train`` and ``cv`` (boosted trees), and of
``clicks stats``, ``clicks fit`` and ``train --clicks LOG`` (a click log's counts summed per
partition on the workers; with ``train --clicks`` a model kind that does not train on Dask then
trains here, on the summed statistics).

``ADDRESS`` is a scheduler address (``tcp://host:8786``, ``host:8786``) or ``local:N`` for ``N``
worker processes on this machine, started for the command; ``--dask-memory-limit SIZE`` (with
``local:N``) is each local worker's memory limit; ``--dask-timeout`` (default 10 s) bounds the
whole connection. The cluster itself is :mod:`ndcglab.distributed.cluster`.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import Any

from ..errors import NdcglabError

__all__ = [
    "add_dask_arguments",
    "check_dask_arguments",
    "client_from_args",
    "trains_on_dask",
    "worker_path",
]


def add_dask_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``--dask``, ``--dask-memory-limit`` and ``--dask-timeout``."""
    g = p.add_argument_group(
        "distributed (Dask)", "run on a Dask cluster (needs the distributed extra)"
    )
    g.add_argument(
        "--dask",
        default=None,
        metavar="ADDRESS",
        help="a Dask scheduler address (tcp://host:8786), or local:N for N local worker "
        "processes started for this command (at most one per core)",
    )
    g.add_argument(
        "--dask-memory-limit",
        default=None,
        metavar="SIZE",
        help="memory limit per local worker, e.g. 1GiB (with --dask local:N; at least 128 MiB "
        "to evaluate, 512 MiB to train: what a worker needs before any data; default: Dask's, "
        "the machine's memory shared by the workers)",
    )
    g.add_argument(
        "--dask-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="give up connecting to the scheduler (the whole handshake) after this long "
        "(default 10)",
    )


def check_dask_arguments(args: argparse.Namespace) -> None:
    """Refuse, before any data is read or cluster started, ``--dask`` options that cannot apply:
    a bad address or timeout, a model kind that does not train on Dask (unless ``--clicks``
    gives Dask the counting of a log to do), ``--patience`` with a kind trained on Dask, and
    with ``--clicks`` an estimator or a missing examination that counts cannot serve."""
    if getattr(args, "dask", None) is None:
        return
    from ..distributed.cluster import (
        MIN_EVALUATE_MEMORY,
        MIN_WORKER_MEMORY,
        check_memory_limit,
        check_timeout,
        parse_address,
    )
    from ..training.kinds import KINDS, get_kind

    parse_address(args.dask)
    check_timeout(args.dask_timeout)
    trains = getattr(args, "model", None) is not None
    check_memory_limit(
        args.dask_memory_limit, minimum=MIN_WORKER_MEMORY if trains else MIN_EVALUATE_MEMORY
    )
    model = getattr(args, "model", None)
    clicks = getattr(args, "clicks", None) is not None
    if clicks:
        _check_click_counts(args)
    if model is not None and not get_kind(model).distributed:
        if clicks:
            return  # Dask sums the click log; the model trains here
        able = " or ".join(k.name for k in KINDS.values() if k.distributed)
        raise NdcglabError(
            f"--dask trains {able} only. Fix: add --model {able}, or drop --dask for "
            f"--model {model}"
        )
    if getattr(args, "patience", None) is not None:
        raise NdcglabError(
            "--patience does not apply with --dask: boosting on Dask trains --rounds rounds, then "
            "keeps the best round on the validation set. Fix: drop --patience (set --rounds)"
        )


def _check_click_counts(args: argparse.Namespace) -> None:
    """``train --clicks LOG --dask``: Dask sums the log into counts, which carry neither sessions
    (``dla``, ``pairwise``) nor the log's metadata (the examination)."""
    estimator = getattr(args, "estimator", "ips")
    if estimator in ("dla", "pairwise"):
        raise NdcglabError(
            f"--estimator {estimator} needs the sessions of the log; --dask sums the log into "
            "counts. Fix: drop --dask, or use naive, ips, snips, affine or dr"
        )
    if estimator != "naive" and getattr(args, "examination", None) is None:
        raise NdcglabError(
            f"--dask reads the counts of {args.clicks}, not its metadata: the examination is "
            "needed. Fix: give --examination A1,A2,... or FIT.json (ndcglab clicks fit --out)"
        )


@contextlib.contextmanager
def client_from_args(args: argparse.Namespace, label: str) -> Iterator[Any]:
    """The Dask client of ``--dask`` for the command (None without ``--dask``)."""
    if getattr(args, "dask", None) is None:
        yield None
        return
    from ..distributed.cluster import dask_client

    with dask_client(
        args.dask,
        memory_limit=args.dask_memory_limit,
        timeout=args.dask_timeout,
        quiet=args.quiet,
        label=label,
    ) as client:
        yield client


def trains_on_dask(args: argparse.Namespace, kind: Any) -> contextlib.AbstractContextManager[Any]:
    """The client that trains model kind ``kind`` on Dask: :func:`client_from_args` for a kind
    that trains there, else none (``train --clicks LOG --dask`` with a kind trained here: Dask
    only summed the log)."""
    if getattr(kind, "distributed", False):
        return client_from_args(args, "ndcglab train")
    return contextlib.nullcontext(None)


def worker_path(path: str) -> str:
    """``path`` as a Dask worker must open it: absolute (a worker's working folder is its own,
    not this command's)."""
    import os

    return os.path.abspath(path)
