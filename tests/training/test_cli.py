"""The train / predict / cv sub-commands, run in-process on small LETOR files in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ndcglab.cli.main import main
from ndcglab.data import RankingDataset

from .conftest import make_ranking_data


def write_letor(path: Path, ds: RankingDataset, *, prefix: str = "q") -> Path:
    """A LETOR 4.0 style file: ``label qid:Q 1:v ... #docid = D``, written here (not by ndcglab)."""
    lines = []
    for q in range(ds.n_queries):
        for i in range(ds.boundaries[q], ds.boundaries[q + 1]):
            feats = " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(ds.features[i]))
            lines.append(f"{int(ds.labels[i])} qid:{prefix}{q} {feats} #docid = d{i}")
    path.write_text("\n".join(lines) + "\n")
    return path


def make_letor_folds(root: Path, *, n_train: int = 24, n_other: int = 12, seed: int = 10) -> Path:
    """Two folds under ``root``, each with train/vali/test files of random ranking data."""
    for f in (1, 2):
        fold = root / f"Fold{f}"
        fold.mkdir()
        for i, part in enumerate(("train", "vali", "test")):
            ds = make_ranking_data(n_train if part == "train" else n_other, seed=seed * f + i)
            write_letor(fold / f"{part}.txt", ds, prefix=f"{part}{f}_")
    return root


@pytest.fixture(scope="module")
def letor_dir(tmp_path_factory) -> Path:
    """Two folds, each with train/vali/test files."""
    return make_letor_folds(tmp_path_factory.mktemp("letor"))


TRAIN_OPTS = ["--epochs", "15", "--lr", "0.5", "--optimizer", "gd", "-q"]


def test_train_predict_evaluate_round_trip(letor_dir: Path, tmp_path: Path, capsys) -> None:
    fold = letor_dir / "Fold1"
    model = tmp_path / "model.ndcg"
    rc = main(
        [
            "train",
            str(fold),
            "--loss",
            "listnet",
            "--out",
            str(model),
            "--format",
            "json",
            *TRAIN_OPTS,
        ]
    )
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == str(model) and model.exists()
    assert out["loss"] == "listnet" and out["epochs_run"] >= 1
    ((name, value),) = out["mean"].items()
    assert "ndcg@10" in name and 0 <= value <= 1

    scores = tmp_path / "scores.txt"
    rc = main(["predict", str(model), str(fold / "test.txt"), "--out", str(scores)])
    assert rc == 0
    capsys.readouterr()
    from ndcglab.data import read_letor, read_scores

    test = read_letor(fold / "test.txt")
    s = read_scores(scores, n_expected=test.n_docs)
    from ndcglab.models import load_model

    np.testing.assert_allclose(s, load_model(model).predict(test), rtol=1e-6)

    rc = main(
        [
            "evaluate",
            str(fold / "test.txt"),
            "--scores",
            str(scores),
            "--preset",
            "letor4",
            "--measure",
            "ndcg@10",
            "--format",
            "json",
        ]
    )
    assert rc == 0
    ev = json.loads(capsys.readouterr().out)
    from ndcglab.measures import evaluate

    expected = evaluate(test, load_model(model).predict(test), ["ndcg@10"], preset="letor4").mean
    assert ev["mean"]["ndcg@10"] == pytest.approx(expected["ndcg@10"], abs=1e-6)


def test_train_files_with_validation_and_checkpoint_resume(
    letor_dir: Path, tmp_path: Path, capsys
) -> None:
    fold = letor_dir / "Fold2"
    ckpt = tmp_path / "ckpt"
    model = tmp_path / "m.ndcg"
    args = [
        "train",
        str(fold / "train.txt"),
        "--validation",
        str(fold / "vali.txt"),
        "--loss",
        "cs_listmle@5",
        "--model",
        "mlp",
        "--hidden",
        "4",
        "--checkpoint",
        str(ckpt),
        "--out",
        str(model),
        "--format",
        "json",
        *TRAIN_OPTS,
    ]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert (ckpt / "checkpoint.pt").exists()
    assert main([*args, "--resume"]) == 0  # a finished run resumes to the same result
    again = json.loads(capsys.readouterr().out)
    assert again["mean"] == first["mean"] and again["best_epoch"] == first["best_epoch"]


def test_predict_refuses_mismatched_data(letor_dir: Path, tmp_path: Path, capsys) -> None:
    model = tmp_path / "m.ndcg"
    assert main(["train", str(letor_dir / "Fold1"), "--out", str(model), *TRAIN_OPTS]) == 0
    # wider than the model: refused (a narrower sparse file is padded: tests/test_cli_habits.py)
    wide = make_ranking_data(5, n_features=8, seed=3)
    bad = write_letor(tmp_path / "bad.txt", wide)
    capsys.readouterr()
    rc = main(["predict", str(model), str(bad), "--out", str(tmp_path / "s.txt")])
    err = capsys.readouterr().err
    assert rc == 2
    assert "expects 6 features" in err and "has 8" in err and "Fix:" in err
    assert not (tmp_path / "s.txt").exists()


def test_train_on_a_multi_fold_folder_is_refused(letor_dir: Path, tmp_path: Path, capsys) -> None:
    rc = main(["train", str(letor_dir), "--out", str(tmp_path / "m"), *TRAIN_OPTS])
    assert rc == 2
    assert "ndcglab cv" in capsys.readouterr().err


def test_cv_json(letor_dir: Path, capsys) -> None:
    rc = main(
        [
            "cv",
            str(letor_dir),
            "--loss",
            "listnet",
            "--loss",
            "adarank(rounds=5)",
            "--preset",
            "letor4",
            "--format",
            "json",
            *TRAIN_OPTS,
        ]
    )
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"listnet", "adarank(rounds=5)"}
    for res in out.values():
        assert len(res["folds"]) == 2
        assert set(res["mean"]) == set(res["std"])
        names = set(res["mean"])
        assert any(n.lower().startswith("map") for n in names)
        assert any(n.lower().startswith("ndcg@10") for n in names)
        for n in names:
            vals = [f["mean"][n] for f in res["folds"]]
            assert res["mean"][n] == pytest.approx(np.mean(vals))
            assert res["std"][n] == pytest.approx(np.std(vals, ddof=1))


def test_cv_text_and_fold_selection(letor_dir: Path, capsys) -> None:
    rc = main(["cv", str(letor_dir), "--folds", "2", "--measures", "ndcg@1,map", *TRAIN_OPTS])
    assert rc == 0
    out = capsys.readouterr().out
    assert "1 folds" in out and "listnet" in out
    rc = main(["cv", str(letor_dir), "--folds", "7", *TRAIN_OPTS])
    assert rc == 2
    assert "no fold '7'" in capsys.readouterr().err
