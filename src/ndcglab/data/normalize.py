"""Feature normalisation, fitted on training data and stored with the model.

Methods (the ``normalize=`` option of training, the estimator and ``ndcglab train``):

=================  ===============================================================================
``none``           features as read.
``query_minmax``   per query and feature, ``(x − min_q) / (max_q − min_q)`` over the query's
                   documents (LETOR's *QueryLevelNorm*); a feature constant within a query
                   becomes 0.
                   Stateless: it needs the query boundaries of the data it is applied to.
``zscore``         ``(x − μ) / σ`` with μ, σ (population std) of each feature over the *training*
                   documents; σ = 0 is replaced by 1.
``log1p_zscore``   ``(t(x) − μ) / σ`` with the sign-preserving logarithm
                   ``t(x) = sign(x) · ln(1 + |x|)`` and μ, σ of ``t(x)`` over the training
                   documents (σ = 0 replaced by 1): the input transform of Qin et al.'s DASALC
                   ("Are Neural Rankers still Outperformed by Gradient Boosted Decision Trees?",
                   ICLR 2021), standardised as ``zscore``.
=================  ===============================================================================

Missing values (NaN, e.g. OHSUMED's ``NULL`` read with ``missing="nan"``) are ignored when the
statistics are computed and **filled with 0 after normalisation** under every method (for
``zscore`` that is the training mean; for ``query_minmax`` the query's minimum). Output is float32.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ModelMismatchError, SpecError

__all__ = ["NORMALIZATIONS", "Normalizer"]

#: The feature normalisations :class:`Normalizer` knows.
NORMALIZATIONS = ("none", "query_minmax", "zscore", "log1p_zscore")
_BLOCK = 262_144  # rows per block


def _query_blocks(b: np.ndarray) -> list[tuple[int, int, np.ndarray]]:
    """Row ranges of whole queries, about ``_BLOCK`` rows each, with their local boundaries."""
    out = []
    q = 0
    n_q = len(b) - 1
    while q < n_q:
        end = int(np.searchsorted(b, b[q] + _BLOCK, side="right")) - 1
        end = min(max(end, q + 1), n_q)
        out.append((int(b[q]), int(b[end]), b[q : end + 1] - b[q]))
        q = end
    if not out:
        out.append((0, 0, np.zeros(1, dtype=np.int64)))
    return out


def _segment_reduce(
    func: np.ufunc, x: np.ndarray, boundaries: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``func.reduceat`` over the non-empty segments of ``x``; also returns their lengths."""
    b = np.asarray(boundaries, dtype=np.int64)
    lengths = np.diff(b)
    keep = lengths > 0
    if not keep.any():
        return np.zeros((0, x.shape[1]), dtype=x.dtype), lengths[keep]
    return func.reduceat(x, b[:-1][keep], axis=0), lengths[keep]


@dataclass
class Normalizer:
    """A fitted feature normalisation (see the module docstring for the methods)."""

    method: str = "none"
    n_features: int | None = None
    mean: np.ndarray | None = None
    scale: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.method not in NORMALIZATIONS:
            raise SpecError(
                f"unknown normalisation {self.method!r}; known: {', '.join(NORMALIZATIONS)}"
            )
        if self.mean is not None:
            self.mean = np.asarray(self.mean, dtype=np.float64)
        if self.scale is not None:
            self.scale = np.asarray(self.scale, dtype=np.float64)

    @classmethod
    def fit(cls, method: str, features: np.ndarray) -> Normalizer:
        """Fit ``method`` on training ``features`` (``(N, F)``; NaN ignored).

        ``zscore`` statistics are computed in float64, two passes over row blocks (mean, then
        the mean squared deviation), so large float32 matrices are never copied whole.
        """
        x = np.asarray(features)
        if x.ndim != 2:
            raise SpecError(f"features must be 2-D (documents, features), got shape {x.shape}")
        norm = cls(method=method, n_features=x.shape[1])
        if method in ("zscore", "log1p_zscore"):
            count = np.zeros(x.shape[1])
            total = np.zeros(x.shape[1])
            for lo in range(0, len(x), _BLOCK):
                blk = norm._pre(x[lo : lo + _BLOCK])
                ok = np.isfinite(blk)
                if ok.all():
                    count += len(blk)
                    total += blk.sum(axis=0, dtype=np.float64)
                else:
                    count += ok.sum(axis=0)
                    total += np.where(ok, blk, 0.0).sum(axis=0, dtype=np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = np.where(count > 0, total / count, 0.0)
            sq = np.zeros(x.shape[1])
            for lo in range(0, len(x), _BLOCK):
                dev = norm._pre(x[lo : lo + _BLOCK]) - mean  # float64
                dev[~np.isfinite(dev)] = 0.0
                sq += np.einsum("ij,ij->j", dev, dev)
            with np.errstate(invalid="ignore", divide="ignore"):
                std = np.sqrt(np.where(count > 0, sq / count, 0.0))
            norm.mean = mean
            norm.scale = np.where(std > 0, std, 1.0)
        return norm

    def transform(
        self,
        features: np.ndarray,
        boundaries: np.ndarray | None = None,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """Normalise ``features`` (``(N, F)``); ``boundaries`` are needed by ``query_minmax``.

        Works through blocks of whole queries (float64 inside, float32 out), so memory stays
        near one float32 copy of the input. ``out``: a float32 ``(N, F)`` array to write the
        result into (and return) instead of a new one.
        """
        x = np.asarray(features)
        if x.ndim != 2:
            raise SpecError(f"features must be 2-D (documents, features), got shape {x.shape}")
        if self.n_features is not None and x.shape[1] != self.n_features:
            raise ModelMismatchError(
                f"the normalisation was fitted on {self.n_features} features but the data has "
                f"{x.shape[1]}. Fix: apply the model to data with the same feature set"
            )
        if self.method == "query_minmax" and boundaries is None:
            raise SpecError(
                "query_minmax normalisation needs the query boundaries of the data. Fix: pass "
                "a RankingDataset, or group=/qid= with the feature matrix"
            )
        if out is None:
            out = np.empty(x.shape, dtype=np.float32)
        elif out.shape != x.shape or out.dtype != np.float32:
            raise SpecError(
                f"out must be float32 of shape {x.shape}, got {out.dtype} {out.shape}. "
                "Fix: pass np.empty(features.shape, dtype=np.float32), or leave out=None"
            )
        blocks: Sequence[tuple[int, int, np.ndarray | None]]
        if boundaries is None or self.method != "query_minmax":
            blocks = [(a, min(a + _BLOCK, len(x)), None) for a in range(0, len(x), _BLOCK)]
        else:
            blocks = _query_blocks(np.asarray(boundaries, dtype=np.int64))
        for lo, hi, bnd in blocks:
            block = out[lo:hi]
            self._transform_block(x[lo:hi], bnd, block)
            bad = ~np.isfinite(block)  # NaN (missing) and ±inf become 0; one pass when none
            if bad.any():
                block[bad] = 0.0
        return out

    def _pre(self, x: np.ndarray) -> np.ndarray:
        """The elementwise transform before standardising: ``sign(x)·ln(1 + |x|)`` in float64
        under ``log1p_zscore``, else ``x`` itself."""
        if self.method != "log1p_zscore":
            return x
        x64 = np.asarray(x, dtype=np.float64)
        return np.sign(x64) * np.log1p(np.abs(x64))

    def _transform_block(
        self, x: np.ndarray, boundaries: np.ndarray | None, out: np.ndarray
    ) -> None:
        if self.method == "none":
            out[...] = x
        elif self.method == "log1p_zscore":
            assert self.mean is not None and self.scale is not None
            np.subtract(self._pre(x), self.mean, out=out, casting="unsafe")
            out *= (1.0 / self.scale).astype(np.float32)
        elif self.method == "zscore":
            assert self.mean is not None and self.scale is not None
            np.subtract(x, self.mean, out=out, casting="unsafe")
            out *= (1.0 / self.scale).astype(np.float32)
        else:
            assert boundaries is not None
            x64 = x.astype(np.float64)
            lo, lengths = _segment_reduce(np.fmin, x64, boundaries)
            hi, _ = _segment_reduce(np.fmax, x64, boundaries)
            span = hi - lo
            with np.errstate(invalid="ignore", divide="ignore"):
                inv = np.where(span > 0, 1.0 / span, 0.0)
            out[...] = (x64 - np.repeat(lo, lengths, axis=0)) * np.repeat(inv, lengths, axis=0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (stored in model files)."""
        return {
            "method": self.method,
            "n_features": self.n_features,
            "mean": None if self.mean is None else self.mean.tolist(),
            "scale": None if self.scale is None else self.scale.tolist(),
            "missing": "NaN filled with 0 after normalisation",
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Normalizer:
        return cls(
            method=d.get("method", "none"),
            n_features=d.get("n_features"),
            mean=d.get("mean"),
            scale=d.get("scale"),
        )
