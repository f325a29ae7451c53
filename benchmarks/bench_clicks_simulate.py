"""Click simulation throughput: sessions of top-10 per minute on 2 threads (numba), for the DBN
(the target: at least 10 million per minute) and, interleaved with it, PBM (with ``--pl`` also
PBM under Plackett-Luce sampling, whose position marginals are computed again for each chunk).

Each round simulates ``--sessions`` sessions (in chunks of 10^6, so the log of a chunk is what
memory holds) on ``synthetic:default`` (200 queries, about 40 documents each), or on the
``--data`` given; the rounds are interleaved (benchmarks/_interleave.py) and the load average is
printed with every number.

    python benchmarks/bench_clicks_simulate.py --sessions 10000000 --repeats 3

Measured (2 cores shared with other jobs, load average 14-17): DBN median 110 million sessions
per minute (min 95, max 124); PBM 106; PBM under Plackett-Luce sampling 5.2.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numba
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _interleave import interleaved_ratios
from ndcglab.clicks.simulate import make_policy, simulate_clicks
from ndcglab.data import load_dataset

CHUNK = 1_000_000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="synthetic:default")
    ap.add_argument("--sessions", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--pl", action="store_true", help="also time Plackett-Luce sampling (slow)")
    args = ap.parse_args()
    numba.set_num_threads(args.threads)
    ds = load_dataset(args.data)
    rng = np.random.default_rng(0)
    scores = ds.labels + rng.normal(size=len(ds.labels))
    setups = {
        "dbn": ("dbn(gamma=0.9)", make_policy(scores)),
        "pbm": ("pbm(eta=1)", make_policy(scores)),
        "pbm+pl": ("pbm(eta=1)", make_policy(scores, "pl(temperature=1)")),
    }
    times: dict[str, list[float]] = {name: [] for name in setups}

    def run(name: str | None) -> float:
        key = name or "dbn"
        model, policy = setups[key]
        t0 = time.perf_counter()
        done = 0
        while done < args.sessions:
            n = min(CHUNK, args.sessions - done)
            simulate_clicks(ds, model, policy, n, k=10, seed=1, first_session=done)
            done += n
        dt = time.perf_counter() - t0
        times[key].append(dt)
        return dt

    if not args.pl:
        del setups["pbm+pl"], times["pbm+pl"]
    ratios, _, loads = interleaved_ratios(run, [n for n in setups if n != "dbn"], args.repeats)
    print(f"data {args.data}: {ds.n_queries} queries, {ds.n_docs} documents; top 10; "
          f"{args.sessions:,} sessions per round; {args.threads} threads; "
          f"cpus {os.cpu_count()}")  # fmt: skip
    for name, ts in times.items():
        ts = ts[1:]  # the warm-up round left out
        rates = sorted(args.sessions / t * 60 / 1e6 for t in ts)
        print(f"{name:7s} million sessions/minute: min {rates[0]:.1f}  median "
              f"{statistics.median(rates):.1f}  max {rates[-1]:.1f}")  # fmt: skip
    for name, r in ratios.items():
        print(f"time {name} / dbn: min {min(r):.2f}  median {statistics.median(r):.2f}  "
              f"max {max(r):.2f}")  # fmt: skip
    print(f"load average (1 min) during the rounds: {', '.join(f'{x:.1f}' for x in loads)}")


if __name__ == "__main__":
    main()
