"""``--dask`` on the command line: ``evaluate`` (LETOR + scores, ``--qrels/--run``) and
``train --model gbdt`` on a local cluster of 2 worker processes, equal to the single-process
results; the chosen boosting round; one-line errors for a bad or unreachable scheduler."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("dask")
pytest.importorskip("distributed")
pytest.importorskip("lightgbm")

from ndcglab.data import read_letor

pytestmark = pytest.mark.slow


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ndcglab.cli.main", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("cli_dask")
    for name, seed, n in (("data", 3, 60), ("vali", 4, 30)):
        proc = _cli("generate", "small", "--out", f"{name}.txt", "--seed", str(seed),
                    "--queries", str(n), cwd=d)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    ds = read_letor(d / "data.txt")
    rng = np.random.default_rng(0)
    scores = np.round(rng.random(ds.n_docs), 3)
    np.savetxt(d / "scores.txt", scores)
    b = ds.boundaries
    with open(d / "qrels.txt", "w") as q, open(d / "run.txt", "w") as r:
        for i in range(ds.n_queries):
            for j in range(int(b[i]), int(b[i + 1])):
                q.write(f"{ds.query_ids[i]} 0 d{j} {int(ds.labels[j])}\n")
                r.write(f"{ds.query_ids[i]} Q0 d{j} 0 {scores[j]} sys\n")
    return {"dir": d, **{p.stem: p for p in d.glob("*.txt")}}


def _means(proc: subprocess.CompletedProcess[str]) -> dict[str, float]:
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    return {k: float(v) for k, v in out["mean"].items()} | {"_queries": float(out["queries"])}


def _assert_equal(a: dict[str, float], b: dict[str, float]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert abs(a[k] - b[k]) <= 1e-9, (k, a[k], b[k])


def test_evaluate_letor_scores_on_dask_equals_single_process(files: dict[str, Path]) -> None:
    args = ["evaluate", str(files["data"]), "--scores", str(files["scores"]), "--format", "json"]
    single = _means(_cli(*args, cwd=files["dir"]))
    dask = _means(_cli(*args, "--dask", "local:2", "--dask-memory-limit", "1GiB", cwd=files["dir"]))
    _assert_equal(single, dask)


def test_evaluate_trec_on_dask_equals_single_process(files: dict[str, Path]) -> None:
    args = ["evaluate", "--qrels", str(files["qrels"]), "--run", str(files["run"])]
    args += ["--format", "json"]
    single = _means(_cli(*args, cwd=files["dir"]))
    dask = _means(_cli(*args, "--dask", "local:2", cwd=files["dir"]))
    _assert_equal(single, dask)


def test_train_gbdt_on_dask_chooses_and_saves_the_round(files: dict[str, Path]) -> None:
    from ndcglab.gbdt import GBDTModel, MeasureFeval

    model_path = files["dir"] / "model.ndcg"
    proc = _cli(
        "train", str(files["data"]), "--validation", str(files["vali"]), "--model", "gbdt",
        "--rounds", "12", "--dask", "local:2", "--out", str(model_path), "--format", "json",
        cwd=files["dir"],
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "chosen round" in proc.stderr
    out = json.loads(proc.stdout)
    model = GBDTModel.load(model_path)
    tr = model.metadata["training"]
    assert tr["rounds_run"] == 12 and len(tr["valid_curve"]) == 12
    best = int(np.argmax(tr["valid_curve"])) + 1
    assert model.best_iteration == best == out["best_iteration"] == tr["best_iteration"]
    assert f"chosen round {best} of 12" in proc.stderr
    # the curve of the distributed pass equals evaluating num_iteration=t on the whole set
    vali = read_letor(files["vali"])
    feval = MeasureFeval("ndcg@10", "letor4")
    for t in (1, best, 12):
        raw = model.booster.predict(vali.features, num_iteration=t, raw_score=True)
        want = feval.value(vali.labels.astype(np.float64), raw, vali.boundaries)
        assert abs(tr["valid_curve"][t - 1] - want) <= 1e-9


def test_unreachable_scheduler_is_one_error_line(files: dict[str, Path]) -> None:
    proc = _cli(
        "evaluate", str(files["data"]), "--scores", str(files["scores"]),
        "--dask", "tcp://127.0.0.1:9", "--dask-timeout", "2",
        cwd=files["dir"],
    )  # fmt: skip
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("ndcglab: error: cannot reach the Dask scheduler")
    assert "Traceback" not in proc.stderr


def test_bad_dask_options_are_one_error_line(files: dict[str, Path]) -> None:
    for extra in (["--dask", "local:0"], ["--dask", "local:2", "--feature", "1"]):
        args = ["evaluate", str(files["data"]), *extra]
        if "--feature" not in extra:
            args += ["--scores", str(files["scores"])]
        proc = _cli(*args, cwd=files["dir"])
        assert proc.returncode != 0
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ndcglab: error: "), proc.stderr


def test_patience_with_dask_is_refused_before_any_cluster_starts(files: dict[str, Path]) -> None:
    for command in ("train", "cv"):
        args = [command, str(files["data"]), "--model", "gbdt", "--patience", "5",
                "--dask", "local:2"]  # fmt: skip
        if command == "train":
            args += ["--validation", str(files["vali"]), "--out", str(files["dir"] / "m.ndcg")]
        proc = _cli(*args, cwd=files["dir"])
        assert proc.returncode != 0
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ndcglab: error: --patience"), proc.stderr


def test_cv_gbdt_on_dask_runs_a_fold(files: dict[str, Path]) -> None:
    fold = files["dir"] / "cv" / "Fold1"
    fold.mkdir(parents=True)
    for name, src in (("train", "data"), ("vali", "vali"), ("test", "vali")):
        (fold / f"{name}.txt").write_bytes(files[src].read_bytes())
    proc = _cli(
        "cv", str(fold.parent), "--model", "gbdt", "--rounds", "6", "--dask", "local:2",
        "--measure", "ndcg@10", "--format", "json", cwd=files["dir"],
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    row = json.loads(proc.stdout)["listnet"]["folds"][0]
    assert row["rounds_run"] == 6 and 1 <= row["best_round"] <= 6
    assert row["valid_measure"] == "ndcg@10"
    _assert_no_engine_notes(proc.stderr)


_ENGINE_NOTES = ("[LightGBM]", "will be ignored", "got rank")


def _assert_no_engine_notes(stderr: str) -> None:
    """Only ndcglab's own lines: no engine's log line leaks from the client or the workers."""
    for note in _ENGINE_NOTES:
        assert note not in stderr, stderr
    assert all(line.startswith("ndcglab") for line in stderr.splitlines()), stderr


def test_cv_xgboost_on_dask_prints_no_engine_notes(files: dict[str, Path]) -> None:
    fold = files["dir"] / "cvx" / "Fold1"
    fold.mkdir(parents=True)
    for name, src in (("train", "data"), ("vali", "vali"), ("test", "vali")):
        (fold / f"{name}.txt").write_bytes(files[src].read_bytes())
    proc = _cli(
        "cv", str(fold.parent), "--model", "gbdt", "--engine", "xgboost", "--rounds", "3",
        "--dask", "local:2", "--measure", "ndcg@10", "--format", "json", cwd=files["dir"],
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["listnet"]["folds"][0]["rounds_run"] == 3
    _assert_no_engine_notes(proc.stderr)


def test_missing_distributed_extra_is_one_error_line(files: dict[str, Path]) -> None:
    code = (
        "import sys; sys.modules['distributed'] = None\n"
        "from ndcglab.cli.main import main\n"
        "sys.exit(main(sys.argv[1:]))"
    )
    args = ["evaluate", str(files["data"]), "--scores", str(files["scores"]), "--dask", "local:2"]
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=files["dir"], capture_output=True, text=True
    )
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "ndcglab[distributed]" in lines[0] and lines[0].startswith("ndcglab: error: ")
