"""The command line as a user meets it, each command run as a subprocess (``python -m
ndcglab.cli.main``): cv's repeatable --measure, diverged losses, progress and GBDT rounds; Ctrl-C
during train; describe on a LETOR folder; ndcglab list; predict --format trec read back by
read_run and pytrec_eval; help texts without reStructuredText markup."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ndcglab.data import dataset_to_qrels, load_dataset, read_letor, read_run
from ndcglab.measures import evaluate

from ..conftest import cli_argv, interrupt
from .test_cli import make_letor_folds

TRAIN_OPTS = ["--epochs", "8", "--lr", "0.5", "--optimizer", "gd"]


def ndcglab(*args: str, timeout: float = 300, **kw) -> subprocess.CompletedProcess:
    """Run ``ndcglab ARGS`` in a subprocess; returns the completed process (text mode)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [sys.executable, "-m", "ndcglab.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        **kw,
    )


@pytest.fixture(scope="module")
def letor_dir(tmp_path_factory) -> Path:
    return make_letor_folds(tmp_path_factory.mktemp("letor"))


# ---------------------------------------------------------------------------------------- cv
def test_cv_repeatable_measure_with_commas_in_brackets(letor_dir: Path) -> None:
    spec = "ndcg(gain=linear,discount=power:0.5)@10"
    r = ndcglab(
        "cv", str(letor_dir), "--measure", spec, "--measure", "map", "--format", "json", "-q",
        *TRAIN_OPTS,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)["listnet"]
    names = list(out["mean"])
    assert len(names) == 2 and names[1] == "map" and "power:0.5" in names[0]
    assert "linear" in names[0] and names[0].endswith("@10")
    # the fold values are those of evaluate() on the same measure
    assert all(set(f["mean"]) == set(names) for f in out["folds"])
    # the deprecated comma list still works for the same measures, with a note on stderr
    r2 = ndcglab(
        "cv", str(letor_dir), "--measures", f"{spec},map", "--format", "json", "-q", *TRAIN_OPTS
    )
    assert r2.returncode == 0, r2.stderr
    assert "deprecated" in r2.stderr and "--measure" in r2.stderr
    assert json.loads(r2.stdout)["listnet"]["mean"] == out["mean"]


def test_cv_bad_measure_is_one_line_before_training(letor_dir: Path) -> None:
    r = ndcglab("cv", str(letor_dir), "--measure", "ndcg(gain=bogus)@10", *TRAIN_OPTS)
    assert r.returncode == 2
    assert r.stderr.startswith("ndcglab: error:") and "Traceback" not in r.stderr
    assert "Fold1" not in r.stderr  # refused before any fold was read


def test_cv_reports_a_diverged_loss_and_finishes_the_others(letor_dir: Path) -> None:
    args = ["cv", str(letor_dir), "--loss", "listnet", "--loss", "squared"]
    opts = ["--optimizer", "gd", "--lr", "1000", "--epochs", "10"]
    r = ndcglab(*args, *opts, "--format", "json")
    assert r.returncode == 1, r.stderr
    out = json.loads(r.stdout)
    assert out["listnet"]["failed"] == [] and len(out["listnet"]["folds"]) == 2
    assert out["listnet"]["mean"] is not None
    bad = out["squared"]
    assert bad["mean"] is None and bad["std"] is None
    assert [f["fold"] for f in bad["failed"]] == ["Fold1", "Fold2"]
    assert all(isinstance(f["epoch"], int) and f["epoch"] >= 1 for f in bad["failed"])
    assert "FAILED" in r.stderr and "Traceback" not in r.stderr
    t = ndcglab(*args, *opts, "-q")
    assert t.returncode == 1
    first = bad["failed"][0]
    assert f"failed (Fold1, epoch {first['epoch']})" in t.stdout
    assert "failed: squared on Fold1" in t.stdout


def test_cv_gbdt_says_round(letor_dir: Path) -> None:
    pytest.importorskip("lightgbm")
    r = ndcglab(
        "cv", str(letor_dir), "--model", "gbdt", "--rounds", "12", "--min-data-in-leaf", "3",
        "--folds", "1", "--format", "json",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    fold = json.loads(r.stdout)["listnet"]["folds"][0]
    assert "best_round" in fold and "rounds_run" in fold and "best_epoch" not in fold
    assert "best round" in r.stderr and "epoch" not in r.stderr


def test_cv_shows_epoch_progress_on_a_terminal(letor_dir: Path) -> None:
    pty = pytest.importorskip("pty")
    import fcntl
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))  # a real width
    try:
        p = subprocess.Popen(
            [sys.executable, "-m", "ndcglab.cli.main", "cv", str(letor_dir), "--folds", "1",
             "--epochs", "40", "--optimizer", "gd", "--lr", "0.5"],
            stdout=subprocess.DEVNULL,
            stderr=slave,
        )  # fmt: skip
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        assert p.wait(timeout=300) == 0
    finally:
        os.close(master)
    err = b"".join(chunks).decode("utf-8", "replace")
    assert "train listnet" in err and "/40" in err  # tqdm bar of the epochs inside the fold


# ------------------------------------------------------------------------------------- train
def _interrupt_train(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    ckpt = tmp_path / "ckpt"
    cmd = cli_argv(
        "train", "synthetic:default", "--out", str(tmp_path / "m.ndcglab"), "--epochs", "100000",
        "--batch-size", "8", *extra,
    )  # fmt: skip
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    if "--checkpoint" in extra:  # wait for the first epoch's checkpoint
        while not (ckpt / "checkpoint.pt").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(0.5)
    else:
        time.sleep(8)
    out, err = interrupt(p)
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def test_ctrl_c_during_train_prints_one_line_and_the_resume_command(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    r = _interrupt_train(tmp_path, "--checkpoint", str(ckpt))
    assert r.returncode == 130, r.stderr
    assert "Traceback" not in r.stderr and "KeyboardInterrupt" not in r.stderr
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("ndcglab train: interrupted after epoch ")
    assert f"checkpoint in {ckpt}" in line
    assert "--resume" in line and "synthetic:default" in line and "--checkpoint" in line
    assert not (tmp_path / "m.ndcglab").exists()


def test_ctrl_c_without_checkpoint_says_nothing_was_saved(tmp_path: Path) -> None:
    r = _interrupt_train(tmp_path)
    assert r.returncode == 130, r.stderr
    assert "Traceback" not in r.stderr
    line = r.stderr.strip().splitlines()[-1]
    assert "nothing saved" in line and "--checkpoint" in line


# ---------------------------------------------------------------------------------- describe
def test_describe_a_letor_folder_per_fold_and_in_total(letor_dir: Path) -> None:
    r = ndcglab("describe", str(letor_dir), "--format", "json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert [f["fold"] for f in d["folds"]] == ["Fold1", "Fold2"]
    parts = {
        (f["fold"], part): x for f in d["folds"] for part, x in f["parts"].items()
    }  # fmt: skip
    for (fold, part), x in parts.items():
        ds = read_letor(letor_dir / fold / f"{part}.txt")
        assert (x["queries"], x["documents"]) == (ds.n_queries, ds.n_docs)
    # the test folds here have distinct query ids in every file: the total is their sum
    assert d["total"]["queries"] == sum(x["queries"] for x in parts.values())
    assert d["total"]["documents"] == sum(x["documents"] for x in parts.values())
    t = ndcglab("describe", str(letor_dir))
    assert t.returncode == 0 and "Fold2/test" in t.stdout and "total" in t.stdout


def _cached_run(cache: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NDCGLAB_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "ndcglab.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def test_cache_option_keeps_a_binary_copy_and_reads_it_while_the_file_is_unchanged(
    letor_dir: Path, tmp_path: Path
) -> None:
    """``--cache`` writes one entry per file read, reads it back while the file is unchanged
    (the entry is not rewritten and the output is the same) and rebuilds it when the file
    changes; without ``--cache`` nothing is written; synthetic data has nothing to cache."""
    data = tmp_path / "train.txt"
    data.write_bytes((letor_dir / "Fold1" / "train.txt").read_bytes())
    cache = tmp_path / "cache"
    plain = _cached_run(cache, "describe", str(data), "--format", "json")
    assert plain.returncode == 0, plain.stderr
    assert not cache.exists()
    first = _cached_run(cache, "describe", str(data), "--format", "json", "--cache")
    assert first.returncode == 0, first.stderr
    (entry,) = cache.iterdir()
    assert entry.name.startswith("train.txt.") and entry.name.endswith(".ndcglab-cache.npz")
    stamp = entry.stat().st_mtime_ns
    again = _cached_run(cache, "describe", str(data), "--format", "json", "--cache")
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout == plain.stdout
    assert entry.stat().st_mtime_ns == stamp  # read, not rewritten
    with data.open("a") as f:
        f.write("2 qid:999 1:0.5 2:0.25\n")
    changed = _cached_run(cache, "describe", str(data), "--format", "json", "--cache")
    assert changed.returncode == 0, changed.stderr
    docs = json.loads(changed.stdout)["documents"]
    assert docs == json.loads(first.stdout)["documents"] + 1
    assert entry.stat().st_mtime_ns != stamp  # rebuilt for the new content
    # train (a fold folder: one entry per part it reads) and evaluate take it too
    model = tmp_path / "m.ndcg"
    r = _cached_run(
        cache, "train", str(letor_dir / "Fold1"), "--out", str(model), "--cache", *TRAIN_OPTS
    )
    assert r.returncode == 0, r.stderr
    names = sorted(e.name.split(".")[0] for e in cache.iterdir())
    assert names == ["train", "train", "vali"]
    r = _cached_run(cache, "evaluate", "synthetic:small", "--feature", "1", "--cache")
    assert r.returncode == 0, r.stderr
    assert len(list(cache.iterdir())) == 3
    # a cache folder that cannot be written: one warning with the fix, and the command works
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    r = _cached_run(blocked / "sub", "describe", str(data), "--cache")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("ndcglab: warning: could not write")
    assert "Fix: set NDCGLAB_CACHE_DIR to a writable folder" in r.stderr


def test_describe_counts_a_query_in_several_folds_once(tmp_path: Path) -> None:
    src = load_dataset("synthetic:small")
    from ndcglab.data import write_svmlight

    for f in (1, 2):  # the same three query sets, rotated, as in a LETOR collection
        fold = tmp_path / f"Fold{f}"
        fold.mkdir()
        parts = [src.subset(np.arange(0, 6)), src.subset(np.arange(6, 9)),
                 src.subset(np.arange(9, 12))]  # fmt: skip
        if f == 2:
            parts = parts[1:] + parts[:1]
        for name, ds in zip(("train", "vali", "test"), parts):
            write_svmlight(fold / f"{name}.txt", ds)
    d = json.loads(ndcglab("describe", str(tmp_path), "--format", "json").stdout)
    assert d["total"]["queries"] == 12 and d["total"]["documents"] == src.n_docs


# -------------------------------------------------------------------------------------- list
def test_list_losses_prints_every_registered_loss() -> None:
    from ndcglab.losses import available_losses, describe_losses

    r = ndcglab("list", "losses")
    assert r.returncode == 0, r.stderr
    for name, summary in describe_losses().items():
        assert name in r.stdout and summary in r.stdout
    j = json.loads(ndcglab("list", "losses", "--format", "json").stdout)
    assert [it["name"] for it in j["items"]] == available_losses()
    for it in j["items"]:
        assert it["description"] and isinstance(it["parameters"], dict)
    listmle = next(it for it in j["items"] if it["name"] == "consistent_listnet")
    assert listmle["parameters"]["norm"]["default"]


@pytest.mark.parametrize("kind", ["measures", "presets", "experiments"])
def test_list_other_registries(kind: str) -> None:
    from ndcglab.measures.presets import PRESETS
    from ndcglab.measures.registry import REGISTRY
    from ndcglab.reproduce import EXPERIMENTS

    want = {"measures": list(REGISTRY), "presets": list(PRESETS), "experiments": list(EXPERIMENTS)}
    r = ndcglab("list", kind, "--format", "json")
    assert r.returncode == 0, r.stderr
    items = json.loads(r.stdout)["items"]
    assert [it["name"] for it in items] == want[kind]
    assert all(it["description"] and "parameters" in it for it in items)
    text = ndcglab("list", kind).stdout
    assert all(name in text for name in want[kind])
    if kind == "measures":
        ndcg = items[0]
        assert ndcg["name"] == "ndcg" and ndcg["parameters"]["gain"] == "exp2"


# ----------------------------------------------------------------------------------- predict
def test_predict_trec_is_read_back_by_read_run_and_pytrec_eval(
    letor_dir: Path, tmp_path: Path
) -> None:
    model, run = tmp_path / "m.ndcglab", tmp_path / "run.txt"
    test_file = letor_dir / "Fold1" / "test.txt"
    assert ndcglab("train", str(letor_dir / "Fold1"), "--out", str(model), "-q",
                   *TRAIN_OPTS).returncode == 0  # fmt: skip
    r = ndcglab("predict", str(model), str(test_file), "--format", "trec", "--out", str(run))
    assert r.returncode == 0, r.stderr
    s = ndcglab("predict", str(model), str(test_file), "--out", str(tmp_path / "s.txt"))
    assert s.returncode == 0, s.stderr
    ds = read_letor(test_file)
    scores = np.loadtxt(tmp_path / "s.txt")
    got = read_run(run)
    assert set(got) == {str(q) for q in ds.query_ids}
    for qi, qid in enumerate(ds.query_ids):
        lo, hi = ds.boundaries[qi], ds.boundaries[qi + 1]
        want = {str(ds.doc_ids[i]): float(scores[i]) for i in range(lo, hi)}
        assert got[str(qid)] == pytest.approx(want, rel=1e-12)
    # standard output when --out is left out: the same run
    o = ndcglab("predict", str(model), str(test_file), "--format", "trec")
    assert o.returncode == 0 and o.stdout == run.read_text()
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = dataset_to_qrels(ds, integer=True)
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg"})
    theirs = ev.evaluate(got)
    ours = evaluate(ds, scores, ["ndcg"], preset="trec_eval").per_query["ndcg"]
    for qi, qid in enumerate(ds.query_ids):
        assert theirs[str(qid)]["ndcg"] == pytest.approx(ours[qi], abs=1e-12)


def test_predict_without_out_in_score_format_is_refused(letor_dir: Path, tmp_path: Path) -> None:
    r = ndcglab("predict", str(tmp_path / "none.ndcglab"), "synthetic:small")
    assert r.returncode == 2 and "--out" in r.stderr and "Traceback" not in r.stderr


# ------------------------------------------------------------------------------------- help
@pytest.mark.parametrize(
    "command", ["train", "cv", "predict", "describe", "compare", "distinguish", "list"]
)
def test_help_has_no_restructuredtext_markup(command: str) -> None:
    r = ndcglab(command, "--help")
    assert r.returncode == 0
    assert "``" not in r.stdout and ":func:" not in r.stdout and ":mod:" not in r.stdout


def test_train_help_states_the_thread_rule() -> None:
    out = ndcglab("train", "--help").stdout
    assert "--threads" in out and "10 million" in " ".join(out.split())
