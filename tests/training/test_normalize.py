"""Feature normalisation against slow reference loops."""

from __future__ import annotations

import numpy as np
import pytest

from ndcglab.errors import ModelMismatchError, SpecError
from ndcglab.training import Normalizer


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    lengths = [3, 1, 0, 5, 4]
    b = np.concatenate([[0], np.cumsum(lengths)])
    x = rng.normal(size=(b[-1], 4)) * [1, 10, 0.1, 1]
    x[:, 3] = np.round(x[:, 3])  # many ties
    x[0:3, 2] = 7.0  # a feature constant within the first query
    x[[1, 5, 9], 0] = np.nan
    x[3:9, 1] = np.nan  # query of length 5 all NaN in feature 1 (and the single-doc query)
    return x, b


def _ref_minmax(x, b):
    out = np.zeros_like(x)
    for q in range(len(b) - 1):
        for f in range(x.shape[1]):
            col = x[b[q] : b[q + 1], f]
            vals = [v for v in col if not np.isnan(v)]
            for i, v in enumerate(col):
                if np.isnan(v) or not vals or max(vals) == min(vals):
                    out[b[q] + i, f] = 0.0
                else:
                    out[b[q] + i, f] = (v - min(vals)) / (max(vals) - min(vals))
    return out


def _ref_zscore(train, x):
    out = np.zeros_like(x)
    for f in range(x.shape[1]):
        vals = [v for v in train[:, f] if not np.isnan(v)]
        mu = sum(vals) / len(vals) if vals else 0.0
        sd = (sum((v - mu) ** 2 for v in vals) / len(vals)) ** 0.5 if vals else 0.0
        sd = sd if sd > 0 else 1.0
        for i in range(x.shape[0]):
            out[i, f] = 0.0 if np.isnan(x[i, f]) else (x[i, f] - mu) / sd
    return out


def test_query_minmax_matches_reference() -> None:
    x, b = _data()
    got = Normalizer.fit("query_minmax", x).transform(x, b)
    np.testing.assert_allclose(got, _ref_minmax(x, b), atol=1e-6)
    assert got.dtype == np.float32
    assert not np.isnan(got).any()


def test_zscore_matches_reference_with_training_statistics() -> None:
    train, _ = _data(0)
    other, b = _data(1)
    norm = Normalizer.fit("zscore", train)
    np.testing.assert_allclose(norm.transform(other, b), _ref_zscore(train, other), atol=1e-5)
    again = Normalizer.from_dict(norm.to_dict())
    np.testing.assert_array_equal(again.transform(other), norm.transform(other))


def test_none_fills_nan_with_zero() -> None:
    x, b = _data()
    got = Normalizer.fit("none", x).transform(x, b)
    np.testing.assert_allclose(got, np.nan_to_num(x, nan=0.0).astype(np.float32))


def test_non_finite_values_become_zero_in_every_method() -> None:
    # NaN (missing), ±inf, and a float64 beyond the float32 range (inf once cast) all give 0;
    # every finite value is kept as the method maps it
    x = np.array([[1.0, np.nan], [np.inf, 2.0], [-np.inf, 1e39], [3.0, 4.0]])
    b = np.array([0, 2, 4])
    with np.errstate(over="ignore", invalid="ignore"):  # the overflows are the point here
        got = Normalizer.fit("none", x).transform(x, b)
        outs = {m: Normalizer.fit(m, x).transform(x, b) for m in ("zscore", "query_minmax")}
    np.testing.assert_array_equal(got, np.array([[1, 0], [0, 2], [0, 0], [3, 4]], np.float32))
    for out in outs.values():
        assert np.isfinite(out).all() and out.dtype == np.float32
        assert out[0, 1] == 0.0 and out[1, 0] == 0.0 and out[2, 0] == 0.0


def test_errors() -> None:
    x, _ = _data()
    with pytest.raises(SpecError, match="unknown normalisation"):
        Normalizer.fit("minmax", x)
    with pytest.raises(SpecError, match="boundaries"):
        Normalizer.fit("query_minmax", x).transform(x)
    with pytest.raises(ModelMismatchError, match="4 features"):
        Normalizer.fit("zscore", x).transform(x[:, :3])


@pytest.mark.parametrize("method", ["none", "query_minmax", "zscore"])
def test_block_processing_changes_nothing(monkeypatch, method: str) -> None:
    """Large inputs are processed in blocks of whole queries; the result is the same."""
    import ndcglab.data.normalize as N

    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 12, size=40)
    b = np.concatenate([[0], np.cumsum(lengths)])
    x = rng.normal(size=(b[-1], 3))
    x[::7, 1] = np.nan
    whole = N.Normalizer.fit(method, x).transform(x, b)
    monkeypatch.setattr(N, "_BLOCK", 7)
    blocked = N.Normalizer.fit(method, x).transform(x, b)
    np.testing.assert_allclose(blocked, whole, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(
        N.Normalizer.fit(method, x).transform(x, b if method == "query_minmax" else None),
        whole,
        rtol=1e-6,
        atol=1e-7,
    )


@pytest.mark.parametrize("method", ["none", "query_minmax", "zscore"])
def test_batch_plan_normalises_while_arranging(monkeypatch, method: str) -> None:
    """The training plan normalises blocks of whole queries as it reorders them (no full
    normalised copy in file order); the arranged rows equal normalise-then-gather."""
    import ndcglab.training.batching as B

    rng = np.random.default_rng(5)
    lengths = rng.integers(1, 15, size=50)
    b = np.concatenate([[0], np.cumsum(lengths)])
    x = rng.normal(size=(b[-1], 4)).astype(np.float32)
    x[::5, 2] = np.nan
    y = rng.integers(0, 3, size=b[-1]).astype(np.float64)
    norm = Normalizer.fit(method, x)
    monkeypatch.setattr(B, "_ARRANGE_BLOCK", 9)  # many blocks, each of whole queries
    plan = B.BatchPlan(x, y, b, batch_size=8, transform=norm.transform)
    order_rows = np.concatenate([np.arange(b[q], b[q + 1]) for q in plan.order])
    expected = norm.transform(x, b)[order_rows]
    np.testing.assert_allclose(plan.x.numpy(), expected, rtol=1e-6, atol=1e-7)


def test_transform_into_a_given_array_and_a_wrong_one() -> None:
    x, b = _data()
    norm = Normalizer.fit("zscore", x)
    out = np.full(x.shape, 7.0, dtype=np.float32)
    assert norm.transform(x, b, out) is out
    np.testing.assert_array_equal(out, norm.transform(x, b))
    with pytest.raises(SpecError, match="out must be float32"):
        norm.transform(x, b, np.empty(x.shape))


def test_batch_plan_refuses_rows_outside_the_features() -> None:
    import ndcglab.training.batching as B

    x = np.zeros((4, 2), dtype=np.float32)
    b = np.array([0, 2, 4])
    norm = Normalizer.fit("none", x)
    with pytest.raises(IndexError, match="out of range"):
        B.BatchPlan(
            x, np.zeros(4), b, batch_size=2, rows=np.array([0, 1, 2, 4]), transform=norm.transform
        )
