"""XGBoost as a second boosting engine: every registered differentiable loss as an XGBoost
custom objective with the LightGBM objective's gradients and Hessians (same loss, same batch);
training, prediction, the model file and the export to XGBoost's own JSON."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("xgboost")
pytest.importorskip("lightgbm")
pytest.importorskip("torch")

import lightgbm as lgb
import xgboost as xgb

from ndcglab.cli.main import main
from ndcglab.data import load_dataset, read_scores
from ndcglab.errors import SpecError
from ndcglab.estimator import load_trained
from ndcglab.gbdt import LossObjective
from ndcglab.gbdt.xgboost_model import XGBoostModel
from ndcglab.gbdt.xgboost_objective import XGBoostObjective
from ndcglab.gbdt.xgboost_train import fit_xgboost, train_xgboost
from ndcglab.losses import available_losses
from ndcglab.measures import evaluate_arrays

from . import oracle_losses as S

#: every registered differentiable loss, with a cut-off where the family is usually cut
SPECS = [*available_losses("differentiable"), "cs_listmle@10", "lambdaloss@10"]


def _lgb_dataset(y, b, weight=None):
    x = np.zeros((len(y), 1), dtype=np.float32)
    return lgb.Dataset(x, label=y, group=np.diff(b), weight=weight).construct()


@pytest.mark.parametrize("spec", SPECS)
def test_gradients_and_hessians_equal_lightgbm_objective(spec: str) -> None:
    y, s, b = S.random_lists(seed=11, n_queries=25, max_len=20, levels=4)
    d = xgb.DMatrix(np.zeros((len(y), 1), dtype=np.float32), label=y, group=np.diff(b))
    gx, hx = XGBoostObjective(spec)(s, d)
    gl, hl = LossObjective(spec)(s, _lgb_dataset(y, b))
    np.testing.assert_array_equal(gx, gl)
    np.testing.assert_array_equal(hx, hl)
    assert np.isfinite(gx).all() and (hx > 0).all()


@pytest.mark.parametrize("spec", ["listnet", "ranknet", "consistent_listnet(norm=z10)"])
def test_gradient_is_the_loss_gradient(spec: str) -> None:
    """Against an oracle that is not the objective: per list, unpadded autograd of the loss."""
    from ndcglab.losses import get_loss

    y, s, b = S.random_lists(seed=5, n_queries=12, max_len=15, levels=3)
    d = xgb.DMatrix(np.zeros((len(y), 1), dtype=np.float32), label=y, group=np.diff(b))
    g, h = XGBoostObjective(spec, hessian="exact")(s, d)
    g_ref, h_ref, _ = S.reference_grad_hess(get_loss(spec), y, s, b)
    np.testing.assert_allclose(g, g_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(h, np.maximum(h_ref, 1e-6), rtol=1e-9, atol=1e-12)


def test_query_weights_scale_each_query() -> None:
    """XGBoost's ranking weights are one per query; LightGBM's one per document."""
    y, s, b = S.random_lists(seed=2, n_queries=10, max_len=12)
    wq = np.linspace(0.5, 2.0, len(b) - 1)
    d = xgb.DMatrix(np.zeros((len(y), 1), dtype=np.float32), label=y, group=np.diff(b))
    d.set_weight(wq)
    gx, hx = XGBoostObjective("listnet")(s, d)
    gl, hl = LossObjective("listnet")(s, _lgb_dataset(y, b, weight=np.repeat(wq, np.diff(b))))
    np.testing.assert_allclose(gx, gl, rtol=1e-6)  # XGBoost stores weights as float32
    np.testing.assert_allclose(hx, hl, rtol=1e-6)


def test_objective_needs_groups() -> None:
    d = xgb.DMatrix(np.zeros((4, 1), dtype=np.float32), label=np.arange(4.0))
    with pytest.raises(SpecError, match="query groups"):
        XGBoostObjective("listnet")(np.zeros(4), d)


def test_training_starts_from_zero_with_the_lightgbm_gradients() -> None:
    """In XGBoost's first round the objective sees scores 0 (``base_score`` 0) and returns the
    LightGBM objective's derivatives at 0."""
    ds = load_dataset("synthetic:default:1")
    seen: list[np.ndarray] = []

    class Spy(XGBoostObjective):
        def __call__(self, predt, dtrain):
            seen.append(np.array(predt, dtype=np.float64))
            return super().__call__(predt, dtrain)

    from ndcglab.gbdt import xgboost_train

    original = xgboost_train.XGBoostObjective
    xgboost_train.XGBoostObjective = Spy  # type: ignore[misc]
    try:
        train_xgboost(ds, "consistent_listnet(norm=z10)", num_boost_round=2, num_threads=1)
    finally:
        xgboost_train.XGBoostObjective = original  # type: ignore[misc]
    assert len(seen) == 2
    np.testing.assert_array_equal(seen[0], 0.0)
    assert np.abs(seen[1]).max() > 0


@pytest.mark.parametrize("loss", ["listnet", "cs_listmle@10", "lambdaloss@10", "xgboost:rank:ndcg"])
def test_small_training_run_learns_and_round_trips(tmp_path: Path, loss: str) -> None:
    train = load_dataset("synthetic:default:1")
    valid = load_dataset("synthetic:default:2")
    test = load_dataset("synthetic:default:3")
    model = train_xgboost(
        train, loss, valid=valid, num_boost_round=25, early_stopping_rounds=5, num_threads=1
    )
    assert isinstance(model, XGBoostModel)
    curve = model.metadata["training"]["valid_curve"]
    assert model.best_iteration == int(np.argmax(curve)) + 1
    scores = model.predict(test)

    def ndcg(s: np.ndarray) -> float:
        res = evaluate_arrays(test.labels, s, test.boundaries, ["ndcg@10"], preset="letor4")
        return float(next(iter(res.mean.values())))

    rng = np.random.default_rng(0)
    random = np.mean([ndcg(rng.normal(size=test.n_docs)) for _ in range(5)])
    assert ndcg(scores) > random + 0.05
    # the booster's own prediction with the best round's trees
    direct = model.booster.predict(
        xgb.DMatrix(test.features), iteration_range=(0, model.best_iteration), output_margin=True
    )
    np.testing.assert_allclose(scores, direct, rtol=1e-6, atol=1e-7)

    path = tmp_path / "xgb.ndcglab"
    model.save(path)
    loaded = load_trained(path)
    assert isinstance(loaded, XGBoostModel) and loaded.best_iteration == model.best_iteration
    np.testing.assert_array_equal(loaded.predict(test), scores)
    out = tmp_path / "scores.txt"
    assert main(["predict", str(path), "synthetic:default:3", "--out", str(out)]) == 0
    np.testing.assert_allclose(read_scores(out), scores, rtol=1e-12)


_RUNNER = textwrap.dedent(
    """
    import sys
    import numpy as np
    import xgboost
    model, features, out = sys.argv[1:4]
    booster = xgboost.Booster(model_file=model)
    np.save(out, booster.predict(xgboost.DMatrix(np.load(features)), output_margin=True))
    assert "ndcglab" not in sys.modules, "ndcglab was imported"
    """
)


def test_export_as_plain_xgboost_json(tmp_path: Path) -> None:
    ds = load_dataset("synthetic:default:1")
    model = train_xgboost(
        ds, "listnet", valid=load_dataset("synthetic:default:2"), num_boost_round=15
    )
    model.metadata["model"]["best_iteration"] = 6  # only these trees are exported
    path = tmp_path / "m.ndcglab"
    model.save(path)
    out = tmp_path / "m.json"
    assert main(["export", str(path), "--format", "xgboost", "--out", str(out)]) == 0
    np.save(tmp_path / "x.npy", ds.features)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(out), str(tmp_path / "x.npy"), str(tmp_path / "s.npy")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_allclose(np.load(tmp_path / "s.npy"), model.predict(ds), rtol=1e-6)
    assert main(["export", str(path), "--format", "lightgbm", "--out", str(out)]) == 2


def test_fit_xgboost_reads_one_dict_with_aliases() -> None:
    ds = load_dataset("synthetic:default:1")
    m = fit_xgboost(ds, "listnet", params={"n_estimators": 3, "eta": 0.2, "lambda": 0.5})
    assert m.booster.num_boosted_rounds() == 3
    assert m.metadata["params"]["eta"] == 0.2 and m.metadata["params"]["lambda"] == 0.5


def test_unknown_builtin_is_refused() -> None:
    with pytest.raises(SpecError, match="rank:ndcg"):
        train_xgboost(load_dataset("synthetic:default:1"), "xgboost:rank:bogus")
