"""Gain and discount objects as inputs of the numba kernels (tables, never formulas).

The kernels (:mod:`._gain_kernels`) know no gain or discount formula: they read

* gains from a table ``gtab`` indexed by whole labels, built by calling the
  :class:`~ndcglab.measures.Gain` object on 0, 1, 2, …, or from per-document gains ``garr``
  (the object called on the labels), see :func:`gain_inputs`;
* discounts from one table ``D(1..m)`` built by :meth:`Discount.table`, or — for a discount that
  depends on the list's length n — one table per distinct length, concatenated, with each
  query's offset into it (:func:`discount_inputs`).
"""

from __future__ import annotations

import numpy as np

from ..errors import ConventionError
from .discounts import Discount
from .gains import Exp2Gain, Gain, TableGain

__all__ = ["EMPTY_F", "discount_inputs", "document_gains", "gain_inputs"]

EMPTY_F = np.zeros(0, dtype=np.float64)
#: whole labels 0..TABLE_SIZE-1 (at least) are looked up in a table for the named gains
TABLE_SIZE = 64


def document_gains(gain: Gain, labels: np.ndarray) -> np.ndarray:
    """``gain(labels)`` as a float64 array, checked: one finite number per label. A negative
    label has gain 0 whatever the gain (trec_eval's rule: judged, but worth nothing and left out
    of the ideal ranking; presets that refuse negative labels do so before this), except for a
    ``signed:`` gain (:class:`~ndcglab.measures.gains.SignedGain`), which keeps the formula's
    value."""
    with np.errstate(over="ignore", invalid="ignore"):
        arr = np.ascontiguousarray(gain(labels), dtype=np.float64)
    if arr.shape != labels.shape:
        raise ConventionError(
            f"gain {gain} must map each label to one finite number (got shape {arr.shape})"
        )
    neg = labels < 0.0
    if neg.any() and not gain.signed:
        arr = np.where(neg, 0.0, arr)
    if not np.isfinite(arr).all():
        i = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ConventionError(
            f"gain {gain} of label {labels[i]:g} (document {i + 1}) is not a finite number "
            f"({arr[i]}): it overflows double precision. Fix: gain=linear, or labels in a "
            "smaller range (exp2 overflows above label 1023)"
        )
    return arr


def gain_inputs(gain: Gain, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(gtab, garr)`` for the kernels: a table of ``gain`` at the whole labels 0..T-1 for
    ``exp2`` and explicit tables (the kernels report labels outside it, and the caller then
    passes :func:`document_gains`), else an empty table and the per-document gains."""
    size = 0
    if isinstance(gain, Exp2Gain):
        size = TABLE_SIZE
    elif isinstance(gain, TableGain):
        keys = np.array([k for k, _ in gain.table], dtype=np.float64)
        if len(keys) and (keys >= 0).all() and (keys == np.floor(keys)).all() and keys.max() < 4096:
            size = max(int(keys.max()) + 1, TABLE_SIZE)
    if size:
        tab = np.ascontiguousarray(gain(np.arange(size, dtype=np.float64)), dtype=np.float64)
        if tab.shape == (size,) and np.isfinite(tab).all():
            return tab, EMPTY_F
    return EMPTY_F, document_gains(gain, labels)


def checked_table(disc: Discount, m: int) -> np.ndarray:
    """``D(1..m)`` of a list of length ``m``, checked: one finite number per position."""
    tab = np.ascontiguousarray(disc.table(m), dtype=np.float64)
    if tab.shape != (m,) or not np.isfinite(tab).all():
        raise ConventionError(f"discount {disc} must give one finite number per position 1..{m}")
    return tab


def discount_inputs(disc: Discount, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(darr, doff)``: ``D(r)`` of a list of length ``lengths[i]`` is ``darr[doff[i] + r − 1]``
    (``doff`` has the shape of ``lengths``). A discount that ignores the length has one table,
    as long as the longest list, and offsets 0."""
    n = np.asarray(lengths, dtype=np.int64)
    if not disc.depends_on_length:
        m = int(n.max(initial=0))
        return checked_table(disc, max(m, 1)), np.zeros(n.shape, dtype=np.int64)
    uniq, inv = np.unique(n.ravel(), return_inverse=True)
    tables = [checked_table(disc, int(m)) for m in uniq.tolist()]
    starts = np.zeros(len(uniq), dtype=np.int64)
    if len(uniq) > 1:
        starts[1:] = np.cumsum([len(t) for t in tables[:-1]])
    darr = np.concatenate(tables) if tables else EMPTY_F
    if darr.size == 0:
        darr = np.zeros(1)
    return np.ascontiguousarray(darr), starts[inv.ravel()].reshape(n.shape)
