"""``ndcglab compare`` and ``ndcglab distinguish`` run in a temporary folder; the files they
write are checked, and their numbers against the library (evaluate, compare_rankers)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ndcglab.cli.main import main
from ndcglab.data import SyntheticParams, load_dataset, make_synthetic, write_scores, write_svmlight
from ndcglab.measures import evaluate

#: the data file every test reads: written by ``score_files`` (synthetic data with the generator's
#: base parameters, ``SyntheticParams()``: the numbers below are pinned to that sample)
DATA = ""


@pytest.fixture(scope="module")
def score_files(tmp_path_factory):
    global DATA
    folder = tmp_path_factory.mktemp("scores")
    DATA = str(folder / "data.txt")
    write_svmlight(DATA, make_synthetic(SyntheticParams(), seed=0))
    ds = load_dataset(DATA)
    rng = np.random.default_rng(0)
    good = ds.labels + rng.normal(0, 0.7, ds.n_docs)
    noisy = ds.labels + rng.normal(0, 3.0, ds.n_docs)
    rand = rng.random(ds.n_docs)
    paths = []
    for name, s in (("good", good), ("noisy", noisy), ("random", rand)):
        p = folder / f"{name}.txt"
        write_scores(p, s)
        paths.append(str(p))
    return ds, paths, {"good": good, "noisy": noisy, "random": rand}


def _scores_args(paths: list[str]) -> list[str]:
    return [arg for p in paths for arg in ("--scores", p)]


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_compare_json_and_exports(capsys, tmp_path, score_files) -> None:
    ds, paths, scores = score_files
    md, tex, csv_path = tmp_path / "t.md", tmp_path / "t.tex", tmp_path / "t.csv"
    code, out, _ = _run(
        capsys,
        [
            "compare",
            DATA,
            *_scores_args(paths),
            "--measure",
            "ndcg@10",
            "--measure",
            "map",
            "--baseline",
            "noisy",
            "--export",
            str(md),
            "--export",
            str(tex),
            "--export",
            str(csv_path),
            "--format",
            "json",
        ],
    )
    assert code == 0
    d = json.loads(out)
    assert set(d["mean"]) == {"good", "noisy", "random"} and d["baseline"] == "noisy"
    for name in ("good", "random"):
        want = evaluate(ds, scores[name], ["ndcg@10", "map"]).mean
        assert d["mean"][name]["ndcg@10"] == pytest.approx(want["ndcg@10"])
        assert d["systems"][name]["mean"]["map"] == pytest.approx(want["map"])
    marks = {(t["system"], t["measure"]): t["mark"] for t in d["tests"]}
    assert marks[("good", "ndcg@10")] == "‡" and marks[("random", "ndcg@10")] == "‡"
    assert len(d["tests"]) == 4
    for p in (md, tex, csv_path):
        text = p.read_text(encoding="utf-8")
        assert "0.05" in text and "0.01" in text and "Holm" in text
    assert sorted(x.name for x in tmp_path.iterdir()) == ["t.csv", "t.md", "t.tex"]


def test_compare_text_and_names(capsys, score_files) -> None:
    _, paths, _ = score_files
    code, out, _ = _run(
        capsys,
        [
            "compare",
            DATA,
            "--scores",
            paths[0],
            "--scores",
            paths[2],
            "--name",
            "A",
            "--name",
            "B",
            "--measure",
            "ndcg@5",
            "--test",
            "permutation",
            "--resamples",
            "500",
        ],
    )
    assert code == 0
    assert "A (baseline)" in out and "‡ p < 0.01" in out and "randomisation" in out


def test_compare_errors_are_reported(capsys, score_files, tmp_path) -> None:
    _, paths, _ = score_files
    code, _, err = _run(
        capsys, ["compare", DATA, "--scores", paths[0], "--name", "A", "--name", "B"]
    )
    assert code == 2 and "--name" in err
    short = tmp_path / "short.txt"
    write_scores(short, [0.1, 0.2])
    code, _, err = _run(capsys, ["compare", DATA, "--scores", paths[0], "--scores", str(short)])
    assert code == 2 and "scores" in err


def test_distinguish_json_and_plots(capsys, tmp_path, score_files) -> None:
    pytest.importorskip("matplotlib")
    _, paths, _ = score_files
    png, stab = tmp_path / "curves.png", tmp_path / "stab.png"
    code, out, _ = _run(
        capsys,
        [
            "distinguish",
            DATA,
            *_scores_args(paths),
            "--measure",
            "ndcg",
            "--measure",
            "ndcg(discount=power:0.5)",
            "--grid",
            "linear",
            "--points",
            "8",
            "--repeats",
            "2",
            "--seed",
            "3",
            "--plot",
            str(png),
            "--plot-stability",
            str(stab),
            "--format",
            "json",
        ],
    )
    assert code == 0
    d = json.loads(out)
    assert d["rankers"] == ["good", "noisy", "random"] and d["repeats"] == 2
    assert d["mean"]["good"]["ndcg"] > d["mean"]["random"]["ndcg"]
    assert len(d["grid"]) == 8 and d["order"] == "shuffled"
    assert "good vs random" in d["stability"]["ndcg"]["pairs"]
    assert png.stat().st_size > 1000 and stab.stat().st_size > 1000


def test_distinguish_text(capsys, score_files) -> None:
    _, paths, _ = score_files
    code, out, _ = _run(
        capsys,
        [
            "distinguish",
            DATA,
            "--scores",
            paths[0],
            "--scores",
            paths[2],
            "--points",
            "6",
        ],
    )
    assert code == 0
    assert "file order" in out and "ndcg(discount=exp:2)" in out and "good vs random" in out


def _subprocess(*args: str) -> tuple[int, str, str]:
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "ndcglab.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return r.returncode, r.stdout, r.stderr


def test_compare_text_ends_with_the_convention_line(score_files) -> None:
    _, paths, _ = score_files
    code, out, err = _subprocess(
        "compare", DATA, *_scores_args(paths[:2]), "--measure", "ndcg@10", "--preset", "letor4"
    )
    assert code == 0, err
    last = out.strip().splitlines()[-1]
    assert last.startswith("convention: preset letor4 (") and "queries empty" in last


def test_distinguish_names_repetitions_only_when_there_are_some(score_files) -> None:
    _, paths, _ = score_files
    base = ["distinguish", DATA, *_scores_args(paths[:2]), "--measure", "ndcg", "--points", "5"]
    code, out, err = _subprocess(*base, "--repeats", "0")
    assert code == 0, err
    assert "(all repetitions)" not in out and "stable from n" in out and "file order" in out
    code, out, err = _subprocess(*base, "--repeats", "2")
    assert code == 0, err
    assert "stable from n (all repetitions)" in out
