"""The ``--dask ADDRESS`` option of ``evaluate``, ``train --model gbdt`` and ``cv --model gbdt``.

``ADDRESS`` is either a scheduler address (``tcp://host:8786``, ``host:8786``) to connect to, or
``local:N`` for a cluster of ``N`` worker processes on this machine (one thread each), started
for the command and closed after it. ``--dask-memory-limit SIZE`` (``1GiB``, ``500MB``; with
``local:N`` only) is each local worker's memory limit, enforced by Dask (spill to disk, then
restart a worker past it). Connecting gives up after ``--dask-timeout`` seconds (default 10).

Errors are :class:`~ndcglab.errors.NdcglabError` (one line from the command): the
``distributed`` extra missing, a malformed address, an unreachable scheduler.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

from .._compat import require
from ..errors import NdcglabError

__all__ = ["add_dask_arguments", "dask_client", "fit_gbdt_dask_from_args", "parse_dask_address"]


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
        "processes started for this command",
    )
    g.add_argument(
        "--dask-memory-limit",
        default=None,
        metavar="SIZE",
        help="memory limit per local worker, e.g. 1GiB (with --dask local:N; default: Dask's, "
        "the machine's memory shared by the workers)",
    )
    g.add_argument(
        "--dask-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="give up connecting to the scheduler after this long (default 10)",
    )


def parse_dask_address(text: str) -> tuple[str, int | None]:
    """``("local", N)`` for ``local:N``, else ``(address, None)``; a bad value raises."""
    t = str(text).strip()
    if t.lower().startswith("local"):
        _, _, n = t.partition(":")
        try:
            workers = int(n) if n else 2
        except ValueError:
            workers = 0
        if workers < 1:
            raise NdcglabError(
                f"--dask {text!r}: local:N needs a positive number of workers. Fix: e.g. "
                "--dask local:2"
            )
        return "local", workers
    if not t or " " in t:
        raise NdcglabError(
            f"--dask {text!r} is not a scheduler address. Fix: e.g. --dask tcp://host:8786 or "
            "--dask local:2"
        )
    return t, None


@contextlib.contextmanager
def dask_client(
    address: str,
    *,
    memory_limit: str | None = None,
    timeout: float = 10.0,
    quiet: bool = False,
    command: str = "ndcglab",
) -> Iterator[Any]:
    """A ``distributed.Client`` for ``--dask ADDRESS``; closes what it started (the client, and
    for ``local:N`` the cluster) on exit."""
    target, n_workers = parse_dask_address(address)
    if memory_limit is not None and n_workers is None:
        raise NdcglabError(
            "--dask-memory-limit applies to a local cluster. Fix: use --dask local:N, or set "
            "the limit when starting the remote workers (dask worker --memory-limit)"
        )
    distributed = require("distributed")
    import logging

    for name in ("distributed", "distributed.worker", "distributed.nanny", "distributed.scheduler"):
        logging.getLogger(name).setLevel(logging.ERROR)
    cluster = None
    try:
        if n_workers is not None:
            # the workers' own output (LightGBM's C++ log lines) goes to stderr: stdout stays
            # the command's result (--format json)
            sys.stdout.flush()
            saved = os.dup(1)
            os.dup2(2, 1)
            try:
                cluster = distributed.LocalCluster(
                    n_workers=n_workers,
                    threads_per_worker=1,
                    processes=True,
                    memory_limit=memory_limit if memory_limit is not None else "auto",
                    dashboard_address=None,
                )
            except (ValueError, TypeError) as exc:
                raise NdcglabError(
                    f"cannot start a local Dask cluster ({exc}). Fix: check --dask-memory-limit "
                    "(e.g. 1GiB)"
                ) from None
            finally:
                os.dup2(saved, 1)
                os.close(saved)
            client = distributed.Client(cluster)
        else:
            try:
                client = distributed.Client(target, timeout=f"{timeout}s")
            except (OSError, TimeoutError) as exc:
                raise NdcglabError(
                    f"cannot reach the Dask scheduler at {target} within {timeout:g} s "
                    f"({type(exc).__name__}). Fix: start it (dask scheduler) and check the "
                    "address, or use --dask local:N"
                ) from None
        if not quiet:
            workers = len(client.scheduler_info()["workers"])
            where = f"a local cluster of {n_workers} processes" if cluster else target
            limit = f", {memory_limit} per worker" if memory_limit else ""
            print(f"{command}: on Dask, {where} ({workers} workers{limit})", file=sys.stderr)
        stop = threading.Event()
        bar = None
        if not quiet and sys.stderr.isatty():
            bar = threading.Thread(
                target=_progress, args=(client, stop, command), daemon=True, name="dask-progress"
            )
            bar.start()
        try:
            yield client
        finally:
            stop.set()
            if bar is not None:
                bar.join(timeout=2)
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


def _task_counts(dask_scheduler: Any) -> tuple[int, int]:
    """(finished, known) tasks on the scheduler (run there by ``client.run_on_scheduler``)."""
    states = [t.state for t in dask_scheduler.tasks.values()]
    return sum(s in ("memory", "erred") for s in states), len(states)


def _progress(client: Any, stop: threading.Event, command: str) -> None:
    """A tqdm bar on stderr of the cluster's tasks (finished / known), refreshed twice a second
    until ``stop`` is set; shown only when stderr is a terminal."""
    from tqdm.auto import tqdm

    with tqdm(desc=f"{command} (Dask tasks)", unit="task", file=sys.stderr, leave=False) as bar:
        while not stop.wait(0.5):
            try:
                done, total = client.run_on_scheduler(_task_counts)
            except Exception:  # the client is closing: no more progress to show
                return
            bar.total = max(total, done)
            bar.n = done
            bar.refresh()


def check_training_arguments(args: argparse.Namespace) -> None:
    """Refuse, before any cluster starts, options that boosting on Dask would not honour."""
    if getattr(args, "patience", None) is not None:
        raise NdcglabError(
            "--patience does not apply with --dask: boosting on Dask trains --rounds rounds, then "
            "keeps the best round on the validation set. Fix: drop --patience (set --rounds)"
        )


def fit_gbdt_dask_from_args(
    args: argparse.Namespace, client: Any, train: Any, valid: Any = None, *, loss: str | None = None
) -> Any:
    """Boosted trees on Dask as the parsed ``train``/``cv`` arguments say: a fixed number of
    rounds (``--rounds``), then the best round on ``valid`` (see
    :func:`ndcglab.gbdt.dask_train.train_gbdt_dask`); ``--patience`` does not apply."""
    from ..gbdt import DEFAULTS
    from ..gbdt.dask_train import train_gbdt_dask
    from ._gbdt import gbdt_options_from_args

    loss = loss or getattr(args, "loss", None) or "listnet"
    if isinstance(loss, list | tuple):
        if len(loss) != 1:
            raise NdcglabError("--model gbdt trains one loss at a time. Fix: give one --loss")
        loss = loss[0]
    opts = {**DEFAULTS, **gbdt_options_from_args(args)}
    ours = (
        "num_boost_round",
        "learning_rate",
        "num_leaves",
        "min_data_in_leaf",
        "hessian",
        "hess_floor",
        "constant_lists",
        "seed",
        "measure",
        "preset",
    )
    import logging

    # LightGBM's Dask layer prints its notes ("Finding random open ports ...") to stdout through
    # its logger: send them to Python logging (warnings reach stderr), keeping stdout the result
    require("lightgbm").register_logger(logging.getLogger("lightgbm"))
    kw = {k: opts[k] for k in ours if k in opts}
    skip = set(DEFAULTS) | set(ours)
    params = {k: v for k, v in opts.items() if k not in skip}
    return train_gbdt_dask(train, loss, client=client, valid=valid, params=params, **kw)
