"""One front door: ``training.fit``, ``NDCGRanker`` and ``ndcglab train`` give the same model for
the same options, for every model kind of the table, and refuse the same bad options.

The oracle is agreement between three doors that share no code above ``TrainConfig``'s builder:
the predictions on a held-out set must be equal bit for bit (same seed, same options)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ndcglab.data import load_dataset
from ndcglab.errors import SpecError
from ndcglab.training import KINDS, config_from_options, fit, load_trained

TRAIN, VALID, TEST = "synthetic:small:1", "synthetic:small:2", "synthetic:small:3"

#: per kind: the options as Python names, and the same options as command-line flags
CASES = {
    "linear": ({"loss": "listnet", "epochs": 4, "lr": 0.05}, ["--loss", "listnet", "--epochs",
                                                             "4", "--lr", "0.05"]),
    "mlp": ({"loss": "lambdarank", "epochs": 2, "hidden": (8,)}, ["--loss", "lambdarank",
                                                                   "--epochs", "2", "--hidden",
                                                                   "8"]),
    "adarank": ({"rounds": 4}, ["--rounds", "4"]),
    "gbdt": ({"rounds": 6, "num_leaves": 5, "lr": 0.2, "tree_params": {"lambda_l2": 1.0}},
             ["--rounds", "6", "--num-leaves", "5", "--lr", "0.2", "--gbdt-param",
              "lambda_l2=1.0"]),
    "attention": ({"loss": "neural_ndcg", "epochs": 2, "hidden": (8,), "heads": 2, "blocks": 1,
                   "ff_width": 12, "layer_norm": "post", "noise": 0.1, "ensemble": 2},
                  ["--loss", "neural_ndcg", "--epochs", "2", "--hidden", "8", "--heads", "2",
                   "--blocks", "1", "--ff-width", "12", "--layer-norm", "post", "--noise", "0.1",
                   "--ensemble", "2"]),
}  # fmt: skip
#: the second tree engine through the same three doors (its own parameter names pass through)
XGBOOST = ({"rounds": 6, "num_leaves": 5, "lr": 0.2, "engine": "xgboost",
            "tree_params": {"reg_lambda": 2.0}},
           ["--rounds", "6", "--num-leaves", "5", "--lr", "0.2", "--engine", "xgboost",
            "--gbdt-param", "reg_lambda=2.0"])  # fmt: skip


def test_every_kind_has_a_case() -> None:
    assert set(CASES) == set(KINDS)


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ndcglab", *argv], capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("case", [*CASES, "gbdt+xgboost"])
def test_three_doors_give_the_same_model(case: str, tmp_path: Path) -> None:
    kind = case.split("+")[0]
    if kind == "gbdt":
        pytest.importorskip("xgboost" if case.endswith("xgboost") else "lightgbm")
    from ndcglab.estimator import NDCGRanker

    options, flags = XGBOOST if case.endswith("xgboost") else CASES[kind]
    train, valid, test = (load_dataset(s) for s in (TRAIN, VALID, TEST))
    seed = {"seed": 7}

    api = fit(train, config_from_options({"model": kind, **seed, **options}), validation=valid)
    by_api = np.asarray(api.predict(test), dtype=np.float64)

    params = dict(options)
    tree_params = params.pop("tree_params", None)
    ranker = NDCGRanker(model=kind, gbdt_params=tree_params, **seed, **params)
    by_estimator = ranker.fit(train, eval_set=valid).predict(test)

    out = tmp_path / "model.zip"
    proc = _cli("train", TRAIN, "--validation", VALID, "--model", kind, "--seed", "7",
                "--out", str(out), "-q", *flags)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    by_cli = np.asarray(load_trained(out).predict(test), dtype=np.float64)

    assert np.array_equal(by_api, by_estimator)
    assert np.array_equal(by_api, by_cli)
    assert np.ptp(by_api) > 0  # a model that learned something, not constant scores


def test_the_doors_refuse_the_same_tree_option(tmp_path: Path) -> None:
    from ndcglab.estimator import NDCGRanker

    with pytest.raises(SpecError, match="num_leaves must be at least 2"):
        config_from_options({"model": "gbdt", "num_leaves": 1})
    with pytest.raises(SpecError, match="num_leaves must be at least 2"):
        NDCGRanker(model="gbdt", num_leaves=1).fit(load_dataset(TRAIN))
    proc = _cli("train", TRAIN, "--model", "gbdt", "--num-leaves", "1", "--out",
                str(tmp_path / "m.zip"))  # fmt: skip
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1
    # the command line checks its numbers' ranges first (cli._common.NUMBER_RANGES), in its
    # own words: the option and the same lower bound
    assert lines[0].startswith("ndcglab: error: --num-leaves 1 is out of range")
    assert "[2, " in lines[0] and "Fix:" in lines[0]


def test_unknown_option_names_the_known_ones() -> None:
    with pytest.raises(SpecError, match=r"unknown training option.*num_leaves"):
        config_from_options({"num_leafs": 3})


def test_estimator_takes_every_option_of_the_config() -> None:
    """Every field of TrainConfig and TreeOptions is an NDCGRanker parameter (``trees.params``
    as ``gbdt_params``), so the estimator cannot lack an option the command line has."""
    import dataclasses

    from ndcglab.estimator import NDCGRanker
    from ndcglab.training import TrainConfig, TreeOptions

    names = set(NDCGRanker._param_names())
    internal = {"init", "batching", "skip_uninformative", "max_padded", "gd_bucket",
                "eval_every", "dtype", "trees"}  # fmt: skip
    wanted = {f.name for f in dataclasses.fields(TrainConfig)} - internal
    wanted |= {f.name for f in dataclasses.fields(TreeOptions)} - {"params"}
    assert wanted <= names, sorted(wanted - names)


def test_cv_takes_a_synthetic_set_and_equals_fit_then_evaluate() -> None:
    """``cv synthetic:NAME`` runs the rotation folds of the set (shuffled with --seed); its test
    mean is what fitting the fold's train part and evaluating its test part gives."""
    import json

    from ndcglab.data.folds import rotation_folds
    from ndcglab.measures import evaluate

    proc = _cli("cv", TRAIN, "--folds", "2", "--epochs", "3", "--seed", "4", "--measure",
                "ndcg@5", "--format", "json", "-q")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)["listnet"]
    assert got["n_folds"] == 1 and got["folds"][0]["fold"] == "Fold2"
    fold = rotation_folds(load_dataset(TRAIN), seed=4)[1]
    res = fit(fold.train, config_from_options({"epochs": 3, "seed": 4}), validation=fold.vali)
    want = evaluate(fold.test, res.predict(fold.test), ["ndcg@5"], preset="letor4").mean
    assert got["mean"] == dict(want)


def test_train_summary_of_trees_is_an_aligned_table(tmp_path: Path) -> None:
    pytest.importorskip("lightgbm")
    proc = _cli("train", TRAIN, "--model", "gbdt", "--rounds", "3", "-q", "--out",
                str(tmp_path / "m.zip"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.rstrip("\n").splitlines()
    assert len({len(line) for line in lines[1:]}) == 1  # every row as wide as the rule
    assert max(len(line) for line in lines) <= 100
    assert any(line.startswith("best round") for line in lines)


def test_the_trees_file_kind_is_in_the_table() -> None:
    pytest.importorskip("lightgbm")
    from ndcglab.gbdt import GBDTModel

    assert KINDS[GBDTModel.kind].route == "trees"
    assert {k.name for k in KINDS.values() if k.torch} == {"linear", "mlp", "adarank", "attention"}
