"""``ndcglab train --model gbdt`` and ``ndcglab cv --model gbdt``, run in-process."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("lightgbm")

from ndcglab.cli.main import main
from ndcglab.data import read_letor, read_scores
from ndcglab.gbdt import fit_gbdt, load_gbdt
from ndcglab.measures import evaluate

from ..training.test_cli import make_letor_folds

GBDT_OPTS = ["--model", "gbdt", "--rounds", "15", "--min-data-in-leaf", "3", "-q"]


@pytest.fixture(scope="module")
def letor_dir(tmp_path_factory) -> Path:
    return make_letor_folds(tmp_path_factory.mktemp("letor_gbdt"), n_train=30, seed=100)


def test_train_gbdt_writes_a_model_predict_reads(letor_dir: Path, tmp_path: Path, capsys) -> None:
    fold = letor_dir / "Fold1"
    model = tmp_path / "trees.ndcglab"
    args = ["train", str(fold), "--loss", "cs_listmle@5", "--out", str(model), "--format", "json"]
    assert main([*args, *GBDT_OPTS, "--patience", "100"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model_kind"] == "gbdt" and out["loss"] == "cs_listmle@5"
    assert set(out["objective"]["hessian_used"]) == {"closed"}  # CS-ListMLE has a closed form
    ((name, value),) = out["mean"].items()  # best validation NDCG@10 on the fold's vali file
    assert name.startswith("ndcg@10") and 0 <= value <= 1

    # the same training through the Python API gives the same trees
    train = read_letor(fold / "train.txt")
    vali = read_letor(fold / "vali.txt")
    test = read_letor(fold / "test.txt")
    api = fit_gbdt(
        train,
        "cs_listmle@5",
        valid=vali,
        params={"num_boost_round": 15, "min_data_in_leaf": 3, "early_stopping_rounds": 100},
    )
    np.testing.assert_allclose(load_gbdt(model).predict(test), api.predict(test), rtol=1e-12)

    scores = tmp_path / "s.txt"
    assert main(["predict", str(model), str(fold / "test.txt"), "--out", str(scores)]) == 0
    np.testing.assert_allclose(read_scores(scores, n_expected=test.n_docs), api.predict(test))


def test_train_gbdt_refuses_checkpoints(letor_dir: Path, tmp_path: Path, capsys) -> None:
    rc = main(
        [
            "train",
            str(letor_dir / "Fold1"),
            "--out",
            str(tmp_path / "m"),
            "--checkpoint",
            str(tmp_path / "c"),
            *GBDT_OPTS,
        ]
    )
    assert rc == 2
    assert "--checkpoint" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_cv_gbdt_side_by_side_with_lightgbm(letor_dir: Path, capsys) -> None:
    losses = ["listnet", "lightgbm:lambdarank", "lightgbm:rank_xendcg"]
    args = ["cv", str(letor_dir), "--preset", "letor4", "--format", "json", *GBDT_OPTS]
    for loss in losses:
        args += ["--loss", loss]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == losses
    test = read_letor(letor_dir / "Fold2" / "test.txt")
    for loss, res in out.items():
        assert [f["fold"] for f in res["folds"]] == ["Fold1", "Fold2"]
        # fold 2's test values equal a direct fit + evaluate with the same options
        model = fit_gbdt(
            read_letor(letor_dir / "Fold2" / "train.txt"),
            loss,
            valid=read_letor(letor_dir / "Fold2" / "vali.txt"),
            params={"num_boost_round": 15, "min_data_in_leaf": 3},
        )
        ev = evaluate(test, model.predict(test), preset="letor4").mean
        for name, value in res["folds"][1]["mean"].items():
            assert value == pytest.approx(ev[name], abs=1e-12), (loss, name)
