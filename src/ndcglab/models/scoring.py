"""Scoring a raw feature matrix with a trained torch model at the speed of a matrix product.

:meth:`ndcglab.models.TrainedModel.predict` (and so ``ndcglab predict``, the estimator's
``predict`` and cross-validation) comes here. Two paths, chosen by what the model declares:

* **Affine models** (:meth:`RankModel.linear_form <ndcglab.models.RankModel.linear_form>` gives
  ``(w, b)``: the linear model, AdaRank) under the ``none`` or ``zscore`` normalisation: the
  normalisation is folded into the weights, ``<w, (x − μ) ⊙ s> + b = <w ⊙ s, x> + (b − <w ⊙ s,
  μ>)`` with ``s`` the float32 reciprocal of the scale that the normaliser multiplies by, and the
  raw float32 rows are scored in one pass (a Numba kernel, products and sums in float64, on
  ``NDCGLAB_NUM_THREADS`` threads, default one per CPU). No normalised copy of the matrix is
  made. A row with a missing (NaN) or infinite feature gets a non-finite sum there; those rows
  (and only they) are scored again by the two-step path below, where the normaliser sets such a
  value to 0.
* **Every other model** (MLP, and any kind that declares no linear form): the rows go through in
  blocks of :data:`BLOCK_ROWS`; each block is normalised (``zscore`` by a Numba kernel that gives
  the normaliser's float32 values bit for bit, the others by the normaliser itself) into one
  reused float32 buffer, and the model's own forward pass runs on it (a bare ``torch`` call in
  inference mode, on the tensor sharing the buffer's memory). ``query_minmax`` needs whole
  queries: the matrix is normalised at once, as before, then scored in the same blocks.

Scores are float64 ``(N,)``. Against the two-step path (normalise the whole matrix, then
:meth:`RankModel.predict <ndcglab.models.RankModel.predict>`) the affine path differs by float32
rounding only (it is the more precise of the two: no float32 normalised value is formed); the
block path gives the same numbers bit for bit (the same float32 values through the same forward
pass, in the same blocks).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .._compat import kernel_threads

if TYPE_CHECKING:
    from ..data.normalize import Normalizer
    from .base import RankModel

__all__ = ["BLOCK_ROWS", "fold_normalization", "score_features"]

#: rows per block of the forward pass (the block size of :meth:`RankModel.predict`)
BLOCK_ROWS = 262_144
#: rows per piece of the kernels' row loops, and the fewest rows worth a second thread
_PIECE_ROWS = 8_192
_THREADED_ROWS = 50_000


def fold_normalization(
    normalizer: Normalizer, weight: np.ndarray, bias: float
) -> tuple[np.ndarray, float] | None:
    """``(w', b')`` with ``<w', x> + b'`` = ``<w, normalise(x)> + b`` for every finite row
    ``x`` (float64), or ``None`` when the normalisation is not one affine map of a row
    (``query_minmax`` depends on the row's query)."""
    w = np.asarray(weight, dtype=np.float64)
    if normalizer.method == "none":
        return w.copy(), float(bias)
    if normalizer.method != "zscore" or normalizer.mean is None or normalizer.scale is None:
        return None
    # the normaliser multiplies by the float32 reciprocal of the scale: fold that same number
    inv = (1.0 / normalizer.scale).astype(np.float32).astype(np.float64)
    folded = w * inv
    return folded, float(bias) - float(np.dot(folded, normalizer.mean))


def _threads() -> int:
    """``NDCGLAB_NUM_THREADS``, else the CPUs this process may use (the measures' rule,
    :func:`ndcglab._compat.kernel_threads`)."""
    return kernel_threads()


def _run_rows(kernel: Callable[..., None], n: int, *args: Any) -> None:
    """``kernel(*args, bnd, q0, q1, out)`` over pieces of :data:`_PIECE_ROWS` rows, the pieces
    split between :func:`_threads` threads (one below :data:`_THREADED_ROWS` rows)."""
    *inputs, out = args
    bnd = np.append(np.arange(0, n, _PIECE_ROWS, dtype=np.int64), np.int64(n))
    pieces = len(bnd) - 1
    threads = min(_threads(), pieces)
    if threads == 1 or n < _THREADED_ROWS:
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


def _affine(x: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    from ._score_kernels import affine_rows_kernel

    out = np.empty(len(x), dtype=np.float64)
    _run_rows(affine_rows_kernel, len(x), x, w, np.float64(b), out)
    return out


def _zscore_into(normalizer: Normalizer, x: np.ndarray, out: np.ndarray) -> None:
    from ._score_kernels import zscore_rows_kernel

    assert normalizer.mean is not None and normalizer.scale is not None
    inv = (1.0 / normalizer.scale).astype(np.float32)
    _run_rows(zscore_rows_kernel, len(x), x, normalizer.mean, inv, out)


def _forward_blocks(
    model: RankModel, normalizer: Normalizer, x: np.ndarray, boundaries: np.ndarray | None
) -> np.ndarray:
    import torch

    out = np.empty(len(x), dtype=np.float64)
    whole = None
    if normalizer.method == "query_minmax":
        whole = normalizer.transform(x, boundaries)
    p: torch.Tensor | None = next(model.parameters(), None)
    if p is None:
        p = next(model.buffers())
    direct = p.device.type == "cpu" and p.dtype == torch.float32
    buf = np.empty((min(BLOCK_ROWS, len(x)), x.shape[1]), dtype=np.float32)
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            for lo in range(0, len(x), BLOCK_ROWS):
                hi = min(lo + BLOCK_ROWS, len(x))
                if whole is not None:
                    z = whole[lo:hi]
                elif normalizer.method == "zscore":
                    z = buf[: hi - lo]
                    _zscore_into(normalizer, x[lo:hi], z)
                else:
                    z = normalizer.transform(x[lo:hi], out=buf[: hi - lo])
                t = torch.from_numpy(z)
                if not direct:
                    t = t.to(device=p.device, dtype=p.dtype)
                out[lo:hi] = model(t).double().cpu().numpy()
    finally:
        model.train(was_training)
    return out


def score_features(
    model: RankModel,
    normalizer: Normalizer,
    features: np.ndarray,
    boundaries: np.ndarray | None = None,
) -> np.ndarray:
    """Scores ``(N,)`` float64 of the raw ``(N, F)`` ``features`` under ``normalizer`` then
    ``model`` (see the module docstring for the two paths); ``boundaries`` (query offsets) are
    needed by ``query_minmax`` and by a list-aware model."""
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
    form = model.linear_form()
    folded = None if form is None else fold_normalization(normalizer, *form)
    if folded is None:
        return _forward_blocks(model, normalizer, x, boundaries)
    scores = _affine(x, *folded)
    bad = np.flatnonzero(~np.isfinite(scores))
    if len(bad):  # a missing or infinite feature (or a weight that is not finite)
        scores[bad] = model.predict(normalizer.transform(x[bad]))
    return scores
