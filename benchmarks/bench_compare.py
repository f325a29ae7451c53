"""``compare`` of many runs against ranx's ``compare``, on the same machine, interleaved.

    python benchmarks/bench_compare.py [--runs 30] [--topics 250] [--docs 1000] [--repeat 3]
                                       [--permutations 10000] [--measure ndcg@10]

Generates one qrels file's worth of judgements (``--topics`` × ``--docs``, labels 0..2, about
a third judged) and ``--runs`` runs (score = skill · label + N(0, 1), skills spread over
[0, 1]) as the dict-of-dicts both libraries take, then times, round by round and interleaved:

* **Fisher**: ``ndcglab.analysis.compare_runs(qrels, runs, measure, test="fisher",
  pairs="all", n_resamples=B)`` against ``ranx.compare(Qrels(qrels), [Run(r) …], [measure],
  stat_test="fisher", n_permutations=B)``: every pair of runs, ``B`` random permutations each
  (ndcglab also computes every pair's bootstrap interval with ``B`` resamples, the effect sizes
  and the topics needed, which ranx does not);
* **Tukey**: the same with ``test="tukey"`` / ``stat_test="tukey"`` (ndcglab: two-way ANOVA
  system × topic and Tukey's HSD with the studentized range; ranx: ``scipy.stats.tukey_hsd``,
  one-way);
* p-values are not adjusted on either side (``correction="none"``), so the decisions at
  p < 0.05 can be counted side by side.

Both sides are warmed up once (ranx's Numba functions compiled, ndcglab's kernels loaded) before
the rounds. Prints min/median/max of each time and of the ratio ranx / ndcglab within a round,
and the load average before and after. Before comparing p-values, note that ranx's Fisher test
estimates ``p = #{|T*| >= |T|} / B`` with its own random permutations: the two libraries' p
agree within Monte-Carlo error (``tests/analysis/test_compare_runs.py``), not bit for bit.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))


def make(n_runs: int, n_topics: int, n_docs: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, dict[str, dict[str, float]]] = {f"run{k:02d}": {} for k in range(n_runs)}
    skills = np.linspace(0.0, 1.0, n_runs)
    for t in range(n_topics):
        q = f"{t + 1:03d}"
        labels = rng.choice([0, 0, 0, 0, 1, 1, 2], size=n_docs)
        judged = rng.random(n_docs) < 0.35
        docs = [f"d{t}_{j}" for j in range(n_docs)]
        qrels[q] = {d: int(y) for d, y, j in zip(docs, labels, judged) if j}
        for k, name in enumerate(runs):
            scores = skills[k] * labels + rng.normal(size=n_docs)
            runs[name][q] = dict(zip(docs, scores.tolist()))
    return qrels, runs


def stats_line(values: list[float]) -> str:
    return (
        f"min {min(values):8.3f}  median {statistics.median(values):8.3f}  max {max(values):8.3f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--topics", type=int, default=250)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--permutations", type=int, default=10_000)
    ap.add_argument("--measure", default="ndcg@10")
    ap.add_argument("--tests", default="fisher,tukey")
    args = ap.parse_args()

    import ranx

    from ndcglab.analysis import compare_runs

    print(f"load average before: {os.getloadavg()}")
    qrels, runs = make(args.runs, args.topics, args.docs)
    print(
        f"{args.runs} runs x {args.topics} topics x {args.docs} documents; "
        f"{sum(len(v) for v in qrels.values())} judgements; measure {args.measure}; "
        f"{args.permutations} permutations / resamples"
    )

    def ours(test: str):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compare_runs(
                qrels, runs, args.measure, test=test, pairs="all", correction="none",
                n_resamples=args.permutations, n_bootstrap=args.permutations,
            )  # fmt: skip

    def theirs(test: str):
        rq = ranx.Qrels(qrels)
        rr = [ranx.Run(r, name=n) for n, r in runs.items()]
        return ranx.compare(
            rq, rr, [args.measure], stat_test=test, n_permutations=args.permutations,
            max_p=0.05,
        )  # fmt: skip

    # warm-up (ranx's Numba compilation, ndcglab's kernels) on a small problem
    small_q = {q: qrels[q] for q in list(qrels)[:5]}
    small_r = {n: {q: r[q] for q in small_q} for n, r in list(runs.items())[:3]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare_runs(small_q, small_r, args.measure, test="fisher", pairs="all", n_resamples=100,
                     n_bootstrap=100)  # fmt: skip
    ranx.compare(ranx.Qrels(small_q), [ranx.Run(r, name=n) for n, r in small_r.items()],
                 [args.measure], stat_test="fisher", n_permutations=100)  # fmt: skip

    for test in args.tests.split(","):
        t_ours: list[float] = []
        t_theirs: list[float] = []
        ratios: list[float] = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            res = ours(test)
            t1 = time.perf_counter()
            rep = theirs(test)
            t2 = time.perf_counter()
            t_ours.append(t1 - t0)
            t_theirs.append(t2 - t1)
            ratios.append((t2 - t1) / (t1 - t0))
        n_pairs = len(res.tests)
        agree = sum(
            (t.p_adjusted < 0.05)
            == bool(rep.comparisons[t.system, t.baseline][args.measure]["p_value"] < 0.05)
            for t in res.tests
        )
        print(f"\n{test}: {n_pairs} pairs of runs")
        print(f"  ndcglab compare_runs  {stats_line(t_ours)} s")
        print(f"  ranx compare          {stats_line(t_theirs)} s")
        print(f"  ratio ranx / ndcglab  {stats_line(ratios)}")
        print(f"  same decision at p < 0.05 (both unadjusted): {agree} of {n_pairs}")
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
