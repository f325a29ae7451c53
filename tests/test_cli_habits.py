"""Habits users bring (a subprocess, as a user runs the command line): sparse files narrower
than the model, ``generate --folds``, and help texts that tell the truth."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from .test_cli_safety import error_line, ndcglab, snapshot

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

TRAIN = (
    "2 qid:1 1:0.9 2:0.1 3:0.5\n0 qid:1 1:0.1 2:0.3 3:0.2\n1 qid:1 1:0.5 2:0.2 3:0.1\n"
    "1 qid:2 1:0.7 2:0.6 3:0.3\n0 qid:2 1:0.2 2:0.9 3:0.4\n0 qid:2 1:0.3 2:0.5 3:0.8\n"
)
#: a sparse file whose highest feature index (2) is below the model's width (3)
SPARSE = "1 qid:7 1:0.4 2:0.2\n0 qid:7 2:0.9\n2 qid:8 1:0.8\n0 qid:8 1:0.1 2:0.5\n"
#: the same documents with every feature written (absent = 0)
DENSE = (
    "1 qid:7 1:0.4 2:0.2 3:0\n0 qid:7 1:0 2:0.9 3:0\n2 qid:8 1:0.8 2:0 3:0\n"
    "0 qid:8 1:0.1 2:0.5 3:0\n"
)


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("habits")
    (d / "train.txt").write_text(TRAIN)
    for kind, extra in (("m.ndcg", ["--model", "linear"]), ("g.ndcg", ["--model", "gbdt"])):
        extra = [*extra, "--rounds", "5"] if "gbdt" in extra else [*extra, "--epochs", "3"]
        res = ndcglab("train", "train.txt", "--out", kind, *extra, "-q", cwd=d)
        assert res.returncode == 0, res.stderr
    return d


@pytest.mark.parametrize("model", ["m.ndcg", "g.ndcg"])
def test_predict_pads_a_sparse_file_narrower_than_the_model(trained, tmp_path, model):
    for name in ("train.txt", model):
        (tmp_path / name).write_bytes((trained / name).read_bytes())
    (tmp_path / "sparse.txt").write_text(SPARSE)
    (tmp_path / "dense.txt").write_text(DENSE)
    for data, out in (("sparse.txt", "a.txt"), ("dense.txt", "b.txt")):
        res = ndcglab("predict", model, data, "--out", out, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
    a = np.loadtxt(tmp_path / "a.txt")
    b = np.loadtxt(tmp_path / "b.txt")
    assert a.shape == (4,)
    np.testing.assert_array_equal(a, b)  # the oracle: the same file with its zeros written


def test_a_file_wider_than_the_model_is_still_refused(trained, tmp_path):
    (tmp_path / "m.ndcg").write_bytes((trained / "m.ndcg").read_bytes())
    (tmp_path / "wide.txt").write_text("1 qid:1 1:0.5 4:0.3\n0 qid:1 2:0.1\n")
    res = ndcglab("predict", "m.ndcg", "wide.txt", "--out", "p.txt", cwd=tmp_path)
    error_line(res, "3 features", "Fix:")
    assert not (tmp_path / "p.txt").exists()


@pytest.mark.parametrize("model", [["--model", "linear", "--epochs", "2"], ["--model", "gbdt"]])
def test_a_sparse_validation_file_narrower_than_the_training_set(trained, tmp_path, model):
    (tmp_path / "train.txt").write_text(TRAIN)
    (tmp_path / "vali.txt").write_text(SPARSE)
    extra = ["--rounds", "3"] if "gbdt" in model else []
    res = ndcglab(
        "train", "train.txt", "--validation", "vali.txt", "--out", "m.ndcg", *model, *extra,
        "-q", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    # and the other way round: training data narrower than the validation file
    (tmp_path / "narrow.txt").write_text(SPARSE)
    (tmp_path / "wide_vali.txt").write_text(TRAIN)
    res = ndcglab(
        "train", "narrow.txt", "--validation", "wide_vali.txt", "--out", "n.ndcg", *model,
        *extra, "-q", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr


def test_generate_folds_writes_a_letor_fold_folder(tmp_path):
    from ndcglab.data import load_letor_folder, read_letor

    res = ndcglab("generate", "small", "--folds", "5", "--out", "F", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    ndcglab("generate", "small", "--out", "all.txt", cwd=tmp_path)
    everything = read_letor(tmp_path / "all.txt")
    all_q = set(everything.query_ids.tolist())
    folds = load_letor_folder(tmp_path / "F")
    assert [f.name for f in folds] == [f"Fold{i}" for i in range(1, 6)]
    tested: list[str] = []
    for f in folds:
        parts = {k: set(getattr(f, k).query_ids.tolist()) for k in ("train", "vali", "test")}
        assert parts["train"] | parts["vali"] | parts["test"] == all_q
        assert not (parts["train"] & parts["vali"] or parts["train"] & parts["test"])
        assert not parts["vali"] & parts["test"]
        tested += sorted(parts["test"])
    assert sorted(tested) == sorted(all_q)  # every query tested exactly once
    # the documents are the single file's, query by query
    joined = {q: None for q in tested}
    assert len(joined) == everything.n_queries
    # an existing folder with content is refused and kept
    before = snapshot(tmp_path)
    res = ndcglab("generate", "small", "--folds", "5", "--out", "F", cwd=tmp_path)
    error_line(res, "not empty", "Fix:")
    assert snapshot(tmp_path) == before
    # cv reads it
    res = ndcglab("cv", "F", "--folds", "1", "--epochs", "1", "-q", cwd=tmp_path)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("k", ["2", "0", "-5"])
def test_generate_folds_needs_three_or_more(tmp_path, k):
    res = ndcglab("generate", "small", "--folds", k, "--out", "F", cwd=tmp_path)
    error_line(res, "--folds", "Fix:")
    assert not (tmp_path / "F").exists()


# ---------------------------------------------------------------- help tells the truth
def _help(*argv: str) -> str:
    res = subprocess.run(
        [sys.executable, "-m", "ndcglab", *argv, "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_reproduce_help_lists_every_experiment():
    from ndcglab.reproduce import EXPERIMENTS

    text = " ".join(_help("reproduce").split())
    for name in EXPERIMENTS:
        assert name in text, name


def test_no_help_text_shows_raw_double_backticks():
    from ndcglab.cli.main import COMMANDS

    for name in COMMANDS:
        text = _help(name)
        assert "``" not in text, (name, re.findall(r".{30}``.{30}", text)[:3])


def test_reproduce_help_describes_every_experiment_on_its_own_line():
    from ndcglab.reproduce import EXPERIMENTS

    lines = _help("reproduce").splitlines()
    for name in [*EXPERIMENTS, "all"]:
        assert any(ln.startswith(f"  {name} ") for ln in lines), name


def test_list_experiments_offers_data_only_where_it_is_read(tmp_path):
    """An experiment offers --data exactly when its run reads ``settings.data`` (directly or
    through the shared data source): the oracle reads each module's source."""
    import importlib
    import inspect
    import json

    from ndcglab.reproduce import EXPERIMENTS

    res = subprocess.run(
        [sys.executable, "-m", "ndcglab", "list", "experiments", "--format", "json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    offered = {it["name"]: "data" in it["parameters"] for it in json.loads(res.stdout)["items"]}
    for name, module in EXPERIMENTS.items():
        src = inspect.getsource(importlib.import_module(f"ndcglab.reproduce.{module}"))
        reads = "source_for(settings)" in src or "settings.data" in src.replace(
            "if settings.data is not None:\n        report", ""
        )
        if name == "limits":
            reads = False  # it only says that --data is not used
        assert offered[name] == reads, name


@pytest.mark.parametrize("preset", ["letor4", "letor3"])
def test_letor_presets_warn_when_labels_exceed_the_scripts_grades(tmp_path, preset):
    """Labels 3 and 4 (MSLR-style) under a LETOR preset: one warning line naming the count and
    the fix; the value is the script's (gain 0 for them: the oracle is the same file with those
    labels written as 0, which the script scores identically), and the graded presets stay
    silent."""
    (tmp_path / "g.txt").write_text("4 qid:1 1:0.9\n0 qid:1 1:0.1\n2 qid:2 1:0.5\n3 qid:2 1:0.4\n")
    (tmp_path / "z.txt").write_text("0 qid:1 1:0.9\n0 qid:1 1:0.1\n2 qid:2 1:0.5\n0 qid:2 1:0.4\n")
    (tmp_path / "s.txt").write_text("1\n2\n3\n4\n")
    got = ndcglab("evaluate", "g.txt", "--scores", "s.txt", "--preset", preset,
                  "--format", "json", cwd=tmp_path)  # fmt: skip
    assert got.returncode == 0, got.stderr
    warnings = [ln for ln in got.stderr.splitlines() if ln.startswith("ndcglab: warning:")]
    assert len(warnings) == 1, got.stderr
    assert "2 document(s)" in warnings[0] and "up to 4" in warnings[0] and "Fix:" in warnings[0]
    zero = ndcglab("evaluate", "z.txt", "--scores", "s.txt", "--preset", preset,
                   "--format", "json", cwd=tmp_path)  # fmt: skip
    import json

    assert json.loads(got.stdout)["mean"] == json.loads(zero.stdout)["mean"]
    assert "warning" not in zero.stderr
    for graded in ("standard", "lightgbm"):
        res = ndcglab("evaluate", "g.txt", "--scores", "s.txt", "--preset", graded, cwd=tmp_path)
        assert res.returncode == 0 and "warning" not in res.stderr, res.stderr


def test_generated_folds_are_the_folds_cv_builds_from_the_same_data(tmp_path):
    """One fold rule: ``generate NAME --folds 5`` writes the folds that ``cv synthetic:NAME``
    (``rotation_folds``, seed 0) builds in memory, query for query."""
    from ndcglab.data import load_dataset, load_letor_folder
    from ndcglab.data.folds import rotation_folds

    res = ndcglab("generate", "small", "--folds", "5", "--out", "F", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    written = load_letor_folder(tmp_path / "F")
    in_memory = rotation_folds(load_dataset("synthetic:small"), 5, seed=0)
    for w, m in zip(written, in_memory, strict=True):
        assert w.name == m.name
        for part in ("train", "vali", "test"):
            assert getattr(w, part).query_ids.tolist() == getattr(m, part).query_ids.tolist()
