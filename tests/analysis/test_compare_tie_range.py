"""The tie range in ``compare``: each system's worst and best mean over every order of its tied
documents, against independent oracles (the mean of the per-topic values under the
``pessimistic`` and ``optimistic`` tie rules evaluated on their own, and a brute force over every
order of the tied documents on a tiny case), and through the command line as a subprocess."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

from ndcglab.analysis import compare_rankers, compare_runs
from ndcglab.data import RankingDataset, write_scores, write_svmlight
from ndcglab.errors import ConventionError
from ndcglab.measures import evaluate, evaluate_trec


def _tied_trec(n_topics: int = 12, n_docs: int = 15, seed: int = 3):
    """Qrels (0..2) and three runs whose scores are rounded (many ties), the last without ties."""
    rng = np.random.default_rng(seed)
    qrels = {
        f"t{i:02d}": {f"d{j}": int(rng.integers(0, 3)) for j in range(n_docs)}
        for i in range(n_topics)
    }
    runs = {}
    for k, (skill, digits) in enumerate(((0.3, 0), (1.0, 0), (0.6, None))):
        runs[f"s{k}"] = {
            q: {
                d: float(np.round(skill * r + rng.normal(), digits) if digits is not None else
                         skill * r + rng.normal())
                for d, r in docs.items()
            }
            for q, docs in qrels.items()
        }  # fmt: skip
    return qrels, runs


def _with_rule(measure: str, rule: str) -> str:
    name, at, cut = measure.partition("@")
    return f"{name}(ties={rule}){at}{cut}"


MEASURES = ("ndcg@10", "map", "p@5", "mrr")


@pytest.mark.parametrize("preset", ["trec_eval", "standard"])
def test_compare_runs_range_is_the_mean_of_the_pessimistic_and_optimistic_values(preset) -> None:
    qrels, runs = _tied_trec()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compare_runs(qrels, runs, list(MEASURES), preset=preset, tie_range=True)
    assert set(res.tie_range) == set(runs)
    for name, run in runs.items():
        for m in MEASURES:
            got = res.tie_range[name][m]
            bounds = []
            for rule in ("pessimistic", "optimistic"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ref = evaluate_trec(qrels, run, [_with_rule(m, rule)], preset=preset)
                bounds.append(float(np.mean(next(iter(ref.per_query.values())))))
            assert math.isclose(got.mean_low, bounds[0], abs_tol=1e-12), (name, m)
            assert math.isclose(got.mean_high, bounds[1], abs_tol=1e-12), (name, m)
            assert got.mean_low - 1e-12 <= res.mean[name][m] <= got.mean_high + 1e-12
    assert all(res.tie_range["s2"][m].width == 0.0 for m in MEASURES)
    assert res.tie_range["s2"]["ndcg@10"].n_tied == 0
    assert res.tie_range["s0"]["ndcg@10"].n_tied == len(qrels)  # scores rounded to integers
    assert res.tie_range["s0"]["ndcg@10"].width > 0.0


def test_tie_range_equals_brute_force_over_every_order() -> None:
    """Two topics of five documents: every order of each tied group, evaluated as a run without
    ties; the worst and best means are the means of the per-topic minima and maxima."""
    qrels = {"1": {"a": 2, "b": 0, "c": 1, "d": 0, "e": 1}, "2": {"f": 1, "g": 0, "h": 0, "i": 2}}
    run = {
        "1": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 2.0, "e": 0.0},
        "2": {"f": 0.5, "g": 0.5, "h": 0.7, "i": 0.7},
    }
    other = {q: {d: float(i) for i, d in enumerate(docs)} for q, docs in run.items()}
    measures = ["ndcg@2", "map", "p@2", "mrr"]
    with pytest.warns(UserWarning, match="ndcg@2 of A: ties decide"):
        res = compare_runs(
            qrels, {"A": run, "B": other}, measures, preset="standard", tie_range=True
        )
    for m in measures:
        lows, highs = [], []
        for q, docs in run.items():
            vals = []
            groups: dict[float, list[str]] = {}
            for d, s in docs.items():
                groups.setdefault(s, []).append(d)
            keys = sorted(groups)
            for perms in itertools.product(*(itertools.permutations(groups[k]) for k in keys)):
                untied, rank = {}, 0.0
                for p in perms:  # groups in increasing score, each in one order
                    for d in reversed(p):  # distinct scores, the first of p ranked highest
                        untied[d] = rank
                        rank += 1.0
                r = evaluate_trec({q: qrels[q]}, {q: untied}, [m], preset="standard")
                vals.append(float(next(iter(r.per_query.values()))[0]))
            lows.append(min(vals))
            highs.append(max(vals))
        tr = res.tie_range["A"][m]
        assert math.isclose(tr.mean_low, float(np.mean(lows)), abs_tol=1e-12), m
        assert math.isclose(tr.mean_high, float(np.mean(highs)), abs_tol=1e-12), m
        assert res.tie_range["B"][m].width == 0.0
    assert res.tie_range["A"]["map"].n_tied == 2


def test_outputs_show_the_range_and_the_legend_says_what_it_is(tmp_path) -> None:
    qrels, runs = _tied_trec()
    with pytest.warns(UserWarning, match=r"ndcg@10 of s0: ties decide"):
        res = compare_runs(qrels, runs, ["ndcg@10"], tie_range=True)
    tr = res.tie_range["s0"]["ndcg@10"]
    cell = f"[{tr.mean_low:.4f}, {tr.mean_high:.4f}]"
    assert "Tie range" in res.legend and "the tests use the values" in res.legend
    text = res.to_text()
    assert "tie range" in text and cell in text
    assert cell in res.to_markdown().replace("\\[", "[").replace("\\]", "]")  # escaped
    assert cell in res.to_latex()
    assert cell in res.to_html()
    body = "".join(x for x in res.to_csv().splitlines(True) if not x.startswith("#"))
    rows = list(csv.DictReader(io.StringIO(body)))
    s0 = next(r for r in rows if r["system"] == "s0")
    assert float(s0["tie_low"]) == tr.mean_low and float(s0["tie_high"]) == tr.mean_high
    assert int(s0["tied_topics"]) == tr.n_tied
    d = res.to_dict()["tie_range"]["s2"]["ndcg@10"]
    assert d["width"] == 0.0 and d["tied_queries"] == 0
    plain = compare_runs(qrels, runs, ["ndcg@10"])
    assert "tie range" not in plain.to_text() and "tie_range" not in plain.to_dict()
    assert "tie_low" not in plain.to_csv()


def test_compare_rankers_takes_evaluation_results_and_refuses_missing_ranges() -> None:
    rng = np.random.default_rng(1)
    n, q = 60, 6
    b = np.arange(q + 1) * (n // q)
    ds = RankingDataset(
        features=np.zeros((n, 1), dtype=np.float32),
        labels=rng.integers(0, 3, n).astype(np.float64),
        boundaries=b,
        query_ids=np.array([str(i + 1) for i in range(q)], dtype=object),
    )
    a = np.round(rng.normal(size=n))
    c = rng.normal(size=n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ra = evaluate(ds, a, ["ndcg@5"], tie_range=True)
        rc = evaluate(ds, c, ["ndcg@5"], tie_range=True)
        res = compare_rankers({"A": ra, "C": rc}, tie_range=True)
    lo = evaluate(ds, a, [_with_rule("ndcg@5", "pessimistic")])
    hi = evaluate(ds, a, [_with_rule("ndcg@5", "optimistic")])
    got = res.tie_range["A"]["ndcg@5"]
    assert math.isclose(got.mean_low, float(np.mean(next(iter(lo.per_query.values())))))
    assert math.isclose(got.mean_high, float(np.mean(next(iter(hi.per_query.values())))))
    assert res.tie_range["C"]["ndcg@5"].width == 0.0
    with pytest.raises(ConventionError, match="tie_range=True"):
        compare_rankers({"A": evaluate(ds, a, ["ndcg@5"]), "C": rc}, tie_range=True)


# ------------------------------------------------------------------------- command line
def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ndcglab", "compare", *argv],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _write_trec(tmp_path):
    qrels, runs = _tied_trec()
    q = tmp_path / "qrels.txt"
    q.write_text("".join(f"{t} 0 {d} {r}\n" for t, docs in qrels.items() for d, r in docs.items()))
    paths = []
    for n, r in runs.items():
        lines = [
            f"{t} Q0 {d} {k + 1} {s!r} {n}\n"
            for t, docs in r.items()
            for k, (d, s) in enumerate(sorted(docs.items(), key=lambda x: (-x[1], x[0])))
        ]
        p = tmp_path / f"{n}.run"
        p.write_text("".join(lines))
        paths.append(str(p))
    return str(q), paths, qrels, runs


def test_cli_trec_tie_range_text_and_json(tmp_path) -> None:
    qrels_path, paths, qrels, runs = _write_trec(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = compare_runs(qrels, runs, ["ndcg_cut.10"], tie_range=True)  # the default preset
    out = _cli("--qrels", qrels_path, *paths, "-m", "ndcg_cut.10", "--tie-range",
               "--format", "json", "--resamples", "200")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    d = json.loads(out.stdout)
    m, rm = d["measures"][0], ref.measures[0]  # the printed name of ndcg_cut.10
    for s in runs:
        got, want = d["tie_range"][s][m], ref.tie_range[s][rm]
        assert math.isclose(got["low"], want.mean_low, abs_tol=1e-12)
        assert math.isclose(got["high"], want.mean_high, abs_tol=1e-12)
    assert d["tie_range"]["s2"][m]["width"] == 0.0
    warn = [x for x in out.stderr.splitlines() if x.startswith("ndcglab: warning: ")]
    assert any(f"{m} of s0: ties decide" in x for x in warn), out.stderr
    assert not any(x.startswith(f"ndcglab: warning: {m}: ") for x in warn)  # one per case
    txt = _cli("--qrels", qrels_path, *paths, "-m", "ndcg_cut.10", "--tie-range",
               "--resamples", "200")  # fmt: skip
    assert txt.returncode == 0, txt.stderr
    tr = ref.tie_range["s1"][rm]
    assert f"[{tr.mean_low:.4f}, {tr.mean_high:.4f}]" in txt.stdout
    assert "tied topics" in txt.stdout and "Tie range:" in txt.stdout
    plain = _cli("--qrels", qrels_path, *paths, "-m", "ndcg_cut.10", "--resamples", "200")
    assert plain.returncode == 0 and "tie range" not in plain.stdout
    assert "ties decide" not in plain.stderr


def test_cli_letor_tie_range(tmp_path) -> None:
    rng = np.random.default_rng(7)
    n, q = 80, 8
    labels = rng.integers(0, 3, n).astype(np.float64)
    ds = RankingDataset(
        features=rng.random((n, 2)).astype(np.float32),
        labels=labels,
        boundaries=np.arange(q + 1) * (n // q),
        query_ids=np.array([str(i + 1) for i in range(q)], dtype=object),
    )
    data = tmp_path / "data.txt"
    write_svmlight(data, ds)
    tied = np.round(labels * 0.5 + rng.normal(size=n))
    untied = labels + rng.normal(size=n)
    write_scores(tmp_path / "tied.txt", tied)
    write_scores(tmp_path / "untied.txt", untied)
    out = _cli(str(data), "--scores", str(tmp_path / "tied.txt"), "--scores",
               str(tmp_path / "untied.txt"), "-m", "ndcg@5", "--tie-range", "--format", "json",
               "--resamples", "200")  # fmt: skip
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    lo = evaluate(ds, tied, [_with_rule("ndcg@5", "pessimistic")])
    hi = evaluate(ds, tied, [_with_rule("ndcg@5", "optimistic")])
    got = d["tie_range"]["tied"]["ndcg@5"]
    assert math.isclose(got["low"], float(np.mean(next(iter(lo.per_query.values())))))
    assert math.isclose(got["high"], float(np.mean(next(iter(hi.per_query.values())))))
    assert d["tie_range"]["untied"]["ndcg@5"]["width"] == 0.0
    assert d["tie_range"]["untied"]["ndcg@5"]["tied_queries"] == 0
    assert "Traceback" not in out.stderr
