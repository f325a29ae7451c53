# mypy: allow-untyped-defs
# (numba infers the kernels' types from their arguments; the docstrings state them)
"""Numba kernels of :mod:`ndcglab.models.scoring`: the ``zscore`` and ``none`` normalisations of
the rows ``bnd[q0]:bnd[q1]`` of a float32 ``(N, F)`` feature matrix, into a float32 buffer.

Both take ``(*inputs, bnd, q0, q1, out)`` and handle the rows ``bnd[q0]:bnd[q1]`` (``bnd``: the
row offsets of equal pieces), and release the GIL, so several threads share the rows. Each gives
bit for bit the float32 values :meth:`ndcglab.data.Normalizer.transform` gives.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["finite_rows_kernel", "zscore_rows_kernel"]


@njit(cache=True, nogil=True)
def zscore_rows_kernel(x, mean, inv, bnd, q0, q1, out):  # pragma: no cover - compiled
    """``out[i, j] = float32(float64(x[i, j]) − mean[j]) · inv[j]`` (``mean`` float64, ``inv``
    float32: the product in float32), then 0 where that is not finite: bit for bit what
    :meth:`ndcglab.data.Normalizer.transform` computes for ``zscore``, in one pass."""
    f = x.shape[1]
    for i in range(bnd[q0], bnd[q1]):
        for j in range(f):
            z = np.float32(x[i, j] - mean[j]) * inv[j]
            out[i, j] = z if math.isfinite(z) else np.float32(0.0)


@njit(cache=True, nogil=True)
def finite_rows_kernel(x, bnd, q0, q1, out):  # pragma: no cover - compiled
    """``out[i, j] = x[i, j]``, 0 where that is not finite (NaN, ±inf): the ``none``
    normalisation of :meth:`ndcglab.data.Normalizer.transform`."""
    f = x.shape[1]
    for i in range(bnd[q0], bnd[q1]):
        for j in range(f):
            v = x[i, j]
            out[i, j] = v if math.isfinite(v) else np.float32(0.0)
