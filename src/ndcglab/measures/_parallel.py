"""Running a numba kernel over all queries, on several threads when the data is large.

Every kernel of :mod:`ndcglab.measures` takes ``(*inputs, q0, q1, *outputs)`` and handles the
queries ``q0:q1``; :func:`run_kernel` splits the queries into disjoint ranges of about the same
number of documents and runs them on a shared thread pool (the kernels release the GIL).
"""

from __future__ import annotations

import _thread  # the lock only: ``threading`` costs start-up time (the command line's)
import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .._compat import kernel_threads

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["PARALLEL_MIN_DOCS", "n_threads", "run_kernel"]

#: below this many documents the kernels run on the calling thread only
PARALLEL_MIN_DOCS = 50_000

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = _thread.allocate_lock()  # what threading.Lock() returns


def n_threads() -> int:
    """Threads used by the kernels: ``NDCGLAB_NUM_THREADS`` or the CPUs this process may use
    (:func:`ndcglab._compat.kernel_threads`)."""
    return kernel_threads()


def run_kernel(kernel: Callable[..., None], bnd: np.ndarray, *args: Any) -> None:
    """Call ``kernel(*inputs, q0, q1, *outputs)`` over disjoint query ranges on several threads.

    ``args`` ends with the tuple of output arrays, preceded by the inputs; ``bnd`` are the query
    boundaries (``Q + 1`` offsets) used to balance the ranges by documents."""
    *inputs, outputs = args
    nq = len(bnd) - 1
    total = int(bnd[-1])
    t = n_threads()
    if t == 1 or total < PARALLEL_MIN_DOCS or nq < 2 * t:
        kernel(*inputs, 0, nq, *outputs)
        return
    from concurrent.futures import ThreadPoolExecutor  # here: it imports logging (start-up time)

    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL._max_workers < t:
            _POOL = ThreadPoolExecutor(max_workers=t, thread_name_prefix="ndcglab")
        pool = _POOL
    cuts = np.searchsorted(bnd, np.linspace(0, total, 4 * t + 1)[1:-1]).tolist()
    edges = sorted({0, nq, *[min(max(c, 0), nq) for c in cuts]})
    futures = [
        pool.submit(kernel, *inputs, q0, q1, *outputs)
        for q0, q1 in itertools.pairwise(edges)
        if q1 > q0
    ]
    for f in futures:
        f.result()
