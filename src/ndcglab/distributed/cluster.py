"""Reaching a Dask cluster: the address grammar, a checked connection and a progress bar.

An address is a scheduler's (``tcp://host:8786``, ``tls://host:8786``, ``host:8786``) or
``local:N`` for a cluster of ``N`` worker processes on this machine (one thread each, at most one
per core), started by :func:`dask_client` and closed after it. ``memory_limit`` (``1GiB``,
``500MB``; with ``local:N`` only) is each local worker's limit, enforced by Dask (spill to disk,
then restart a worker past it).

Connecting to a scheduler gives up after ``timeout`` seconds, the whole handshake included: the
peer must answer with a Dask handshake frame within that time (a peer that accepts the TCP
connection and says nothing, or sends something that is not Dask's, is refused at once rather
than waited on). Errors are :class:`~ndcglab.errors.NdcglabError`: the ``distributed`` extra
missing, a malformed address, an unreachable scheduler or a peer that is not one.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from .._compat import require
from ..errors import NdcglabError, SpecError

__all__ = [
    "LOCAL",
    "MIN_WORKER_MEMORY",
    "SCHEMES",
    "check_memory_limit",
    "check_timeout",
    "dask_client",
    "parse_address",
]

#: the prefix of a local cluster's address: ``local:N``
LOCAL = "local"
#: the transport schemes of a scheduler address Dask understands
SCHEMES = ("tcp", "tls", "inproc", "ucx", "ws", "wss")
#: the smallest memory limit of a local worker that trains (bytes): a worker process holding
#: Python, Dask, NumPy, ndcglab, LightGBM and torch (the losses) uses about 400 MiB before any
#: data (measured: 62 MiB idle, 208 MiB with LightGBM, 394 MiB with torch too), and Dask pauses
#: a worker at 80 % of its limit and restarts it at 95 %: below 512 MiB (394 / 0.8 = 492) it
#: would pause or be killed before its first task, and the command would wait on it or fail
MIN_WORKER_MEMORY = 512 * 2**20
#: the same for a worker that only evaluates (no LightGBM, no torch: 66 MiB measured; / 0.8,
#: rounded up)
MIN_EVALUATE_MEMORY = 128 * 2**20
#: the largest first frame a scheduler's handshake may announce (bytes)
_HANDSHAKE_LIMIT = 64 * 2**20


def parse_address(text: str, *, cores: int | None = None) -> tuple[str, int | None]:
    """``("local", N)`` for ``local:N`` (``local`` alone: 2 workers), else ``(address, None)``.

    Refused with the fix: an empty address, a blank inside it, an unknown scheme, the dashboard's
    ``http(s)://`` URL, a port that is not a number, ``local:N`` with N < 1 or more workers than
    ``cores`` (default: this machine's).
    """
    t = str(text).strip()
    if t.lower().startswith(LOCAL) and t[len(LOCAL) :][:1] in ("", ":"):
        n = t[len(LOCAL) + 1 :]
        try:
            workers = int(n) if n else 2
        except ValueError:
            workers = 0
        if workers < 1:
            raise NdcglabError(
                f"dask address {text!r}: local:N needs a positive number of workers. Fix: e.g. "
                "local:2"
            )
        cores = cores if cores is not None else (os.cpu_count() or 1)
        if workers > cores:
            raise NdcglabError(
                f"dask address {text!r} asks for {workers} local workers but this machine has "
                f"{cores} cores. Fix: local:{cores} or fewer (one worker process per core)"
            )
        return LOCAL, workers
    if not t or any(c.isspace() for c in t):
        raise NdcglabError(
            f"dask address {text!r} is not a scheduler address. Fix: e.g. tcp://host:8786 or "
            "local:2"
        )
    scheme, sep, rest = t.partition("://")
    if sep:
        if scheme.lower() in ("http", "https"):
            raise NdcglabError(
                f"dask address {text!r} is a web address (the dashboard's); the scheduler "
                f"listens elsewhere. Fix: tcp://{_host_of(rest)}:8786 (the address `dask "
                "scheduler` prints), or local:2"
            )
        if scheme.lower() not in SCHEMES:
            raise NdcglabError(
                f"dask address {text!r} has the unknown scheme {scheme!r}; known: "
                f"{', '.join(SCHEMES)}. Fix: e.g. tcp://host:8786"
            )
    else:
        rest = t
    host, colon, port = rest.rpartition(":")
    if scheme.lower() in ("tcp", "tls") or not sep:
        if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise NdcglabError(
                f"dask address {text!r} needs a host and a port number. Fix: e.g. tcp://host:8786"
            )
    return t, None


def _host_of(rest: str) -> str:
    host = rest.split("/")[0]
    return host.rsplit(":", 1)[0] if ":" in host else host


def check_timeout(
    timeout: float, what: str = "the Dask connection timeout", example: str = "10"
) -> float:
    """``timeout`` as a float if it is finite and positive, else a
    :class:`~ndcglab.errors.SpecError` naming ``what`` with the fix (``example``)."""
    try:
        value = float(timeout)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise SpecError(
            f"{what} must be a positive number of seconds, got {timeout!r}. Fix: e.g. {example}"
        )
    return value


def _probe(target: str, timeout: float) -> None:
    """Check that a ``tcp://`` (or scheme-less) scheduler answers with a Dask handshake frame
    within ``timeout`` seconds; other schemes are left to Dask."""
    scheme, sep, rest = target.partition("://")
    if sep and scheme.lower() != "tcp":
        return
    host, _, port = (rest if sep else target).rpartition(":")
    host = host.strip("[]")
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as sock:
            head = b""
            while len(head) < 8:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                sock.settimeout(left)
                chunk = sock.recv(8 - len(head))
                if not chunk:
                    raise ConnectionError("closed")
                head += chunk
    except TimeoutError:
        raise NdcglabError(
            f"{target} accepted the connection but sent no Dask handshake within {timeout:g} s: "
            "it is not a Dask scheduler. Fix: give the scheduler's address (dask scheduler "
            "prints it, usually port 8786), or local:N"
        ) from None
    except OSError as exc:
        raise NdcglabError(
            f"cannot reach the Dask scheduler at {target} within {timeout:g} s "
            f"({type(exc).__name__}). Fix: start it (dask scheduler) and check the address, or "
            "use local:N"
        ) from None
    (size,) = struct.unpack("<Q", head)
    if not 0 < size <= _HANDSHAKE_LIMIT:
        raise NdcglabError(
            f"{target} answered, but not with a Dask handshake: it is not a Dask scheduler. Fix: "
            "give the scheduler's address (dask scheduler prints it, usually port 8786), or "
            "local:N"
        )


def _mib(n: float) -> str:
    return f"{n / 2**20:.0f} MiB" if n >= 2**20 else f"{n:.0f} bytes"


def check_memory_limit(text: str | None, *, minimum: int = MIN_WORKER_MEMORY) -> int | None:
    """The bytes of a local worker's memory limit ``text`` as Dask reads it (``1GiB``,
    ``500MB``, ``2e9`` bytes; a plain number in (0, 1] a share of the machine's memory; ``0``
    or ``none``: no limit, None), checked: a limit Dask cannot read, or one below ``minimum``
    (:data:`MIN_WORKER_MEMORY`: what a worker needs before any data; below it the worker is
    paused or killed and the command would wait), raises :class:`NdcglabError` naming the
    minimum."""
    if text is None:
        return None
    raw = str(text).strip()
    if raw.lower() in ("0", "none", "auto"):
        return None
    from dask.utils import parse_bytes

    try:
        number = float(raw)
    except ValueError:
        number = math.nan
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        value = number * total if 0 < number <= 1 else float(parse_bytes(raw))
    except (ValueError, TypeError):
        raise NdcglabError(
            f"--dask-memory-limit {raw}: not a size. Fix: write a size such as 1GiB or 500MB "
            f"(at least {_mib(minimum)} per worker)"
        ) from None
    if not value >= minimum:
        raise NdcglabError(
            f"--dask-memory-limit {raw} ({_mib(value)}) is below what a worker needs: at least "
            f"{_mib(minimum)} per worker (Python, Dask and the libraries it runs, before any "
            "data; Dask pauses a worker at 80 % of its limit and restarts it at 95 %). Fix: give "
            f"--dask-memory-limit {_mib(minimum).replace(' ', '')} or more, or leave it out"
        )
    return int(value)


@contextlib.contextmanager
def dask_client(
    address: str,
    *,
    memory_limit: str | None = None,
    timeout: float = 10.0,
    quiet: bool = False,
    label: str = "ndcglab",
    min_memory: int = MIN_WORKER_MEMORY,
) -> Iterator[Any]:
    """A ``distributed.Client`` for ``address`` (module docstring); closes what it started (the
    client, and for ``local:N`` the cluster) on exit. ``label`` starts the lines printed on
    stderr (unless ``quiet``): where the work runs, and a progress bar of the cluster's tasks
    when stderr is a terminal. A local worker's ``memory_limit`` below ``min_memory`` is
    refused (:func:`check_memory_limit`)."""
    target, n_workers = parse_address(address)
    timeout = check_timeout(timeout)
    if memory_limit is not None and n_workers is None:
        raise NdcglabError(
            "a memory limit applies to a local cluster. Fix: use local:N, or set the limit when "
            "starting the remote workers (dask worker --memory-limit)"
        )
    check_memory_limit(memory_limit, minimum=min_memory)
    distributed = require("distributed")
    import logging

    for name in ("distributed", "distributed.worker", "distributed.nanny", "distributed.scheduler"):
        logging.getLogger(name).setLevel(logging.ERROR)
    cluster = None
    try:
        if n_workers is not None:
            cluster = _local_cluster(distributed, n_workers, memory_limit)
            client = distributed.Client(cluster)
        else:
            _probe(target, timeout)
            try:
                client = distributed.Client(target, timeout=f"{timeout}s")
            except (OSError, TimeoutError) as exc:
                raise NdcglabError(
                    f"cannot reach the Dask scheduler at {target} within {timeout:g} s "
                    f"({type(exc).__name__}). Fix: start it (dask scheduler) and check the "
                    "address, or use local:N"
                ) from None
        if not quiet:
            workers = len(client.scheduler_info()["workers"])
            where = f"a local cluster of {n_workers} processes" if cluster else target
            limit = f", {memory_limit} per worker" if memory_limit else ""
            print(f"{label}: on Dask, {where} ({workers} workers{limit})", file=sys.stderr)
        stop = threading.Event()
        bar = None
        if not quiet and sys.stderr.isatty():
            bar = threading.Thread(
                target=_progress, args=(client, stop, label), daemon=True, name="dask-progress"
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


def _local_cluster(distributed: Any, n_workers: int, memory_limit: str | None) -> Any:
    """A ``LocalCluster`` of ``n_workers`` single-thread processes. The workers' standard
    output (the engines' log lines: LightGBM's ``[LightGBM] [Info] ...``) goes to
    ``os.devnull``, so stdout stays the command's result; their standard error reaches ours
    through :func:`_filtered_stderr`, without the engines' notes (:data:`ENGINE_NOTES`: XGBoost's
    "Task ... got rank") and the heartbeat traceback of a worker that outlived the scheduler
    by a moment at shutdown, so Dask's own warnings stay. Their errors reach the client as
    exceptions."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved, saved_err = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    pipe = _filtered_stderr(saved_err)
    os.dup2(pipe, 2)  # the workers started now inherit the pipe as their stderr
    os.close(pipe)
    try:
        return distributed.LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            memory_limit=memory_limit if memory_limit is not None else "auto",
            dashboard_address=None,
        )
    except (ValueError, TypeError) as exc:
        raise NdcglabError(
            f"cannot start a local Dask cluster ({exc}). Fix: check the memory limit (e.g. 1GiB)"
        ) from None
    finally:
        os.dup2(saved, 1)
        os.dup2(saved_err, 2)
        os.close(saved)
        os.close(saved_err)


#: lines the engines print on Dask workers that say nothing to the user (XGBoost's collective:
#: "[12:00:00] Task [xgboost.dask-0]:tcp://... got rank 0"; LightGBM's network set-up)
ENGINE_NOTES = re.compile(rb"^(\[[\d:]+\] Task .* got rank \d+|\[LightGBM\] \[Info\] .*)\s*$")


#: a worker's log record of a heartbeat that met the scheduler's connection closing (the race of
#: a local cluster's shutdown: the scheduler stops while a worker's heartbeat is on its way),
#: whose traceback ends with the line :data:`_HEARTBEAT_END` matches
_HEARTBEAT = re.compile(
    rb"^[\d\- :,.]+ - distributed\.worker - ERROR - Failed to communicate with scheduler "
    rb"during heartbeat\.\s*$"
)
_HEARTBEAT_END = re.compile(rb"^distributed\.comm\.core\.CommClosedError: ")
_LOG_RECORD = re.compile(rb"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[,.]\d+ - ")


def _worker_lines(lines: list[bytes], state: dict[str, bool]) -> list[bytes]:
    """The lines of the workers' standard error to show: not the engines' notes
    (:data:`ENGINE_NOTES`), nor a heartbeat record of the scheduler's connection closing with
    its traceback (:data:`_HEARTBEAT`, through a line :data:`_HEARTBEAT_END` matches, or up to
    the next log record). ``state["skip"]``: within such a traceback (kept between calls)."""
    shown = []
    for line in lines:
        if state.get("skip"):
            if _HEARTBEAT_END.match(line):
                state["skip"] = False
                continue
            if not _LOG_RECORD.match(line):
                continue
            state["skip"] = False
        if _HEARTBEAT.match(line):
            state["skip"] = True
        elif not ENGINE_NOTES.match(line):
            shown.append(line)
    return shown


def _filtered_stderr(target: int) -> int:
    """The write end of a pipe whose lines a daemon thread copies to a duplicate of file
    descriptor ``target``, those of :func:`_worker_lines` only (a partial line that cannot be
    a note or a log record, a progress bar's, passes at once); the thread ends when every
    process holding the write end has closed it."""
    read_end, write_end = os.pipe()
    out = os.dup(target)

    def copy() -> None:
        pending = b""
        state: dict[str, bool] = {}
        try:
            while chunk := os.read(read_end, 65536):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                text = b"".join(line + b"\n" for line in _worker_lines(lines, state))
                held = pending.startswith(b"[") or pending[:1].isdigit() or state.get("skip")
                if pending and not held:
                    text, pending = text + pending, b""
                if text:
                    os.write(out, text)
            if pending and _worker_lines([pending], state):
                os.write(out, pending)
        except OSError:  # pragma: no cover - our stderr went away
            pass
        finally:
            os.close(read_end)
            os.close(out)

    threading.Thread(target=copy, daemon=True, name="ndcglab-worker-stderr").start()
    return write_end


def _task_counts(dask_scheduler: Any) -> tuple[int, int]:
    """(finished, known) tasks on the scheduler (run there by ``client.run_on_scheduler``)."""
    states = [t.state for t in dask_scheduler.tasks.values()]
    return sum(s in ("memory", "erred") for s in states), len(states)


def _progress(client: Any, stop: threading.Event, label: str) -> None:
    """A tqdm bar on stderr of the cluster's tasks (finished / known), refreshed twice a second
    until ``stop`` is set."""
    from tqdm.auto import tqdm

    with tqdm(desc=f"{label} (Dask tasks)", unit="task", file=sys.stderr, leave=False) as bar:
        while not stop.wait(0.5):
            try:
                done, total = client.run_on_scheduler(_task_counts)
            except Exception:  # the client is closing: no more progress to show
                return
            bar.total = max(total, done)
            bar.n = done
            bar.refresh()
