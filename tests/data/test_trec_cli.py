"""``ndcglab evaluate --qrels --run`` with trec_eval's options (-c, -M, -J, -l,
--score-precision): each flag equals the library call it stands for, and -J / -l agree with
pytrec_eval's ``judged_docs_only_flag`` / ``relevance_level``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ndcglab.cli.main import main
from ndcglab.data import read_qrels, read_run
from ndcglab.measures import evaluate_trec

MEASURES = ["map", "p@5", "mrr", "ndcg", "ndcg@10"]
TE_NAMES = {
    "map": "map",
    "p@5": "P_5",
    "mrr": "recip_rank",
    "ndcg": "ndcg",
    "ndcg@10": "ndcg_cut_10",
}


@pytest.fixture(scope="module")
def trec_files(tmp_path_factory):
    """20 queries in the qrels (3 missing from the run, 2 without a relevant document), runs of
    20 documents with unjudged ones, ties, and a seventh column; comment lines in both files."""
    folder = tmp_path_factory.mktemp("trec")
    rng = np.random.default_rng(11)
    qlines, rlines = ["# qrels"], ["# run"]
    for q in range(20):
        docs = [f"doc{q}-{j:02d}" for j in range(25)]
        for d in docs[:15]:
            rel = 0 if q in (4, 9) else int(rng.choice(4, p=[0.5, 0.25, 0.15, 0.1]))
            qlines.append(f"{q} 0 {d} {rel}")
        if q >= 17:
            continue  # not in the run
        picked = rng.permutation(docs)[:20]
        scores = np.round(rng.normal(size=20), 1)
        for rank, (d, s) in enumerate(zip(picked, scores), start=1):
            rlines.append(f"{q} Q0 {d} {rank} {float(s)!r} tag comment-{rank}")
    (folder / "qrels").write_text("\n".join(qlines) + "\n")
    (folder / "run").write_text("\n".join(rlines) + "\n")
    return str(folder / "qrels"), str(folder / "run")


def _evaluate(capsys, *args: str) -> dict:
    code = main(["evaluate", *args, *[a for m in MEASURES for a in ("--measure", m)],
                 "--format", "json"])  # fmt: skip
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


@pytest.mark.parametrize(
    ("flags", "kwargs"),
    [
        ([], {}),
        (["-c"], {"complete": True}),
        (["--all-queries"], {"complete": True}),
        (["-M", "7"], {"depth": 7}),
        (["-J"], {"judged_only": True}),
        (["-l", "2"], {"preset": "trec_eval(rel=2)"}),
        (["--score-precision", "trec_eval10"], {"score_precision": "float64"}),
        (["-c", "-M", "10", "-J", "--rel-level", "3"],
         {"complete": True, "depth": 10, "judged_only": True, "preset": "trec_eval(rel=3)"}),
    ],
)  # fmt: skip
def test_flags_equal_the_library(capsys, trec_files, flags, kwargs):
    qrels_path, run_path = trec_files
    got = _evaluate(capsys, "--qrels", qrels_path, "--run", run_path, *flags)
    ref = evaluate_trec(read_qrels(qrels_path), read_run(run_path), MEASURES, **kwargs)
    assert got["mean"] == ref.to_dict()["mean"]
    assert got["queries"] == (20 if "complete" in kwargs else 17)


def test_judged_only_and_rel_level_agree_with_pytrec_eval(capsys, trec_files):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels_path, run_path = trec_files
    qrels, run = read_qrels(qrels_path, integer=True), read_run(run_path)
    for flags, opts, names in (
        (["-J"], {"judged_docs_only_flag": True}, MEASURES),
        (["-l", "2"], {"relevance_level": 2}, ["map", "p@5", "mrr"]),
    ):
        got = _evaluate(capsys, "--qrels", qrels_path, "--run", run_path, *flags)
        ev = pytrec_eval.RelevanceEvaluator(qrels, {TE_NAMES[m] for m in names}, **opts)
        ref = ev.evaluate(run)
        for m in names:
            mean = np.mean([ref[q][TE_NAMES[m]] for q in ref])
            assert got["mean"][m] == pytest.approx(mean, abs=1e-12), (flags, m)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["-J"], "-J applies to a TREC run"),
        (["-c", "-M", "5"], "-c, -M apply to a TREC run"),
        (["--score-precision", "half"], "unknown score precision"),
    ],
)
def test_flag_errors(capsys, tmp_path, args, words):
    scores = tmp_path / "s.txt"
    from ndcglab.data import make_synthetic, write_scores

    ds = make_synthetic("small", seed=0)
    write_scores(scores, np.arange(ds.n_docs, dtype=float))
    code = main(["evaluate", "synthetic:small:0", "--scores", str(scores), *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("ndcglab: error: ")
    assert words in err[0]


def test_max_docs_must_be_positive(capsys, trec_files):
    qrels_path, run_path = trec_files
    code = main(["evaluate", "--qrels", qrels_path, "--run", run_path, "-M", "0"])
    err = capsys.readouterr().err
    assert code == 2 and "--max-docs 0 is out of range" in err and "Fix:" in err
