"""Cost of the tie range (``evaluate_arrays(..., tie_range=True)``) against the plain evaluation,
on an MSLR-WEB30K-sized synthetic set (31,531 queries, ~3.77M documents, labels 0..4).

    python benchmarks/bench_tie_range.py [--quick] [--repeat N] [--measures ndcg@10,map]

Three rankings: ``continuous`` (a normal score per document: ties are rare), ``rounded`` (the
same scores rounded to one decimal: most queries have ties) and ``constant`` (every score
equal: every query is tied, the worst case). For each, NDCG@1..10 + MAP (or ``--measures``) is
evaluated plainly and with the tie range, interleaved (plain, range, plain, range, ...)
``--repeat`` times after one warm-up call of each; the ratio range/plain of each pair is
reported as min / median / max, with the load average before and after. The target is a ratio
of at most 2: the tied queries are found by hashing (no sort), the queries without ties are not
evaluated again, and when most queries are tied the plain values and both bounds (worst and
best order) come from one pass.

The set is ``make_synthetic("mslr30k")`` with 8 features instead of 136 (the list sizes and
labels are MSLR's; only the features differ) to keep memory low; ``--quick`` takes a tenth of
the queries.
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

from ndcglab.data import make_synthetic  # noqa: E402
from ndcglab.measures import evaluate_arrays  # noqa: E402
from ndcglab.measures.tie_range import tied_queries  # noqa: E402

MEASURES = [*(f"ndcg@{k}" for k in range(1, 11)), "map"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a tenth of the queries")
    ap.add_argument("--repeat", type=int, default=5, help="interleaved pairs (default 5)")
    ap.add_argument(
        "--measures",
        default=",".join(MEASURES),
        help="comma-separated measures (default NDCG@1..10 and MAP)",
    )
    args = ap.parse_args()
    measures = args.measures.split(",")
    over: dict[str, int] = {"n_features": 8, "n_informative": 8}
    if args.quick:
        over["n_queries"] = 3153
    ds = make_synthetic("mslr30k", seed=0, **over)
    rng = np.random.default_rng(0)
    cont = rng.normal(size=ds.n_docs)
    rankings = {
        "continuous": cont,
        "rounded": np.round(cont, 1),
        "constant": np.zeros(ds.n_docs),
    }
    print(
        f"{ds.n_queries} queries, {ds.n_docs} documents, measures {','.join(measures)}; "
        f"load average {os.getloadavg()}"
    )
    print(
        f"{'ranking':<12}{'tied queries':>14}{'plain s':>10}{'range s':>10}   ratio min/median/max"
    )
    for name, s in rankings.items():
        tied = int(tied_queries(s, ds.boundaries).sum())

        def plain(s: np.ndarray = s) -> None:
            evaluate_arrays(ds.labels, s, ds.boundaries, measures)

        def ranged(s: np.ndarray = s) -> None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                evaluate_arrays(ds.labels, s, ds.boundaries, measures, tie_range=True)

        plain()
        ranged()
        ratios, tp, tr = [], [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            plain()
            t1 = time.perf_counter()
            ranged()
            t2 = time.perf_counter()
            tp.append(t1 - t0)
            tr.append(t2 - t1)
            ratios.append((t2 - t1) / (t1 - t0))
        print(
            f"{name:<12}{tied:>14}{statistics.median(tp):>10.3f}{statistics.median(tr):>10.3f}"
            f"   {min(ratios):.2f} / {statistics.median(ratios):.2f} / {max(ratios):.2f}"
        )
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
