"""``ndcglab export --format lightgbm``: boosted trees trained with an ndcglab objective, written
as LightGBM's own model text, loaded by plain LightGBM (no ndcglab in the process) and
predicting exactly ``ndcglab predict``'s scores."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("lightgbm")

from ndcglab.cli.main import main
from ndcglab.data import load_dataset, read_letor, read_scores
from ndcglab.gbdt import train_gbdt
from ndcglab.gbdt.export import export_lightgbm

_RUNNER = textwrap.dedent(
    """
    import sys
    import numpy as np
    import lightgbm
    model, features, out = sys.argv[1:4]
    booster = lightgbm.Booster(model_file=model)
    np.save(out, booster.predict(np.load(features)))
    assert "ndcglab" not in sys.modules, "ndcglab was imported"
    """
)


def plain_lightgbm_scores(model: Path, x: np.ndarray, tmp: Path) -> np.ndarray:
    """``lightgbm.Booster(model_file=model).predict(x)`` in a fresh interpreter without ndcglab."""
    features, out = tmp / "x.npy", tmp / "s.npy"
    np.save(features, x)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(model), str(features), str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return np.load(out)


def _predict_and_export(model: Path, data: str, tmp: Path) -> tuple[np.ndarray, Path]:
    scores, text = tmp / "scores.txt", tmp / "model.txt"
    assert main(["predict", str(model), data, "--out", str(scores)]) == 0
    assert main(["export", str(model), "--format", "lightgbm", "--out", str(text)]) == 0
    return read_scores(scores), text


@pytest.mark.parametrize("loss", ["listnet", "consistent_listnet(norm=z10)", "lightgbm:lambdarank"])
def test_plain_lightgbm_predicts_like_ndcglab(tmp_path: Path, loss: str) -> None:
    train = load_dataset("synthetic:default:1")
    valid = load_dataset("synthetic:default:2")
    # early stopping on another set, so the best iteration is usually short of the trees grown
    model = train_gbdt(
        train,
        loss,
        valid=valid,
        num_boost_round=60,
        early_stopping_rounds=5,
        num_leaves=7,
        min_data_in_leaf=5,
    )
    path = tmp_path / "trees.ndcglab"
    model.save(path)
    test_spec = "synthetic:default:3"
    want, text = _predict_and_export(path, test_spec, tmp_path)
    x = load_dataset(test_spec).features
    x[::7, 3] = np.nan  # missing values take the trees' default branches in both
    np.testing.assert_array_equal(plain_lightgbm_scores(text, x, tmp_path), model.predict(x))
    np.testing.assert_array_equal(
        plain_lightgbm_scores(text, load_dataset(test_spec).features, tmp_path), want
    )
    assert "objective=" not in text.read_text().split("Tree=0")[0] or loss.startswith("lightgbm")


def test_only_the_best_iteration_is_exported(tmp_path: Path) -> None:
    train = load_dataset("synthetic:default:1")
    model = train_gbdt(train, "listnet", num_boost_round=12, num_leaves=4, min_data_in_leaf=5)
    model.metadata["model"]["best_iteration"] = 5
    out = export_lightgbm(model, tmp_path / "m.txt")
    text = out.read_text()
    assert text.count("\nTree=") == 5
    scores = plain_lightgbm_scores(out, train.features, tmp_path)
    np.testing.assert_array_equal(scores, model.booster.predict(train.features, num_iteration=5))


@pytest.mark.slow
def test_mq2008_model_trained_by_the_cli(mq2008: Path, tmp_path: Path) -> None:
    fold = mq2008 / "Fold1"
    model = tmp_path / "mq.ndcglab"
    args = ["train", str(fold), "--model", "gbdt", "--loss", "cs_listmle@10", "--rounds", "30"]
    assert main([*args, "--out", str(model), "-q"]) == 0
    (test,) = fold.glob("test.txt*")
    want, text = _predict_and_export(model, str(test), tmp_path)
    got = plain_lightgbm_scores(text, read_letor(test).features, tmp_path)
    np.testing.assert_array_equal(got, want)


def test_boosted_model_refuses_torchscript(tmp_path: Path) -> None:
    """TorchScript is for torch models; boosted trees export as their engine's file or ONNX
    (``tests/gbdt/test_cli_edges.py`` checks the ONNX graph's scores)."""
    train = load_dataset("synthetic:default:1")
    path = tmp_path / "m.ndcglab"
    train_gbdt(train, "listnet", num_boost_round=2, num_leaves=4).save(path)
    argv = ["export", str(path), "--format", "torchscript", "--out", "x"]
    proc = subprocess.run(
        [sys.executable, "-m", "ndcglab", *argv],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "--format lightgbm" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "ndcglab", "export", str(path), "--format", "xgboost", "--out", "x"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2 and "grown by lightgbm" in proc.stderr
