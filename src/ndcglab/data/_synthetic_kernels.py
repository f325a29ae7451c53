"""Numba kernels behind the synthetic data generator: a counter-based hash and feature filling.

Private: the public entry point is :func:`ndcglab.data.synthetic.make_synthetic`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_M16 = np.uint64(0xFFFF)
_SQRT3 = np.sqrt(3.0)


@njit(cache=True, nogil=True)
def splitmix64(x):
    """The SplitMix64 output function of the counter ``x`` (a uint64 hash)."""
    z = x * _GOLDEN + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True)
def synth_features(X, dots, offsets, row_query, w, key, row0):
    """Fill ``X[r] = z_r + offsets[row_query[r]]`` and ``dots[r] = <w, z_r>``.

    ``z_rj`` is the sum of four 16-bit uniforms taken from ``splitmix64(key + (row0+r)·F + j)``,
    centred and scaled to unit variance (Irwin-Hall, close to a standard normal, range ±2√3).
    Counter-based: the value of each cell depends only on ``key``, its row and its column.
    """
    n, f = X.shape
    kf = np.uint64(f)
    key = np.uint64(key)
    for r in range(n):
        q = row_query[r]
        acc = 0.0
        base = key + np.uint64(row0 + r) * kf
        for j in range(f):
            h = splitmix64(base + np.uint64(j))
            s = (
                (h & _M16)
                + ((h >> np.uint64(16)) & _M16)
                + ((h >> np.uint64(32)) & _M16)
                + (h >> np.uint64(48))
            )
            z = ((float(s) + 2.0) / 65536.0 - 2.0) * _SQRT3
            acc += w[j] * z
            X[r, j] = np.float32(z + offsets[q, j])
        dots[r] = acc
