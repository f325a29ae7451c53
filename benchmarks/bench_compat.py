"""The compat layer against the libraries it replaces, on the same machine, interleaved.

    python benchmarks/bench_compat.py [--queries 7000] [--docs 1000] [--judged 50]
                                      [--repeat 3] [--quick]

Generates BEIR-style dicts (``--queries`` × ``--docs`` scored documents, ``--judged`` graded
judgements 0..3 per query, some of them not retrieved; scores uniform in [0, 1)) and times,
round by round and interleaved, after one warm-up call each:

* **drop-in**: ``ndcglab.compat.pytrec_eval.RelevanceEvaluator(qrels, M).evaluate(run)``
  against ``pytrec_eval.RelevanceEvaluator(qrels, M).evaluate(run)``, end to end from the
  dicts, ``M`` = map, ndcg, ndcg_cut_10, recall_100, P_5, recip_rank, bpref (BEIR's set and
  then some): the constructor (which reads the qrels, in both libraries) and ``evaluate``
  timed together, as BEIR's ``EvaluateRetrieval.evaluate`` calls them;
* **evaluate only**: the same with both evaluators made before the rounds (what a loop that
  evaluates many runs against one qrels pays per run);
* **provider**: ``ir_measures.providers.registry["ndcglab"].calc_aggregate(measures, qrels,
  run)`` against ``ir_measures.pytrec_eval.calc_aggregate(...)`` with nDCG@10, nDCG, AP, R@100,
  P@5, RR, Bpref.

Prints min/median/max of each time and of the speed-up (the library's time over ndcglab's in
the same round), the load average before and after, and checks the per-query values agree.
``--quick``: 700 queries, 2 rounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from _interleave import interleaved_ratios  # noqa: E402

MEASURES = {"map", "ndcg", "ndcg_cut_10", "recall_100", "P_5", "recip_rank", "bpref"}


def make(n_queries: int, n_docs: int, judged: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        run[qid] = dict(zip([f"d{q}_{i}" for i in range(n_docs)], rng.random(n_docs).tolist()))
        picked = rng.choice(n_docs + n_docs // 20, judged, replace=False).tolist()
        labels = rng.integers(0, 4, judged).tolist()
        qrels[qid] = {f"d{q}_{i}": int(v) for i, v in zip(picked, labels)}
    return qrels, run


def _show(title: str, ref_times: list[float], ratios: list[float], loads: list[float]) -> None:
    def mmm(xs: list[float]) -> str:
        return f"{min(xs):.3f} / {statistics.median(xs):.3f} / {max(xs):.3f}"

    ours = [r * t for r, t in zip(ratios, ref_times)]
    speedup = [1.0 / r for r in ratios]
    print(f"\n{title}")
    print(f"  library  s   min/median/max: {mmm(ref_times)}")
    print(f"  ndcglab  s   min/median/max: {mmm(ours)}")
    print(f"  speed-up (library / ndcglab): {mmm(speedup)}")
    print(f"  load average: {' '.join(f'{x:.2f}' for x in loads)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--judged", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.queries, args.repeat = 700, 2

    import ir_measures
    import pytrec_eval

    import ndcglab.compat.ir_measures as nim
    import ndcglab.compat.pytrec_eval as drop_in

    t0 = time.perf_counter()
    qrels, run = make(args.queries, args.docs, args.judged)
    print(
        f"{args.queries} queries x {args.docs} documents, {args.judged} judged each "
        f"(generated in {time.perf_counter() - t0:.1f} s); {os.cpu_count()} CPUs"
    )

    want = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run)
    got = drop_in.RelevanceEvaluator(qrels, MEASURES).evaluate(run)
    worst = max(abs(want[q][m] - got[q][m]) for q in want for m in MEASURES)
    assert want.keys() == got.keys() and worst <= 1e-12, worst
    print(f"drop-in: per-query values equal to pytrec_eval's (largest difference {worst:.1e})")

    def drop(name: str | None) -> float:
        lib = drop_in if name else pytrec_eval
        t = time.perf_counter()
        lib.RelevanceEvaluator(qrels, MEASURES).evaluate(run)
        return time.perf_counter() - t

    ratios, ref, loads = interleaved_ratios(drop, ["ndcglab"], args.repeat)
    _show(
        "drop-in: RelevanceEvaluator(...).evaluate(run) from dicts", ref, ratios["ndcglab"], loads
    )

    made = {
        None: pytrec_eval.RelevanceEvaluator(qrels, MEASURES),
        "ndcglab": drop_in.RelevanceEvaluator(qrels, MEASURES),
    }

    def evaluate_only(name: str | None) -> float:
        t = time.perf_counter()
        made[name].evaluate(run)
        return time.perf_counter() - t

    ratios, ref, loads = interleaved_ratios(evaluate_only, ["ndcglab"], args.repeat)
    _show("drop-in: evaluate(run) only, evaluators made before", ref, ratios["ndcglab"], loads)

    ms = [
        ir_measures.nDCG @ 10,
        ir_measures.nDCG,
        ir_measures.AP,
        ir_measures.R @ 100,
        ir_measures.P @ 5,
        ir_measures.RR,
        ir_measures.Bpref,
    ]

    def prov(name: str | None) -> float:
        p = nim.provider if name else ir_measures.pytrec_eval
        t = time.perf_counter()
        p.calc_aggregate(ms, qrels, run)
        return time.perf_counter() - t

    ratios, ref, loads = interleaved_ratios(prov, ["ndcglab"], args.repeat)
    _show("provider: calc_aggregate(measures, qrels, run)", ref, ratios["ndcglab"], loads)


if __name__ == "__main__":
    main()
