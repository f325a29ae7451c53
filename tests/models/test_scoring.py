"""``TrainedModel.predict`` (the fused scoring of :mod:`ndcglab.models.scoring`) against the
two-step reference it replaces: normalise the whole matrix, then ``RankModel.predict``; and
against float64 scores computed here by a plain loop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from ndcglab.data import Normalizer, RankingDataset
from ndcglab.models import RankModel, TrainedModel, make_model
from ndcglab.models.scoring import fold_normalization, score_features


def _data(n_q: int = 40, n_f: int = 7, seed: int = 0) -> RankingDataset:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 30, n_q)
    n = int(sizes.sum())
    # features of very different magnitudes: a count near 10^6 with a small spread, a ratio
    x = rng.normal(0.0, 1.0, (n, n_f)) * np.logspace(-2, 3, n_f) + np.logspace(0, 6, n_f)
    x = x.astype(np.float32)
    y = rng.integers(0, 3, n).astype(np.float64)
    return RankingDataset.from_arrays(x, y, group=sizes)


def _model(kind: str, n_f: int) -> RankModel:
    torch.manual_seed(1)
    if kind == "linear":
        return make_model("linear", n_f, init="normal")
    if kind == "mlp":
        return make_model("mlp", n_f, hidden=(6, 4), activation="tanh")
    m = make_model("adarank", n_f)
    with torch.no_grad():
        m.weight[:] = torch.linspace(-1.0, 2.0, n_f, dtype=torch.float64)
    return m


def _reference(tm: TrainedModel, ds: RankingDataset) -> np.ndarray:
    return tm.model.predict(tm.normalizer.transform(ds.features, ds.boundaries))


@pytest.mark.parametrize("method", ["none", "zscore", "query_minmax"])
@pytest.mark.parametrize("kind", ["linear", "mlp", "adarank"])
def test_scores_equal_the_two_step_path(kind: str, method: str) -> None:
    ds = _data()
    tm = TrainedModel(_model(kind, ds.n_features), Normalizer.fit(method, ds.features))
    got = tm.predict(ds)
    want = _reference(tm, ds)
    assert got.dtype == np.float64 and got.shape == (ds.n_docs,)
    if kind == "mlp" or method == "query_minmax":
        assert np.array_equal(got, want)  # the same forward pass on the same float32 values
    else:  # the folded affine path: float32 rounding of the normalised values apart
        scale = np.abs(want).max() + 1.0
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * scale)
    # the matrix with group= gives the dataset's scores
    assert np.array_equal(tm.predict(ds.features, group=np.diff(ds.boundaries)), got)


@pytest.mark.parametrize("kind", ["linear", "adarank"])
def test_folded_scores_are_the_float64_scores_of_a_plain_loop(kind: str) -> None:
    """Raw features near 10^6 with a spread of 10: folding the mean into the bias keeps every
    digit because the sum is in float64 (a float32 sum would lose about 0.06 here)."""
    ds = _data(n_f=5)
    norm = Normalizer.fit("zscore", ds.features)
    model = _model(kind, ds.n_features)
    tm = TrainedModel(model, norm)
    got = tm.predict(ds)
    w, b = model.linear_form()
    inv = (1.0 / norm.scale).astype(np.float32).astype(np.float64)
    want = np.empty(ds.n_docs)
    for i, row in enumerate(ds.features.astype(np.float64)):
        want[i] = sum((row[j] - norm.mean[j]) * inv[j] * w[j] for j in range(len(w))) + b
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def test_fold_normalization_is_the_affine_map() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(5.0, 2.0, (50, 4))
    norm = Normalizer.fit("zscore", x.astype(np.float32))
    w, b = rng.normal(size=4), 0.25
    w2, b2 = fold_normalization(norm, w, b)
    inv = (1.0 / norm.scale).astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(x @ w2 + b2, ((x - norm.mean) * inv) @ w + b, rtol=1e-12)
    assert fold_normalization(Normalizer("query_minmax"), w, b) is None
    w3, b3 = fold_normalization(Normalizer("none"), w, b)
    assert np.array_equal(w3, w) and b3 == b


@pytest.mark.parametrize("kind", ["linear", "mlp", "adarank"])
def test_missing_and_infinite_features_are_zero_after_normalisation(kind: str) -> None:
    """A dataset holds NaN (missing) values; a bare matrix may also hold ±inf."""
    ds = _data()
    x = ds.features.copy()
    x[3, 1] = np.nan
    ds = RankingDataset.from_arrays(x, ds.labels, group=np.diff(ds.boundaries))
    x[10, 0] = np.inf
    x[11, 2] = -np.inf
    tm = TrainedModel(_model(kind, ds.n_features), Normalizer.fit("zscore", ds.features))
    got = tm.predict(x)
    want = tm.model.predict(tm.normalizer.transform(x))
    assert np.isfinite(got).all()
    rows = [3, 10, 11]  # scored by the two-step path
    assert np.array_equal(got[rows], tm.model.predict(tm.normalizer.transform(x[rows])))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * (np.abs(want).max() + 1))
    np.testing.assert_allclose(tm.predict(ds)[3], want[3], rtol=1e-6)


def test_a_model_without_a_linear_form_runs_its_own_forward_pass() -> None:
    """A new kind (here a product of two features, not affine) declares no linear form: its
    forward pass scores the normalised blocks."""

    class Product(RankModel):
        kind = "product-test"

        def __init__(self, n_features: int) -> None:
            super().__init__(n_features)
            self.scale = torch.nn.Parameter(torch.tensor(2.0))

        def forward(self, x: Any) -> Any:
            return self.scale * x[..., 0] * x[..., 1]

    ds = _data()
    tm = TrainedModel(Product(ds.n_features), Normalizer.fit("zscore", ds.features))
    assert tm.model.linear_form() is None
    assert np.array_equal(tm.predict(ds), _reference(tm, ds))


def test_blocks_and_threads_change_no_score(monkeypatch: pytest.MonkeyPatch) -> None:
    """60,000 rows (above the kernels' threading threshold) in blocks of 7,000: one thread and
    two give the same scores, and the blocks the same as one pass."""
    from ndcglab.models import scoring

    rng = np.random.default_rng(5)
    x = rng.normal(3.0, 2.0, (60_000, 9)).astype(np.float32)
    norm = Normalizer.fit("zscore", x)
    out = {}
    for kind in ("linear", "mlp"):
        model = _model(kind, 9)
        for threads in ("1", "2"):
            monkeypatch.setenv("NDCGLAB_NUM_THREADS", threads)
            out[kind, threads] = score_features(model, norm, x)
        monkeypatch.setattr(scoring, "BLOCK_ROWS", 7_000)
        out[kind, "blocks"] = score_features(model, norm, x)
        monkeypatch.undo()
        assert np.array_equal(out[kind, "1"], out[kind, "2"])
        assert np.array_equal(out[kind, "1"], out[kind, "blocks"])
    assert np.array_equal(out["mlp", "1"], make_model_predict(out, norm, x))


def make_model_predict(out: dict[Any, np.ndarray], norm: Normalizer, x: np.ndarray) -> np.ndarray:
    """The two-step scores of the MLP of :func:`test_blocks_and_threads_change_no_score`."""
    return _model("mlp", 9).predict(norm.transform(x))


def test_empty_and_mismatched_inputs() -> None:
    ds = _data()
    tm = TrainedModel(_model("linear", ds.n_features), Normalizer.fit("zscore", ds.features))
    assert tm.predict(np.zeros((0, ds.n_features), dtype=np.float32)).shape == (0,)
    from ndcglab.errors import ModelMismatchError

    with pytest.raises(ModelMismatchError, match="expects 7 features"):
        tm.predict(np.zeros((3, 4), dtype=np.float32))


def test_cli_predict_writes_the_two_step_scores(tmp_path: Path) -> None:
    from ndcglab.cli.main import main
    from ndcglab.data import write_svmlight

    ds = _data()
    data = tmp_path / "data.txt"
    write_svmlight(data, ds)
    for kind in ("linear", "mlp"):
        tm = TrainedModel(_model(kind, ds.n_features), Normalizer.fit("zscore", ds.features))
        model = tm.save(tmp_path / f"{kind}.zip")
        scores = tmp_path / f"{kind}.txt"
        assert main(["predict", str(model), str(data), "--out", str(scores)]) == 0
        got = np.loadtxt(scores)
        read_back = tm.model.predict(tm.normalizer.transform(ds.features))
        np.testing.assert_allclose(got, read_back, rtol=0, atol=1e-5 * np.abs(read_back).max())
