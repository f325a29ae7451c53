"""``TrainedModel.predict`` (the block scoring of :mod:`ndcglab.models.scoring`) against the
two-step path it replaces, bit for bit: normalise the whole matrix, then ``RankModel.predict``
(torch's forward pass in calls of 262,144 rows)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from ndcglab.data import Normalizer, RankingDataset
from ndcglab.models import RankModel, TrainedModel, make_model
from ndcglab.models.scoring import (
    AFFINE_ROWS,
    BLOCK_ROWS,
    ROWWISE_ROWS,
    BlockScorer,
    score_features,
)


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
    if kind == "attention":
        return make_model("attention", n_f, hidden=(8,), heads=2, blocks=1, ff_width=8)
    m = make_model("adarank", n_f)
    with torch.no_grad():
        m.weight[:] = torch.linspace(-1.0, 2.0, n_f, dtype=torch.float64)
    return m


def _two_step(model: RankModel, norm: Normalizer, x: np.ndarray, b: Any = None) -> np.ndarray:
    return model.predict(norm.transform(x, b), boundaries=b)


@pytest.mark.parametrize("method", ["none", "zscore", "query_minmax", "log1p_zscore"])
@pytest.mark.parametrize("kind", ["linear", "mlp", "adarank", "attention"])
def test_scores_equal_the_two_step_path_bit_for_bit(kind: str, method: str) -> None:
    ds = _data()
    tm = TrainedModel(_model(kind, ds.n_features), Normalizer.fit(method, ds.features))
    got = tm.predict(ds)
    assert got.dtype == np.float64 and got.shape == (ds.n_docs,)
    assert np.array_equal(got, _two_step(tm.model, tm.normalizer, ds.features, ds.boundaries))
    # the matrix with group= gives the dataset's scores
    assert np.array_equal(tm.predict(ds.features, group=np.diff(ds.boundaries)), got)


@pytest.mark.parametrize("kind", ["linear", "adarank", "mlp"])
def test_every_row_count_gives_the_two_step_numbers(kind: str) -> None:
    """torch's matrix-vector product gives the last ``n mod 4`` rows of a call another rounding
    than the others: the calls of 4,096 rows of an affine model must end where the two-step
    path's calls of 262,144 rows ended. Row counts of every remainder modulo 4 and 4,096, below
    and above one two-step call."""
    rng = np.random.default_rng(7)
    x = rng.normal(3.0, 2.0, (BLOCK_ROWS + 2 * AFFINE_ROWS + 3, 9)).astype(np.float32)
    norm = Normalizer.fit("zscore", x)
    model = _model(kind, 9)
    for n in (1, 2, 3, 5, 4097, 4098, 4099, 3 * AFFINE_ROWS, BLOCK_ROWS - 1, BLOCK_ROWS + 1):
        assert np.array_equal(score_features(model, norm, x[:n]), _two_step(model, norm, x[:n]))
    assert np.array_equal(score_features(model, norm, x), _two_step(model, norm, x))


@pytest.mark.parametrize("hidden", [(64, 32), (128,), (16, 16, 8)])
def test_mlp_calls_of_16384_rows_give_the_two_step_numbers(hidden: tuple[int, ...]) -> None:
    """MLPs of the widths people train on 136 features, scored in calls of
    :data:`ROWWISE_ROWS` rows, against the two-step path's calls of 262,144 rows: row counts
    just past one and several short calls and past one two-step call (every remainder mod 4)."""
    rng = np.random.default_rng(11)
    x = rng.normal(0.0, 3.0, (BLOCK_ROWS + ROWWISE_ROWS + 7, 136)).astype(np.float32)
    norm = Normalizer.fit("zscore", x[:5000])
    torch.manual_seed(2)
    model = make_model("mlp", 136, hidden=hidden)
    assert BlockScorer(model, norm).step == ROWWISE_ROWS
    for n in (ROWWISE_ROWS + 1, 3 * ROWWISE_ROWS + 2, 5 * ROWWISE_ROWS - 1, len(x)):
        assert np.array_equal(score_features(model, norm, x[:n]), _two_step(model, norm, x[:n]))


def test_the_row_count_matters_to_torch() -> None:
    """Why the calls are aligned: the same rows scored in calls of 3 rows do not all get the
    numbers of one call (if this ever passes, torch changed and the alignment is harmless)."""
    rng = np.random.default_rng(8)
    x = torch.from_numpy(rng.normal(0.0, 1.0, (30_000, 136)).astype(np.float32))
    model = _model("linear", 136).eval()
    with torch.inference_mode():
        whole = model(x).numpy()
        threes = torch.cat([model(x[i : i + 3]) for i in range(0, len(x), 3)]).numpy()
        fours = torch.cat([model(x[i : i + 4096]) for i in range(0, len(x), 4096)]).numpy()
    assert np.array_equal(fours, whole)
    if np.array_equal(threes, whole):  # pragma: no cover - depends on torch's BLAS
        pytest.skip("this torch build rounds every row count alike")


@pytest.mark.parametrize("kind", ["linear", "adarank", "mlp", "attention"])
@pytest.mark.parametrize("method", ["none", "zscore", "query_minmax"])
def test_rows_fed_in_pieces_give_the_whole_matrix_numbers(kind: str, method: str) -> None:
    """The streamed path: whole queries handed over in pieces of random sizes (across the
    calls' edges) give the scores of the whole matrix, bit for bit."""
    ds = _data(n_q=700, n_f=6, seed=3)
    model = _model(kind, 6)
    norm = Normalizer.fit(method, ds.features)
    want = score_features(model, norm, ds.features, ds.boundaries)
    assert np.array_equal(want, _two_step(model, norm, ds.features, ds.boundaries))
    rng = np.random.default_rng(4)
    cuts = np.unique(np.r_[0, rng.choice(ds.n_queries, 30, replace=False), ds.n_queries])
    parts = []
    with BlockScorer(model, norm) as scorer:
        for q0, q1 in itertools.pairwise(cuts):
            lo, hi = ds.boundaries[q0], ds.boundaries[q1]
            parts.append(scorer.feed(ds.features[lo:hi], ds.boundaries[q0 : q1 + 1] - lo))
        parts.append(scorer.finish())
    assert np.array_equal(np.concatenate(parts), want)


@pytest.mark.parametrize("extra", [5, ROWWISE_ROWS + 3])
def test_mlp_rows_fed_in_pieces_past_a_two_step_call(extra: int) -> None:
    """The MLP's calls of :data:`ROWWISE_ROWS` rows, streamed in pieces of random sizes (from a
    few rows to several calls): the last, shorter call joins the one before it only within a
    two-step call of 262,144 rows (``extra`` = 5: the rest is a two-step call of its own)."""
    rng = np.random.default_rng(extra)
    x = rng.normal(3.0, 2.0, (BLOCK_ROWS + extra, 136)).astype(np.float32)
    norm = Normalizer.fit("zscore", x[:2000])
    torch.manual_seed(4)
    model = make_model("mlp", 136, hidden=(64, 32))  # (a narrow MLP hides the short call)
    want = _two_step(model, norm, x)
    assert np.array_equal(score_features(model, norm, x), want)
    sizes = rng.choice([1, 3, 700, ROWWISE_ROWS - 1, ROWWISE_ROWS, 3 * ROWWISE_ROWS + 5], 400)
    cuts = np.unique(np.r_[0, np.cumsum(sizes), len(x)].clip(0, len(x)))
    parts = []
    with BlockScorer(model, norm) as scorer:
        for lo, hi in itertools.pairwise(cuts):
            parts.append(scorer.feed(x[lo:hi]))
        parts.append(scorer.finish())
    assert np.array_equal(np.concatenate(parts), want)


def test_the_model_is_put_back_in_its_mode() -> None:
    ds = _data()
    model = _model("mlp", ds.n_features)
    model.train()
    TrainedModel(model, Normalizer.fit("zscore", ds.features)).predict(ds)
    assert model.training
    model.eval()
    TrainedModel(model, Normalizer.fit("zscore", ds.features)).predict(ds)
    assert not model.training


@pytest.mark.parametrize("kind", ["linear", "mlp", "adarank"])
@pytest.mark.parametrize("method", ["none", "zscore"])
def test_missing_and_infinite_features_are_zero_after_normalisation(kind: str, method: str) -> None:
    """A dataset holds NaN (missing) values; a bare matrix may also hold ±inf."""
    ds = _data()
    x = ds.features.copy()
    x[3, 1] = np.nan
    x[10, 0] = np.inf
    x[11, 2] = -np.inf
    model = _model(kind, ds.n_features)
    tm = TrainedModel(model, Normalizer.fit(method, ds.features))
    got = tm.predict(x)
    assert np.isfinite(got).all()
    assert np.array_equal(got, _two_step(model, tm.normalizer, x))
    clean = x.copy()
    clean[[3, 10, 11], [1, 0, 2]] = 0.0 if method == "none" else tm.normalizer.mean[[1, 0, 2]]
    # a missing value scores as the feature's zero after normalisation (its mean under zscore)
    np.testing.assert_allclose(got[[3, 10, 11]], tm.predict(clean)[[3, 10, 11]], atol=1e-4)


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
    got = tm.predict(ds)
    assert np.array_equal(got, _two_step(tm.model, tm.normalizer, ds.features))
    z = tm.normalizer.transform(ds.features).astype(np.float64)
    np.testing.assert_allclose(got, 2.0 * z[:, 0] * z[:, 1], rtol=1e-6, atol=1e-6)


def test_threads_change_no_score(monkeypatch: pytest.MonkeyPatch) -> None:
    """60,000 rows (above the kernels' threading threshold; the affine calls shared by two
    threads from 2 calls each): one thread and two give the same scores, those of the two-step
    path."""
    from ndcglab.models import scoring

    monkeypatch.setattr(scoring, "_CALLS_PER_THREAD", 2)
    rng = np.random.default_rng(5)
    x = rng.normal(3.0, 2.0, (60_000, 9)).astype(np.float32)
    norm = Normalizer.fit("zscore", x)
    for kind in ("linear", "mlp"):
        model = _model(kind, 9)
        out = {}
        for threads in ("1", "2"):
            monkeypatch.setenv("NDCGLAB_NUM_THREADS", threads)
            out[threads] = score_features(model, norm, x)
        assert np.array_equal(out["1"], out["2"])
        assert np.array_equal(out["1"], _two_step(model, norm, x))


def test_threads_score_with_torch_on_one_thread_then_put_it_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Calls shared by two threads run torch on one intra-op thread (its own threads would
    wait on each other at every call); torch's setting is put back afterwards."""
    from ndcglab.models import scoring

    seen: list[int] = []

    class Recorder(RankModel):
        kind = "recorder-test"

        def __init__(self, n_features: int) -> None:
            super().__init__(n_features)
            self.scale = torch.nn.Parameter(torch.tensor(1.5))

        def forward(self, x: Any) -> Any:
            seen.append(torch.get_num_threads())
            return self.scale * x[..., 0]

    monkeypatch.setattr(scoring, "_CALLS_PER_THREAD", 2)
    monkeypatch.setenv("NDCGLAB_NUM_THREADS", "2")
    x = np.random.default_rng(6).normal(0.0, 1.0, (4 * ROWWISE_ROWS, 3)).astype(np.float32)
    norm = Normalizer.fit("zscore", x)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        got = score_features(Recorder(3), norm, x)
        assert torch.get_num_threads() == 2
        assert seen == [1, 1, 1, 1]  # four calls of 16,384 rows, two per thread
        # called from a thread of the user's (torch's number is per thread there): the same
        import threading

        seen.clear()
        other: list[np.ndarray] = []
        t = threading.Thread(target=lambda: other.append(score_features(Recorder(3), norm, x)))
        t.start()
        t.join()
        assert seen == [1, 1, 1, 1] and np.array_equal(other[0], got)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    np.testing.assert_allclose(got, 1.5 * norm.transform(x)[:, 0], rtol=1e-6)


def test_scores_are_the_model_of_the_formula() -> None:
    """Against float64 scores of a loop written here: ``<w, (x − μ) · s> + b`` with the float32
    normalised values (float32 sums apart)."""
    ds = _data(n_f=5)
    norm = Normalizer.fit("zscore", ds.features)
    model = _model("linear", 5)
    got = TrainedModel(model, norm).predict(ds)
    w, b = model.linear_form()
    inv = (1.0 / norm.scale).astype(np.float32)
    want = np.empty(ds.n_docs)
    for i, row in enumerate(ds.features):
        z = [np.float32(np.float64(row[j]) - norm.mean[j]) * inv[j] for j in range(5)]
        want[i] = sum(float(z[j]) * w[j] for j in range(5)) + b
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_empty_and_mismatched_inputs() -> None:
    ds = _data()
    tm = TrainedModel(_model("linear", ds.n_features), Normalizer.fit("zscore", ds.features))
    assert tm.predict(np.zeros((0, ds.n_features), dtype=np.float32)).shape == (0,)
    from ndcglab.errors import ModelMismatchError

    with pytest.raises(ModelMismatchError, match="expects 7 features"):
        tm.predict(np.zeros((3, 4), dtype=np.float32))


def test_cli_predict_writes_the_two_step_scores(tmp_path: Path) -> None:
    from ndcglab.cli.main import main
    from ndcglab.data import read_letor, write_svmlight

    ds = _data()
    data = tmp_path / "data.txt"
    write_svmlight(data, ds)
    x = read_letor(data).features
    for kind in ("linear", "mlp"):
        tm = TrainedModel(_model(kind, ds.n_features), Normalizer.fit("zscore", ds.features))
        model = tm.save(tmp_path / f"{kind}.zip")
        scores = tmp_path / f"{kind}.txt"
        assert main(["predict", str(model), str(data), "--out", str(scores)]) == 0
        got = np.loadtxt(scores)
        assert np.array_equal(got, tm.model.predict(tm.normalizer.transform(x)))
