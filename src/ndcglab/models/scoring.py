"""Scoring a raw feature matrix with a trained torch model, block by block, with the numbers of
the two-step path (normalise the whole matrix, then :meth:`RankModel.predict
<ndcglab.models.RankModel.predict>`) bit for bit.

:meth:`ndcglab.models.TrainedModel.predict` (and so ``ndcglab predict``, the estimator's
``predict`` and cross-validation) comes here, and so does the streamed scoring of a LETOR file
(:func:`ndcglab.models.io.predict_file`), which hands the rows over in pieces as they are read.

* **Row-wise models** (linear, AdaRank, MLP, any kind that is not
  :attr:`~ndcglab.models.RankModel.listwise`): the rows are cut into calls of a fixed number
  of rows counted from the first row of the matrix, whatever pieces they arrive in -
  :data:`AFFINE_ROWS` (4,096) for a model that declares :meth:`RankModel.linear_form
  <ndcglab.models.RankModel.linear_form>` (the linear model, AdaRank), :data:`ROWWISE_ROWS`
  (16,384) for the others with float32 parameters on the CPU, :data:`BLOCK_ROWS` (262,144, the
  block of :meth:`RankModel.predict`) for the others on another device or in another dtype;
  only the last call is shorter. Each call's rows are normalised into one reused float32 buffer
  (``zscore`` and ``none`` by Numba kernels that give the normaliser's float32 values bit for
  bit, the others by the normaliser itself) and the model's own forward pass runs on the tensor
  sharing the buffer's memory (inference mode). The two-step path ran the same forward pass on
  the same float32 values in calls of 262,144 rows. The calls are smaller, so that the buffer
  and the layers' intermediate values stay in the processor's caches and the matrix is read
  once:
  torch's matrix products give a row the same number in any call whose row count is a multiple
  of 4 (only the last rows of a call of another length take a different path), so calls that
  divide 262,144, with the last call ending where the two-step path's last call ended, give
  every row the same number (``tests/models/test_scoring.py`` checks this against the two-step
  path for call lengths of every remainder, for the linear model, AdaRank and MLPs of several
  widths). Under ``query_minmax``, which needs whole queries, the rows are normalised query by
  query first, then scored in the same calls.
* **List-aware models** (the attention kind): the rows are normalised, then scored by the
  model's own :meth:`RankModel.predict <ndcglab.models.RankModel.predict>` in the runs of whole
  lists it cuts (:meth:`RankModel.predict_chunks <ndcglab.models.RankModel.predict_chunks>`);
  streamed, a run is scored once the next list shows where it ends, so the runs are the same.

Scores are float64 ``(N,)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .._compat import kernel_threads

if TYPE_CHECKING:
    import torch

    from ..data.normalize import Normalizer
    from .base import RankModel

__all__ = ["AFFINE_ROWS", "BLOCK_ROWS", "ROWWISE_ROWS", "BlockScorer", "score_features"]

#: rows per call of the forward pass of a model without a linear form (the block of
#: :meth:`RankModel.predict`)
BLOCK_ROWS = 262_144
#: rows per call of an affine model's forward pass (a divisor of :data:`BLOCK_ROWS`)
AFFINE_ROWS = 4_096
#: rows per call of the forward pass of another row-wise model with float32 parameters on the
#: CPU (a divisor of :data:`BLOCK_ROWS`): a 136-64-32-1 MLP's intermediate values stay in the
#: processor's caches (calls of 262,144 rows took twice as long)
ROWWISE_ROWS = 16_384
#: rows per piece of the normalisation kernels' row loops, and the fewest rows worth a second
#: thread
_PIECE_ROWS = 8_192
_THREADED_ROWS = 50_000
#: the fewest calls of :data:`AFFINE_ROWS` rows (so many rows) worth a thread of their own
_CALLS_PER_THREAD = 16


def _run_rows(kernel: Callable[..., None], n: int, *args: Any) -> None:
    """``kernel(*args, bnd, q0, q1, out)`` over pieces of :data:`_PIECE_ROWS` rows, the pieces
    split between :func:`ndcglab._compat.kernel_threads` threads (one below
    :data:`_THREADED_ROWS` rows)."""
    *inputs, out = args
    bnd = np.append(np.arange(0, n, _PIECE_ROWS, dtype=np.int64), np.int64(n))
    pieces = len(bnd) - 1
    if n < _THREADED_ROWS or (threads := min(kernel_threads(), pieces)) <= 1:
        kernel(*inputs, bnd, 0, pieces, out)
        return
    from concurrent.futures import ThreadPoolExecutor

    edges = np.linspace(0, pieces, threads + 1).round().astype(int).tolist()
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="ndcglab-score") as pool:
        futures = [
            pool.submit(kernel, *inputs, bnd, q0, q1, out)
            for q0, q1 in itertools.pairwise(edges)
            if q1 > q0
        ]
        for f in futures:
            f.result()


class BlockScorer:
    """The scores of the rows of one matrix handed over in consecutive pieces.

    :meth:`feed` takes the next raw float32 rows (with their query offsets, whole queries, when
    the normalisation or the model needs them) and returns the scores of the rows it could
    score so far, in order; :meth:`finish` returns the rest. Concatenated, they are
    :func:`score_features` of the whole matrix, bit for bit, whatever the pieces (see the module
    docstring). The model is in evaluation mode until :meth:`close` (or the end of a ``with``).
    """

    def __init__(self, model: RankModel, normalizer: Normalizer) -> None:
        p: torch.Tensor | None = next(model.parameters(), None)
        if p is None:
            p = next(model.buffers())
        self.model = model
        self.normalizer = normalizer
        self.device, self.dtype = p.device, p.dtype
        import torch

        self._direct = p.device.type == "cpu" and p.dtype == torch.float32
        self._f32, self._f64 = torch.float32, torch.float64
        self.listwise = bool(model.listwise)
        if model.linear_form() is not None:
            self.step = AFFINE_ROWS
        else:
            self.step = ROWWISE_ROWS if self._direct else BLOCK_ROWS
        #: whether rows are normalised query by query as they arrive (then scored as they are)
        self.whole_queries = self.listwise or normalizer.method == "query_minmax"
        #: rows not yet scored (fewer than 1 + :attr:`_hold` calls, in a buffer of
        #: 1 + 2 :attr:`_hold` calls; listwise: a run)
        self._pending: np.ndarray | None = None
        self._offset = 0  # rows handed to calls so far (row-wise models)
        #: whole calls held back until the end of the matrix shows (1 in calls of
        #: :data:`ROWWISE_ROWS`, where the last, shorter call joins the one before it)
        self._hold = int(self.step == ROWWISE_ROWS)
        self._pending_n = 0
        self._pending_bnd = np.zeros(1, dtype=np.int64)
        self._buf: np.ndarray | None = None
        self._buf_t: torch.Tensor | None = None  # the tensor sharing the buffer's memory
        #: the normalisation's kernel and its inputs after the rows (at the first call)
        self._kernel: Callable[..., None] | None = None
        self._inputs: tuple[np.ndarray, ...] | None = None
        self._one = np.zeros(2, dtype=np.int64)  # the row offsets of a call in one piece
        self._was_training = model.training
        model.eval()

    def __enter__(self) -> BlockScorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Put the model back in the mode it was in."""
        self.model.train(self._was_training)

    # ---------------------------------------------------------------- row-wise models
    def _normalised(self, x: np.ndarray) -> np.ndarray:
        """The float32 normalised rows of ``x`` (at most :attr:`step`), in the reused buffer."""
        n, f = x.shape
        if self._buf is None or self._buf.shape[1] != f or len(self._buf) < n:
            import torch

            self._buf = np.empty((n, f), dtype=np.float32)
            self._buf_t = torch.from_numpy(self._buf)
        z = self._buf[:n]
        if self._inputs is None:
            self._kernel, self._inputs = self._kernel_and_inputs()
        kernel = self._kernel
        if kernel is None:
            self.normalizer.transform(x, out=z)
        elif n >= _THREADED_ROWS:
            _run_rows(kernel, n, x, *self._inputs, z)
        else:
            self._one[1] = n
            kernel(x, *self._inputs, self._one, 0, 1, z)
        return z

    def _kernel_and_inputs(self) -> tuple[Callable[..., None] | None, tuple[np.ndarray, ...]]:
        """The Numba kernel of the normalisation and its inputs after the rows (``zscore``:
        the means and the float32 reciprocals of the scales; ``none``: none); ``None`` for
        the others (the normaliser's own ``transform``)."""
        norm = self.normalizer
        if norm.method == "zscore":
            from ._score_kernels import zscore_rows_kernel

            assert norm.mean is not None and norm.scale is not None
            return zscore_rows_kernel, (norm.mean, (1.0 / norm.scale).astype(np.float32))
        if norm.method == "none":
            from ._score_kernels import finite_rows_kernel

            return finite_rows_kernel, ()
        return None, ()

    def _forward(self, t: torch.Tensor, out: np.ndarray) -> None:
        """``out`` = the model's forward pass on the float32 rows ``t`` (one call; in
        inference mode)."""
        if not self._direct:
            t = t.to(device=self.device, dtype=self.dtype)
        scores = self.model(t)
        if scores.dtype not in (self._f32, self._f64):  # e.g. bfloat16: no NumPy
            scores = scores.double()
        out[:] = scores.cpu().numpy()  # float32 -> float64 exactly, as .double() did

    def _score_rows(self, rows: np.ndarray, out: np.ndarray) -> None:
        """``out`` = the scores of the rows ``rows`` (one call; in inference mode): the rows
        normalised into the buffer (unless already normalised, query by query), the forward
        pass on the tensor sharing its memory."""
        if self.whole_queries:
            import torch

            self._forward(torch.from_numpy(rows), out)
            return
        self._normalised(rows)
        assert self._buf_t is not None
        self._forward(self._buf_t[: len(rows)], out)

    def _bounds(self, n: int, final: bool) -> list[int]:
        """The offsets of the calls of the next ``n`` rows (from :attr:`_offset`, a call's
        start): calls of :attr:`step` rows. With ``final`` (the matrix ends with these rows)
        and :attr:`_hold`, the shorter rest joins the call before it when both lie in the same
        block of :data:`BLOCK_ROWS` rows (the two-step path's call), so that no call but a whole
        two-step call is shorter than :attr:`step`: torch's matrix-matrix product takes another
        path for a call of a few rows than for the same rows at the end of a longer call (its
        matrix-vector product, that of an affine model, does not)."""
        step = self.step
        bounds = list(range(0, n, step))
        last = bounds[-1] if bounds else 0
        if self._hold and final and n % step and last and (self._offset + last) % BLOCK_ROWS:
            bounds.pop()
        bounds.append(n)
        return bounds

    def _run_calls(
        self, x: np.ndarray, out: np.ndarray, bounds: list[int], threads: int | None = None
    ) -> None:
        """``out[a:b]`` = the scores of the rows ``x[a:b]`` for each call ``a, b`` of
        ``bounds``, in inference mode (torch on ``threads`` intra-op threads: ``None``, as
        it is)."""
        import torch

        from .._compat import torch_threads

        with torch_threads(threads), torch.inference_mode():
            for a, b in itertools.pairwise(bounds):
                self._score_rows(x[a:b], out[a:b])

    def _calls(self, x: np.ndarray, out: np.ndarray, final: bool) -> None:
        """``out`` = the scores of the rows ``x`` (starting at :attr:`_offset`), in the calls
        of :meth:`_bounds`. Calls of :data:`AFFINE_ROWS` or :data:`ROWWISE_ROWS` rows go to
        :func:`~ndcglab._compat.kernel_threads` threads in runs of whole calls (each thread
        with its own buffer: the Numba kernels and torch release the GIL), torch on one
        intra-op thread meanwhile (its own threads would wait on each other at every small
        call, many times slower when another process takes a core); the rows of each call are
        the same, so are the numbers."""
        bounds = self._bounds(len(x), final)
        self._offset += len(x)
        calls = len(bounds) - 1
        threads = 1
        if self.step in (AFFINE_ROWS, ROWWISE_ROWS):
            rows_per_thread = _CALLS_PER_THREAD * AFFINE_ROWS
            threads = min(kernel_threads(), calls, len(x) // rows_per_thread)
        if threads <= 1:
            self._run_calls(x, out, bounds)
            return
        from concurrent.futures import ThreadPoolExecutor

        from .._compat import torch_threads

        cuts = [round(calls * t / threads) for t in range(threads + 1)]
        workers = [BlockScorer(self.model, self.normalizer) for _ in range(threads)]
        with (
            torch_threads(1),
            ThreadPoolExecutor(max_workers=threads, thread_name_prefix="ndcglab-score") as pool,
        ):
            futures = [
                pool.submit(w._run_calls, x, out, bounds[c0 : c1 + 1], 1)
                for w, (c0, c1) in zip(workers, itertools.pairwise(cuts), strict=True)
            ]
            for f in futures:
                f.result()

    def _rowwise(self, x: np.ndarray, last: bool) -> np.ndarray:
        """The scores of the rows that can be scored now: every whole call (but the last one
        when :attr:`_hold`: it waits with the rows after it until the next piece shows whether
        the matrix ends there, :meth:`_bounds`); all with ``last``."""
        step, have, hold = self.step, self._pending_n, self._hold
        total = have + len(x)
        ready = total if last else max(0, total // step - hold) * step
        out = np.empty(ready, dtype=np.float64)
        if self._pending is None or self._pending.shape[1] != x.shape[1]:
            self._pending = np.empty(((1 + 2 * hold) * step, x.shape[1]), dtype=np.float32)
        done = 0
        if have and have >= ready > 0:  # only waiting rows are scored now; the others wait on
            self._calls(self._pending[:ready], out, final=last)
            waiting = np.concatenate([self._pending[ready:have], x])
            self._pending[: len(waiting)] = waiting
            self._pending_n = len(waiting)
            return out
        if have and ready:  # the waiting rows first, with the next rows up to whole calls
            done = min(ready, -(-have // step) * step)
            if hold and last and ready - done < step:  # the rest joins them: one final span
                done = ready
            k = done - have
            self._pending[have:done] = x[:k]
            self._calls(self._pending[:done], out[:done], final=last and done == ready)
            x, self._pending_n = x[k:], 0
        self._calls(x[: ready - done], out[done:], final=last)
        rest = x[ready - done :]
        if len(rest):
            self._pending[self._pending_n : self._pending_n + len(rest)] = rest
            self._pending_n += len(rest)
        return out

    # ---------------------------------------------------------------- list-aware models
    def _lists(
        self, x: np.ndarray | None, boundaries: np.ndarray | None, *, last: bool
    ) -> np.ndarray:
        if x is not None and len(x):
            bnd = np.asarray(boundaries, dtype=np.int64)
            if self._pending is None or self._pending_n == 0:
                rows, offsets = x, bnd
            else:
                rows = np.concatenate([self._pending[: self._pending_n], x])
                offsets = np.concatenate([self._pending_bnd[:-1], bnd + self._pending_n])
        elif self._pending is None or self._pending_n == 0:
            return np.zeros(0, dtype=np.float64)
        else:
            rows, offsets = self._pending[: self._pending_n], self._pending_bnd
        runs = list(self.model.predict_chunks(len(rows), offsets, BLOCK_ROWS))
        keep = 0 if last else 1  # the last run may grow with the next lists
        scored = runs[: len(runs) - keep]
        end = scored[-1][1] if scored else 0
        out = np.empty(end, dtype=np.float64)
        for lo, hi, local in scored:
            out[lo:hi] = self.model.predict(rows[lo:hi], boundaries=local)
        self._pending = rows[end:]
        self._pending_n = len(rows) - end
        self._pending_bnd = offsets[np.searchsorted(offsets, end) :] - end
        return out

    # ---------------------------------------------------------------- both
    def feed(
        self, x: np.ndarray, boundaries: np.ndarray | None = None, *, last: bool = False
    ) -> np.ndarray:
        """The next raw rows ``x`` (``(n, F)`` float32, C order) and their query offsets
        (``(q + 1,)``, needed under ``query_minmax`` and by a list-aware model; the pieces then
        hold whole queries); returns the float64 scores of the rows scored now, all of them
        with ``last=True`` (the last piece: :meth:`finish` is then not needed)."""
        if self.whole_queries and len(x):
            x = self.normalizer.transform(x, boundaries)
        if self.listwise:
            return self._lists(x, boundaries, last=last)
        return self._rowwise(x, last)

    def finish(self) -> np.ndarray:
        """The scores of the rows still waiting (the last, shorter call)."""
        if self.listwise:
            return self._lists(None, None, last=True)
        n, self._pending_n = self._pending_n, 0
        out = np.empty(n, dtype=np.float64)
        if n:
            assert self._pending is not None
            self._calls(self._pending[:n], out, final=True)
        return out


def score_features(
    model: RankModel,
    normalizer: Normalizer,
    features: np.ndarray,
    boundaries: np.ndarray | None = None,
) -> np.ndarray:
    """Scores ``(N,)`` float64 of the raw ``(N, F)`` ``features`` under ``normalizer`` then
    ``model`` (see the module docstring); ``boundaries`` (query offsets) are needed by
    ``query_minmax`` and by a list-aware model (``None``: all rows are one list)."""
    x = np.ascontiguousarray(features, dtype=np.float32)
    if x.ndim != 2:
        from ..errors import SpecError

        raise SpecError(f"features must be 2-D (documents, features), got shape {x.shape}")
    model.check_features(x.shape[1])
    if normalizer.method != "query_minmax":
        normalizer.transform(x[:0])  # the normaliser's own checks (its feature count)
    if len(x) == 0:
        return np.zeros(0, dtype=np.float64)
    if model.listwise:  # whole lists at a time: the model's own list-aware predict
        return model.predict(normalizer.transform(x, boundaries), boundaries=boundaries)
    with BlockScorer(model, normalizer) as scorer:
        return scorer.feed(x, boundaries, last=True)
