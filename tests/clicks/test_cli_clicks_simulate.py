"""``ndcglab clicks simulate`` as a user runs it (a subprocess): the log it writes equals the
library's simulation with the same arguments, a model file or a score file is the logging
ranker, and every bad input is one error line with the fix."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ndcglab.clicks import read_log
from ndcglab.clicks.simulate import make_policy, simulate_clicks
from ndcglab.data import load_dataset

from ..test_cli_safety import DATA, ndcglab


def _one_error(res) -> str:
    assert res.returncode != 0
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("ndcglab: error:"), res.stderr
    assert "Traceback" not in res.stderr and "Fix:" in lines[0]
    return lines[0]


@pytest.mark.parametrize("suffix", ["parquet", "npz"])
def test_the_log_equals_the_library_simulation(tmp_path, suffix):
    (tmp_path / "d.txt").write_text(DATA)
    scores = np.array([0.3, 0.9, -0.1, 0.2, 0.5, 0.4, 1.0, 0.0, 0.7])
    np.savetxt(tmp_path / "s.txt", scores)
    res = ndcglab("clicks", "simulate", "d.txt", "--click-model", "dbn(gamma=0.7)", "--policy",
                  "s.txt", "--sampling", "pl(temperature=0.5)", "--sessions", "500", "--k", "2",
                  "--seed", "4", "--out", f"log.{suffix}", "--format", "json",
                  cwd=tmp_path)  # fmt: skip
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["sessions"] == 500 and out["rows"] == 1000
    log = read_log(tmp_path / f"log.{suffix}")
    ds = load_dataset(tmp_path / "d.txt")
    want = simulate_clicks(ds, "dbn(gamma=0.7)", make_policy(scores, "pl(temperature=0.5)"),
                           500, k=2, seed=4)  # fmt: skip
    for col in ("session", "query", "doc", "position", "click", "propensity"):
        assert np.array_equal(getattr(log, col), getattr(want, col)), col
    assert out["clicks"] == int(want.click.sum())
    assert log.qids.tolist() == ["1", "2", "3"]


def test_stats_only_and_nothing_to_write(tmp_path):
    from ndcglab.clicks import read_stats

    (tmp_path / "d.txt").write_text(DATA)
    res = ndcglab("clicks", "simulate", "d.txt", "--sessions", "300", "--k", "2", "--stats",
                  "st.parquet", "--click-model", "cascade", cwd=tmp_path)  # fmt: skip
    assert res.returncode == 0, res.stderr
    want = simulate_clicks(load_dataset(tmp_path / "d.txt"), "cascade", None, 300, k=2).stats()
    got = read_stats(tmp_path / "st.parquet")
    assert np.array_equal(got.impressions, want.impressions)
    assert np.array_equal(got.clicks, want.clicks)
    res = ndcglab("clicks", "simulate", "d.txt", "--sessions", "3", cwd=tmp_path)
    assert "nothing to write" in _one_error(res)
    before = (tmp_path / "d.txt").read_bytes()
    res = ndcglab("clicks", "simulate", "d.txt", "--sessions", "3", "--stats", "d.txt",
                  cwd=tmp_path)  # fmt: skip
    assert "--stats d.txt is the input" in _one_error(res)
    assert (tmp_path / "d.txt").read_bytes() == before


@pytest.mark.slow  # trains a model (torch) through the command line
def test_a_model_file_is_a_logging_ranker(tmp_path):
    (tmp_path / "d.txt").write_text(DATA)
    res = ndcglab("train", "d.txt", "--model", "linear", "--epochs", "3", "--out", "m.ndcg",
                  "-q", cwd=tmp_path)  # fmt: skip
    assert res.returncode == 0, res.stderr
    res = ndcglab("predict", "m.ndcg", "d.txt", "--out", "pred.txt", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    a = ndcglab("clicks", "simulate", "d.txt", "--policy", "m.ndcg", "--sessions", "200",
                "--out", "a.npz", cwd=tmp_path)  # fmt: skip
    b = ndcglab("clicks", "simulate", "d.txt", "--policy", "pred.txt", "--sessions", "200",
                "--out", "b.npz", cwd=tmp_path)  # fmt: skip
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    la, lb = read_log(tmp_path / "a.npz"), read_log(tmp_path / "b.npz")
    assert np.array_equal(la.doc, lb.doc) and np.array_equal(la.click, lb.click)


def test_synthetic_data_and_the_ideal_ranker(tmp_path):
    res = ndcglab("clicks", "simulate", "synthetic:small", "--sessions", "50", "--out",
                  "l.parquet", cwd=tmp_path)  # fmt: skip
    assert res.returncode == 0, res.stderr
    log = read_log(tmp_path / "l.parquet")
    ds = load_dataset("synthetic:small")
    per = np.split(ds.labels[log.doc], log.session_starts()[1:-1])
    assert all((np.diff(x) <= 0).all() for x in per)  # labels in decreasing order
    assert log.meta["policy"] == "ideal (labels)"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--click-model", "pbn"], "unknown click model"),
        (["--click-model", "pbm(eta=x)"], "eta"),
        (["--sampling", "pl(temperature=0)"], "temperature"),
        (["--policy", "s.txt", "--sampling", "randtop(n=1)"], "randtop n"),
        (["--policy", "short.txt"], "short.txt"),
        (["--policy", "d.txt"], "d.txt:1"),
        (["--sessions", "0"], "--sessions"),
        (["--sampling", "swap"], "--policy"),
    ],
)
def test_bad_options_are_one_error_line(tmp_path, args, words):
    (tmp_path / "d.txt").write_text(DATA)
    np.savetxt(tmp_path / "s.txt", np.arange(9.0))
    np.savetxt(tmp_path / "short.txt", np.arange(4.0))
    res = ndcglab("clicks", "simulate", "d.txt", "--sessions", "5", "--out", "l.npz", *args,
                  cwd=tmp_path)  # fmt: skip
    assert words in _one_error(res)
    assert not (tmp_path / "l.npz").exists()


def test_clicks_lists_its_subcommands_and_skips_a_missing_module(monkeypatch, capsys):
    import argparse

    from ndcglab.cli import clicks

    monkeypatch.setitem(clicks.SUBCOMMANDS, "later", "_clicks_not_written_yet")
    parser = argparse.ArgumentParser(prog="ndcglab")
    clicks.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["clicks", "simulate", "d.txt", "--sessions", "3", "--out", "l.npz"])
    assert args.func.__module__ == "ndcglab.cli._clicks_simulate"
    args = parser.parse_args(["clicks", "fit", "l.npz"])
    assert args.func.__module__ == "ndcglab.cli._clicks_fit"
    with pytest.raises(SystemExit):
        parser.parse_args(["clicks", "later"])
