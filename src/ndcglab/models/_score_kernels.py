# mypy: allow-untyped-defs
# (numba infers the kernels' types from their arguments; the docstrings state them)
"""Numba kernels of :mod:`ndcglab.models.scoring`: the scores of an affine model and the z-score
normalisation, over the rows ``bnd[q0]:bnd[q1]`` of a float32 ``(N, F)`` feature matrix.

Both take ``(*inputs, bnd, q0, q1, out)`` and handle the rows ``bnd[q0]:bnd[q1]`` (``bnd``: the
row offsets of equal pieces), and release the GIL, so several threads share the rows.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["affine_rows_kernel", "zscore_rows_kernel"]


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def affine_rows_kernel(x, w, b, bnd, q0, q1, out):  # pragma: no cover - compiled
    """``out[i] = Σ_j x[i, j] · w[j] + b`` in float64 (``x`` float32, ``w`` float64): every
    product and the sum are in double precision, so a feature far from zero (a raw count of
    10⁶ against a mean folded into ``b``) loses no digits; the sum's order is the compiler's
    (vectorised), the same for a row whatever the block or thread that scores it. A missing
    (NaN) or infinite feature gives a non-finite score, which the caller recomputes."""
    f = x.shape[1]
    for i in range(bnd[q0], bnd[q1]):
        acc = 0.0
        for j in range(f):
            acc += x[i, j] * w[j]
        out[i] = acc + b


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
