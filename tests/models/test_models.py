"""Models: shapes, configs, prediction, save/load round trip and mismatch refusal."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest
import torch

from ndcglab.data import Normalizer
from ndcglab.errors import DataFormatError, ModelMismatchError, SpecError
from ndcglab.models import (
    AdaRank,
    LinearModel,
    MLPModel,
    RankModel,
    TrainedModel,
    build_model,
    load_model,
    make_model,
    read_metadata,
    save_model,
)


@pytest.mark.parametrize(
    "model",
    [
        LinearModel(5),
        LinearModel(5, bias=False, init="normal"),
        MLPModel(5, hidden=(8, 4), activation="tanh", dropout=0.1),
        AdaRank(5),
    ],
    ids=["linear", "linear-nobias", "mlp", "adarank"],
)
@pytest.mark.parametrize("shape", [(7,), (3, 7), (2, 3, 7)])
def test_shapes(model: RankModel, shape: tuple[int, ...]) -> None:
    x = torch.randn(*shape, 5)
    assert model(x).shape == shape
    assert isinstance(model, torch.nn.Module)


def test_linear_is_inner_product_plus_bias() -> None:
    m = LinearModel(3)
    with torch.no_grad():
        m.linear.weight.copy_(torch.tensor([[1.0, -2.0, 0.5]]))
        m.linear.bias.fill_(0.25)
    x = np.array([[1.0, 1.0, 2.0], [0.0, 3.0, -2.0]], dtype=np.float32)
    np.testing.assert_allclose(m.predict(x), x @ np.array([1.0, -2.0, 0.5]) + 0.25, rtol=1e-6)
    assert m.predict(x).dtype == np.float64
    np.testing.assert_array_equal(m.weight, [1.0, -2.0, 0.5])


def test_linear_starts_at_zero() -> None:
    m = LinearModel(4)
    assert not m.predict(np.ones((3, 4), dtype=np.float32)).any()


def test_mlp_predict_is_deterministic_in_eval_mode() -> None:
    torch.manual_seed(0)
    m = MLPModel(4, hidden=(16,), dropout=0.5)
    x = np.random.default_rng(0).normal(size=(20, 4)).astype(np.float32)
    np.testing.assert_array_equal(m.predict(x), m.predict(x))
    assert m.training  # predict restores the mode


@pytest.mark.parametrize(
    "kind,params",
    [
        ("linear", {"bias": False}),
        ("mlp", {"hidden": (3, 2), "activation": "gelu"}),
        ("adarank", {}),
    ],
)
def test_config_round_trip(kind: str, params: dict) -> None:
    m = make_model(kind, 6, **params)
    again = build_model(m.config())
    assert type(again) is type(m)
    assert again.config() == m.config()


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(SpecError, match="unknown model 'tree'"):
        make_model("tree", 3)
    with pytest.raises(SpecError, match="activation"):
        MLPModel(3, activation="swishy")
    with pytest.raises(SpecError, match="dropout"):
        MLPModel(3, dropout=1.0)
    with pytest.raises(SpecError, match="at least one feature"):
        LinearModel(0)


def _trained(kind: str, n_features: int = 5) -> TrainedModel:
    torch.manual_seed(1)
    m = make_model(kind, n_features, **({"init": "normal"} if kind == "linear" else {}))
    if kind == "adarank":
        m.weight.copy_(torch.arange(n_features, dtype=torch.float64))
    x = np.random.default_rng(0).normal(size=(50, n_features))
    norm = Normalizer.fit("zscore", x)
    return TrainedModel(m, norm, {"loss": "listnet", "seed": 3, "training_measure": "ndcg@10"})


@pytest.mark.parametrize("kind", ["linear", "mlp", "adarank"])
def test_save_load_round_trip(tmp_path, kind: str) -> None:
    trained = _trained(kind)
    x = np.random.default_rng(1).normal(size=(30, 5)).astype(np.float32)
    path = save_model(
        tmp_path / "m.ndcg", trained.model, trained.metadata, normalizer=trained.normalizer
    )
    back = load_model(path)
    np.testing.assert_array_equal(back.predict(x, group=[30]), trained.predict(x, group=[30]))
    assert back.model.config() == trained.model.config()
    meta = read_metadata(path)
    assert meta["n_features"] == 5
    assert meta["loss"] == "listnet"
    assert meta["seed"] == 3
    assert meta["normalization"]["method"] == "zscore"
    assert set(meta["versions"]) >= {"ndcglab", "torch", "numpy"}
    assert meta["training_measure"] == "ndcg@10"
    # one file, no temporary left behind
    assert [p.name for p in tmp_path.iterdir()] == ["m.ndcg"]
    with zipfile.ZipFile(path) as zf:
        assert set(zf.namelist()) == {"metadata.json", "weights.pt"}


def test_mismatched_data_is_refused(tmp_path) -> None:
    path = _trained("linear").save(tmp_path / "m.ndcg")
    model = load_model(path)
    with pytest.raises(ModelMismatchError, match=r"expects 5 features .* has 4\. Fix:"):
        model.predict(np.zeros((3, 4), dtype=np.float32))
    with pytest.raises(ModelMismatchError, match="expects 5 features"):
        load_model(path, n_features=7)


def test_not_a_model_file(tmp_path) -> None:
    bad = tmp_path / "x.txt"
    bad.write_text("hello")
    with pytest.raises(DataFormatError, match="not an ndcglab model file"):
        load_model(bad)
    with pytest.raises(DataFormatError, match="not found"):
        load_model(tmp_path / "missing")
