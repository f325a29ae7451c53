"""``ndcglab compare --qrels QRELS RUN ...`` as a subprocess: numbers against the library and
pytrec_eval, and every odd input answered by one warning or one error line, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from .test_compare_runs import make_trec


def _write(tmp_path, n_topics: int = 15, drop: dict[str, list[str]] | None = None):
    qrels, runs = make_trec(n_topics=n_topics)
    q = tmp_path / "qrels.txt"
    q.write_text("".join(f"{t} 0 {d} {r}\n" for t, docs in qrels.items() for d, r in docs.items()))
    folder = tmp_path / "runs"
    folder.mkdir()
    paths = []
    for n, r in runs.items():
        lines = []
        for t, docs in r.items():
            if drop and t in drop.get(n, []):
                continue
            for k, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1])):
                lines.append(f"{t} Q0 {d} {k + 1} {s!r} {n}\n")
        p = folder / f"{n}.run"
        p.write_text("".join(lines))
        paths.append(str(p))
    return str(q), paths, qrels, runs


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ndcglab", "compare", *argv],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _one_line(err: str, kind: str) -> str:
    lines = [x for x in err.splitlines() if x.strip()]
    assert "Traceback" not in err
    found = [x for x in lines if x.startswith(f"ndcglab: {kind}: ")]
    assert found, err
    return "\n".join(found)


def test_json_numbers_equal_scipy_on_the_per_topic_values(tmp_path) -> None:
    qrels_path, _paths, _, _ = _write(tmp_path)
    out = _cli("--qrels", qrels_path, str(tmp_path / "runs"), "-m", "ndcg_cut.10", "-m", "P_5",
               "--format", "json", "--resamples", "500")  # fmt: skip
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["systems"].keys() == {"sys0", "sys1", "sys2"}
    pt = d["per_topic"]
    for t in d["tests"]:
        a, b = np.array(pt[t["system"]][t["measure"]]), np.array(pt[t["baseline"]][t["measure"]])
        assert t["p_value"] == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-9)
    assert d["query_set"]["policy"] == "intersection" and d["query_set"]["n_topics"] == 15


def test_text_export_and_all_pairs(tmp_path) -> None:
    qrels_path, paths, _, _ = _write(tmp_path)
    html = tmp_path / "t.html"
    out = _cli("--qrels", qrels_path, *paths, "--name", "a", "--name", "b", "--name", "c",
               "--all-pairs", "--test", "tukey", "--export", str(html), "-m", "map",
               "--resamples", "300")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "(a) a" in out.stdout and "Tukey's HSD" in out.stdout and "Query set" in out.stdout
    assert "<svg" in html.read_text(encoding="utf-8")


def test_topics_missing_from_the_qrels_are_one_warning(tmp_path) -> None:
    qrels_path, paths, _, _ = _write(tmp_path)
    with open(paths[0], "a") as f:
        f.write("zzz Q0 d1 1 3.0 x\n")
    out = _cli("--qrels", qrels_path, *paths, "-m", "map", "--resamples", "200")
    assert out.returncode == 0
    assert "zzz" in _one_line(out.stderr, "warning")


def test_an_empty_run_is_dropped_with_one_warning(tmp_path) -> None:
    qrels_path, paths, _, _ = _write(tmp_path)
    empty = tmp_path / "empty.run"
    empty.write_text("")
    out = _cli("--qrels", qrels_path, *paths, str(empty), "-m", "map", "--resamples", "200")
    assert out.returncode == 0
    assert "run 'empty' dropped from the comparison: empty run" in _one_line(out.stderr, "warning")
    assert "empty" not in out.stdout.split("\n\n")[0]


def test_two_runs_of_one_name_are_one_error(tmp_path) -> None:
    qrels_path, paths, _, _ = _write(tmp_path)
    out = _cli("--qrels", qrels_path, paths[0], paths[0], "-m", "map")
    assert out.returncode == 2
    assert "two runs are named" in _one_line(out.stderr, "error")
    out = _cli("--qrels", qrels_path, paths[0], paths[1], "--name", "x", "--name", "x")
    assert out.returncode == 2 and "--name" in _one_line(out.stderr, "error")


def test_runs_with_different_topic_sets_are_one_warning(tmp_path) -> None:
    qrels_path, paths, _, _ = _write(tmp_path, drop={"sys1": ["t002", "t004"]})
    out = _cli("--qrels", qrels_path, *paths, "-m", "map", "--resamples", "200")
    assert out.returncode == 0
    w = _one_line(out.stderr, "warning")
    assert "2 topics dropped" in w and "t002 (missing from sys1)" in w
    assert "13 topics" in out.stdout
    out = _cli("--qrels", qrels_path, *paths, "-m", "map", "-c", "--resamples", "200")
    assert "sys1: t002, t004" in _one_line(out.stderr, "warning") and "15 topics" in out.stdout


def test_a_baseline_that_is_not_a_run_is_one_error(tmp_path) -> None:
    qrels_path, paths, _, _ = _write(tmp_path)
    out = _cli("--qrels", qrels_path, *paths, "--baseline", "bm25", "-m", "map")
    assert out.returncode == 2
    assert "unknown baseline 'bm25'; systems: sys0, sys1, sys2" in _one_line(out.stderr, "error")


def test_an_export_over_an_input_is_one_error(tmp_path) -> None:
    qrels_path, paths, _, _ = _write(tmp_path)
    before = open(paths[0]).read()
    out = _cli("--qrels", qrels_path, *paths, "-m", "map", "--export", paths[0])
    assert out.returncode == 2 and "would overwrite" in _one_line(out.stderr, "error")
    assert open(paths[0]).read() == before


def test_the_html_page_renders_in_headless_chromium(tmp_path) -> None:
    import os
    import shutil
    import tempfile

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no chromium to render the page")
    qrels_path, paths, _, _ = _write(tmp_path)
    page = tmp_path / "t.html"
    out = _cli("--qrels", qrels_path, *paths, "-m", "map", "-m", "ndcg@10", "--all-pairs",
               "--asl", "--resamples", "300", "--export", str(page))  # fmt: skip
    assert out.returncode == 0, out.stderr
    shot = tmp_path / "page.png"
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--no-first-run", f"--user-data-dir={profile}", f"--screenshot={shot}",
             "--window-size=1280,1600", page.as_uri()],
            capture_output=True, timeout=120, check=False,
        )  # fmt: skip
    assert shot.exists() and os.path.getsize(shot) > 20_000  # a drawn page, not a blank one
    from PIL import Image

    img = np.asarray(Image.open(shot).convert("RGB"))
    red = (img[..., 0] > 180) & (img[..., 1] < 80) & (img[..., 2] < 80)
    green = (img[..., 1] > 120) & (img[..., 0] < 80) & (img[..., 2] < 80)
    assert red.sum() > 100 and green.sum() > 100  # the per-topic bars: losses and wins


def test_trec_eval_options_reach_the_evaluation(tmp_path) -> None:
    from ndcglab.measures import evaluate_trec

    qrels_path, paths, qrels, runs = _write(tmp_path)
    out = _cli("--qrels", qrels_path, *paths, "-m", "ndcg@10", "-m", "map", "-J", "-M", "20",
               "-l", "2", "--format", "json", "--resamples", "200")  # fmt: skip
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    for name, run in runs.items():
        want = evaluate_trec(qrels, run, ["ndcg@10", "map"], preset="trec_eval(rel=2)",
                             judged_only=True, depth=20)  # fmt: skip
        for m in ("ndcg@10", "map"):
            assert d["per_topic"][name][m] == pytest.approx(want.per_query[m].tolist(), abs=0)
