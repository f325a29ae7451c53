"""Full-batch L-BFGS (``optimizer="lbfgs"``) and hyper-parameter tuning (:func:`tune`).

Oracles: the least-squares solution of NumPy for the squared loss (the L-BFGS minimiser must be
it), separate training runs for the shared-run shortcut of the tuning (same numbers), and the
tuning rules written out here (target measure, ties, failed trials).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ndcglab.errors import SpecError
from ndcglab.measures import evaluate
from ndcglab.training import TrainConfig, TrainingDivergedError, target_measure, train, tune
from ndcglab.training.tuning import parse_grid

from .conftest import make_ranking_data
from .test_cli import make_letor_folds


def _ndcg(ds, scores, k: int) -> float:
    return float(evaluate(ds, scores, [f"ndcg@{k}"], preset="letor4").mean[f"ndcg@{k}"])


# ----------------------------------------------------------------------------------- L-BFGS
def test_lbfgs_reaches_the_least_squares_minimiser() -> None:
    """Squared loss, linear model with bias, no normalisation: the minimiser of
    (1/Q) Σ_q Σ_j (w·x_j + b − (2^y_j − 1))² is the least-squares fit over all documents."""
    ds = make_ranking_data(40, 5, seed=3)
    res = train(
        ds,
        TrainConfig(
            loss="squared",
            optimizer="lbfgs",
            dtype="float64",
            normalize="none",
            skip_uninformative=False,
            tol=1e-14,
            gtol=1e-9,
            epochs=500,
        ),
        progress=False,
    )
    assert res.converged is True and res.stop_reason == "converged"
    a = np.hstack([ds.features.astype(np.float64), np.ones((ds.n_docs, 1))])
    target = 2.0**ds.labels - 1.0
    coef, *_ = np.linalg.lstsq(a, target, rcond=None)
    lin = res.model.linear
    w = lin.weight.detach().numpy().ravel()
    b = float(lin.bias.detach().numpy()[0])
    np.testing.assert_allclose(w, coef[:-1], rtol=0, atol=1e-6)
    assert abs(b - coef[-1]) < 1e-6
    # the reported objective is the mean squared error per query at the returned weights
    resid = a @ coef - target
    assert abs(res.final_loss - float(resid @ resid) / ds.n_queries) < 1e-8
    assert res.grad_norm is not None and res.grad_norm < 1e-6
    assert res.trained.metadata["converged"] is True


def test_lbfgs_reports_an_unfinished_run_as_not_converged() -> None:
    ds = make_ranking_data(30, 5, seed=4)
    res = train(
        ds,
        TrainConfig(loss="listnet", optimizer="lbfgs", epochs=2, gtol=0.0, tol=0.0),
        progress=False,
    )
    assert res.stop_reason == "max_epochs" and res.epochs_run == 2
    assert res.converged is False and res.grad_norm > 0


def test_lbfgs_history_loss_decreases_and_adam_has_no_convergence_status() -> None:
    ds = make_ranking_data(30, 5, seed=5)
    res = train(ds, TrainConfig(loss="listnet", optimizer="lbfgs", dtype="float64"), progress=False)
    losses = [h["loss"] for h in res.history]
    assert all(b <= a + 1e-12 for a, b in itertools.pairwise(losses))  # strong Wolfe: descent
    assert res.final_loss <= losses[-1] + 1e-12
    adam = train(ds, TrainConfig(loss="listnet", epochs=3), progress=False)
    assert adam.converged is None and adam.grad_norm is None


# ----------------------------------------------------------------------------------- tuning
@pytest.fixture(scope="module")
def split():
    ds = make_ranking_data(60, 6, seed=8)
    return ds.subset(np.arange(40)), ds.subset(np.arange(40, 60))


def test_target_measure_rule() -> None:
    assert target_measure("cs_listmle@1", "ndcg@10") == "ndcg@1"
    assert target_measure("cs_listmle@5", "ndcg@10") == "ndcg@5"
    assert target_measure("listmle", "ndcg@10") == "ndcg@10"
    assert target_measure("listnet", "map") == "map"


def test_shared_gd_runs_equal_separate_runs(split) -> None:
    """Grid points that differ in tol and epochs share one run: each must equal its own run."""
    tr, va = split
    cfg = TrainConfig(loss="cs_listmle@3", optimizer="gd")
    grid = {"lr": [0.01, 0.2], "tol": [1e-2, 1e-5], "epochs": [5, 40]}
    res = tune(tr, cfg, validation=va, grid=grid)
    assert res.target == "ndcg@3" or res.target.lower() == "ndcg@3"
    assert len(res.trials) == 8
    for t in res.trials:
        own = train(
            tr, TrainConfig(loss="cs_listmle@3", optimizer="gd", **t["params"]), progress=False
        )
        assert t["epochs_run"] == own.epochs_run, t
        assert t["stop_reason"] == own.stop_reason, t
        assert t["score"] == _ndcg(va, own.trained.predict(va), 3), t
    best = max(t["score"] for t in res.trials)
    first_best = next(t for t in res.trials if t["score"] == best)
    assert res.chosen == first_best["params"]
    assert res.result.best_score == best  # the retrained chosen point gives the same weights
    meta = res.result.trained.metadata
    assert meta["tuning"]["chosen"] == res.chosen and meta["training"]["lr"] == res.chosen["lr"]


def test_a_diverging_grid_point_is_failed_and_never_chosen(split) -> None:
    tr, va = split
    res = tune(
        tr,
        TrainConfig(loss="squared", optimizer="gd", epochs=60),
        validation=va,
        grid={"lr": [1e-3, 10.0]},
    )
    failed = [t for t in res.trials if t["score"] is None]
    assert [t["params"]["lr"] for t in failed] == [10.0]
    assert failed[0]["stop_reason"] == "diverged" and "inf" in failed[0]["error"]
    assert res.chosen == {"lr": 1e-3}
    with pytest.raises(TrainingDivergedError):
        tune(
            tr,
            TrainConfig(loss="squared", optimizer="gd", epochs=60),
            validation=va,
            grid={"lr": [10.0, 50.0]},
        )


def test_select_epoch_scores_each_trial_by_its_best_epoch(split) -> None:
    tr, va = split
    res = tune(
        tr,
        TrainConfig(loss="listnet", optimizer="adam", epochs=8),
        validation=va,
        grid={"lr": [1e-3, 3e-2]},
        select_epoch=True,
    )
    for t in res.trials:
        own = train(
            tr,
            TrainConfig(loss="listnet", optimizer="adam", epochs=8, lr=t["params"]["lr"]),
            validation=va,
            progress=False,
        )
        assert t["score"] == own.best_score
        assert t["best_epoch"] == own.best_epoch


def test_grid_text_and_errors() -> None:
    assert parse_grid("lr=0.01,0.1; tol=1e-3") == {"lr": [0.01, 0.1], "tol": [0.001]}
    assert parse_grid("epochs=10,30") == {"epochs": [10, 30]}
    for bad in ("lr", "lr=", "foo=1", "lr=a", "lr=1;lr=2", ""):
        with pytest.raises(SpecError):
            parse_grid(bad)


# ----------------------------------------------------------------------------------- CLI
def _ndcglab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ndcglab.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def letor_dir(tmp_path_factory) -> Path:
    return make_letor_folds(tmp_path_factory.mktemp("letor_tune"))


def test_cv_tune_json_reports_the_chosen_values_per_fold(letor_dir: Path) -> None:
    p = _ndcglab(
        "cv",
        str(letor_dir),
        "--loss",
        "cs_listmle@1",
        "--loss",
        "listmle",
        "--model",
        "linear",
        "--optimizer",
        "gd",
        "--tune",
        "--tune-grid",
        "lr=0.01,0.1;epochs=5,20",
        "--normalize",
        "query_minmax",
        "--format",
        "json",
        "-q",
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    for loss, target in (("cs_listmle@1", "ndcg@1"), ("listmle", "ndcg@10")):
        assert out[loss]["tuned"] is True
        folds = out[loss]["folds"]
        assert [f["fold"] for f in folds] == ["Fold1", "Fold2"]
        for f in folds:
            tun = f["tuning"]
            assert tun["target"].lower() == target
            assert set(tun["chosen"]) == {"lr", "epochs"}
            assert len(tun["trials"]) == 4
            best = max(t["score"] for t in tun["trials"])
            assert tun["chosen"] == next(t for t in tun["trials"] if t["score"] == best)["params"]
            assert f["valid"] == best


def test_train_tune_saves_the_choice_in_the_model(letor_dir: Path, tmp_path: Path) -> None:
    model = tmp_path / "m.ndcg"
    p = _ndcglab(
        "train",
        str(letor_dir / "Fold1"),
        "--loss",
        "listnet",
        "--optimizer",
        "lbfgs",
        "--tune",
        "--tune-grid",
        "l2=0,0.01",
        "--out",
        str(model),
        "--format",
        "json",
        "-q",
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["tuning"]["chosen"]["l2"] in (0.0, 0.01)
    assert out["converged"] in (True, False)
    from ndcglab.models import load_model

    meta = load_model(model).metadata
    assert meta["tuning"]["chosen"] == out["tuning"]["chosen"]


@pytest.mark.parametrize(
    "args, words",
    [
        (["--tune-grid", "lr=0.1"], "--tune-grid is given without --tune"),
        (["--tune", "--tune-grid", "speed=1"], "'speed' cannot be tuned"),
        (["--tune", "--tune-grid", "lr=fast"], "is not a number"),
        (["--tune", "--model", "adarank"], "--model adarank has none"),
    ],
)
def test_cv_tune_bad_input_is_one_line(letor_dir: Path, args: list[str], words: str) -> None:
    p = _ndcglab("cv", str(letor_dir), "-q", *args)
    assert p.returncode != 0
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ndcglab: error:"), p.stderr
    assert words in lines[0]
    assert "Traceback" not in p.stderr


def test_train_tune_without_validation_is_one_line(tmp_path: Path) -> None:
    p = _ndcglab("train", "synthetic:default", "--tune", "--out", str(tmp_path / "m"))
    assert p.returncode != 0
    assert p.stderr.strip().startswith("ndcglab: error: --tune chooses hyper-parameters")
    assert len(p.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "m").exists()
