"""trec_eval's and ir_measures' habits in ``ndcglab evaluate``: ``-q`` per-query lines in
trec_eval's layout, trec_eval's ``-m`` syntax, ir_measures' parameterised names, several
``--run`` files.

Oracles: pytrec_eval (trec_eval's own code) per query and its ``compute_aggregated_measure``
for the ``all`` lines, formatted with trec_eval's printf formats (``meas_print_single.c``:
``"%-22s\\t%s\\t%6.4f\\n"`` and ``"%-22s\\t%s\\t%ld\\n"``); ir_measures' own evaluator for its
names.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from ndcglab.measures import evaluate_trec, parse_measures
from ndcglab.measures.ir_names import ALL_TREC, OFFICIAL, expand_measure_specs

pytrec_eval = pytest.importorskip("pytrec_eval")

COUNTS = {"num_ret", "num_rel", "num_rel_ret"}


def _files(tmp_path, seed: int = 0, n_topics: int = 12, drop_from_run=()):
    rng = np.random.default_rng(seed)
    qrels = {
        f"{100 + i}": {f"doc{j}": int(rng.integers(0, 4)) for j in range(25)}
        for i in range(n_topics)
    }
    qrels["199"] = {"doc1": 0, "doc2": 0}  # a topic without a relevant document
    runs = {}
    for name, skill in (("bm25", 0.4), ("dense", 1.0)):
        run = {}
        for q, docs in qrels.items():
            if q in drop_from_run:
                continue
            # rounded scores: ties, broken by docno as trec_eval does
            run[q] = {d: float(np.round(skill * r + rng.normal(), 1)) for d, r in docs.items()}
            run[q]["unjudged"] = float(rng.normal())
        runs[name] = run
    qp = tmp_path / "qrels.txt"
    qp.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    paths = {}
    for name, run in runs.items():
        lines = []
        for q, docs in run.items():
            for k, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1])):
                lines.append(f"{q} Q0 {d} {k + 1} {s} {name}\n")
        p = tmp_path / f"{name}.run"
        p.write_text("".join(lines))
        paths[name] = str(p)
    return str(qp), paths, qrels, runs


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ndcglab", "evaluate", *argv],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _trec_eval_lines(qrels, run, names, queries=None, runid=None) -> list[str]:
    """trec_eval -q's output, from pytrec_eval's values and trec_eval's printf formats."""
    ev = pytrec_eval.RelevanceEvaluator(qrels, set(names))
    per = ev.evaluate(run)
    out = []
    for q in sorted(per):
        if queries is not None and q not in queries:
            continue
        for n in names:
            v = per[q][n]
            out.append(f"{n:<22s}\t{q}\t{int(v)}" if n in COUNTS else f"{n:<22s}\t{q}\t{v:6.4f}")
    if runid is not None:
        out.append(f"{'runid':<22s}\tall\t{runid}")
    for n in names:
        v = pytrec_eval.compute_aggregated_measure(n, [per[q][n] for q in per])
        out.append(f"{n:<22s}\tall\t{int(v)}" if n in COUNTS else f"{n:<22s}\tall\t{v:6.4f}")
    return out


def test_q_lines_equal_trec_eval_per_query_output(tmp_path) -> None:
    qp, paths, qrels, runs = _files(tmp_path)
    out = _cli("--qrels", qp, "--run", paths["bm25"], "-q", "-m", "official",
               "-m", "ndcg_cut.5,10", "-m", "recall.100", "-m", "success.1")  # fmt: skip
    assert out.returncode == 0, out.stderr
    names = [*OFFICIAL, "ndcg_cut_5", "ndcg_cut_10", "recall_100", "success_1"]
    assert out.stdout.splitlines() == _trec_eval_lines(qrels, runs["bm25"], names)


def test_q_lines_with_c_print_the_runs_queries_and_average_over_all(tmp_path) -> None:
    qp, paths, qrels, runs = _files(tmp_path, drop_from_run=("101", "105"))
    out = _cli("--qrels", qp, "--run", paths["bm25"], "-q", "-c", "-m", "map", "-m", "P.10")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    per_query = [x for x in lines if "\tall\t" not in x]
    want = _trec_eval_lines(qrels, runs["bm25"], ["map", "P_10"])
    assert per_query == [x for x in want if "\tall\t" not in x]
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(runs["bm25"])
    mean_c = sum(v["map"] for v in ev.values()) / len(qrels)  # -c: missing topics score 0
    assert f"{'map':<22s}\tall\t{mean_c:6.4f}" in lines


def test_several_runs_print_one_block_each_ended_by_runid(tmp_path) -> None:
    qp, paths, qrels, runs = _files(tmp_path)
    out = _cli("--qrels", qp, "--run", paths["bm25"], "--run", paths["dense"], "-q",
               "-m", "ndcg_cut.10")  # fmt: skip
    assert out.returncode == 0, out.stderr
    want = []
    for name in ("bm25", "dense"):
        want += _trec_eval_lines(qrels, runs[name], ["ndcg_cut_10"], runid=name)
    assert out.stdout.splitlines() == want
    table = _cli("--qrels", qp, "--run", paths["bm25"], "--run", paths["dense"], "-m", "map")
    assert table.returncode == 0, table.stderr
    head = table.stdout.splitlines()[0].split()
    assert head == ["measure", "bm25", "dense"]
    twice = _cli("--qrels", qp, "--run", paths["bm25"], "--run", paths["bm25"])
    assert twice.returncode == 2 and "Traceback" not in twice.stderr
    assert twice.stderr.startswith("ndcglab: error: --run")


def test_trec_eval_m_syntax_expands() -> None:
    assert expand_measure_specs("ndcg_cut.5,10") == ["ndcg_cut_5", "ndcg_cut_10"]
    assert expand_measure_specs(["P.5", "map"]) == ["P_5", "map"]
    assert expand_measure_specs("P")[0] == "P_5" and len(expand_measure_specs("P")) == 9
    assert expand_measure_specs("iprec_at_recall.0.1,0.5") == [
        "iprec_at_recall_0.10",
        "iprec_at_recall_0.50",
    ]
    assert expand_measure_specs("ndcg@10") == "ndcg@10"
    with pytest.warns(UserWarning, match="set_P"):
        assert [str(m) for m in parse_measures("all_trec")][:4] == [
            "num_ret", "num_rel", "num_rel_ret", "map",
        ]  # fmt: skip
    assert len(ALL_TREC) == len(set(ALL_TREC))


def test_all_trec_equals_pytrec_eval_on_every_measure(tmp_path) -> None:
    _, _, qrels, runs = _files(tmp_path)
    with pytest.warns(UserWarning):
        res = evaluate_trec(qrels, runs["dense"], "all_trec")
    names = [n for n in ALL_TREC]
    ev = pytrec_eval.RelevanceEvaluator(qrels, set(names)).evaluate(runs["dense"])
    back = {canon: typed for typed, canon in res.aliases.items()}
    for m in res.measures:
        typed = back.get(str(m), str(m))
        want = np.array([ev[q][typed] for q in res.query_ids])
        assert res.per_query[str(m)] == pytest.approx(want, abs=1e-12), typed


@pytest.mark.parametrize(
    "name",
    ["nDCG@10", "nDCG(dcg='exp-log2')@10", "P(rel=2)@5", "AP(rel=2)", "AP", "RR", "R@20",
     "nDCG(dcg='log2')@5", "Rprec", "Bpref"],
)  # fmt: skip
def test_ir_measures_names_equal_ir_measures(tmp_path, name: str) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    _, _, qrels, runs = _files(tmp_path)
    measure = ir_measures.parse_measure(name)
    got = evaluate_trec(qrels, runs["dense"], name)
    want = {r.query_id: r.value for r in ir_measures.iter_calc([measure], qrels, runs["dense"])}
    key = got.names[0]
    # ir_measures computes nDCG(dcg='exp-log2') with gdeval, which prints 5 decimals
    tol = 5.01e-6 if "exp-log2" in name else 1e-12
    for q, v in zip(got.query_ids, got.per_query[key]):
        assert v == pytest.approx(want[q], abs=tol), (name, q)
    bare = name.replace("'", "")  # the spelling, nDCG(dcg=exp-log2)@10, reads the same
    assert np.array_equal(
        evaluate_trec(qrels, runs["dense"], bare).per_query[key], got.per_query[key]
    )


def test_unknown_ir_measures_dcg_form_names_the_known_ones(tmp_path) -> None:
    qp, paths, _, _ = _files(tmp_path)
    out = _cli("--qrels", qp, "--run", paths["bm25"], "-m", "nDCG(dcg=bogus)@10")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    line = out.stderr.strip()
    assert line.startswith("ndcglab: error: unknown dcg='bogus'") and len(line.splitlines()) == 1
    assert "dcg=log2" in line and "dcg=exp-log2" in line and "Fix:" in line
