"""The default number of torch CPU threads for training: one thread, torch's default, the rule.

``ndcglab train`` / ``cv`` (and :func:`ndcglab.training.train` with ``num_threads=None``) choose
the thread count by the rule of ``docs/training.md`` ("Threads"). This benchmark times the same
training run with one thread, with torch's default and with the rule, on a small set (the
embedded ``default`` synthetic set: 200 queries, ~8,000 documents, 20 features; Adam, ListNet,
60 epochs) and a large one (``--large-queries`` queries of the MSLR-WEB30K-shaped ``mslr30k``
set, 136 features; full-batch gradient descent, ListNet, 4 epochs). The settings are
interleaved (every repetition runs each setting once, in a rotating order), so a change of
machine load hits all of them alike; each repetition gives the ratio
``seconds(setting) / seconds(1 thread)``, and the table shows the min / median / max of those
ratios over the repetitions, with the load average before and after.

    python benchmarks/bench_threads.py [--repeats 5] [--large-queries 3000] [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any


def _run(ds: Any, threads: int | str | None, **options: Any) -> float:
    import torch

    from ndcglab.training import train

    if threads == "torch":  # torch's own default
        threads = torch.get_num_threads()
    # None: the default rule (ndcglab.training.config.auto_threads)
    t0 = time.perf_counter()
    train(ds, num_threads=threads, progress=False, **options)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--large-queries", type=int, default=3000)
    ap.add_argument("--quick", action="store_true", help="2 repeats, 1000 large queries")
    args = ap.parse_args()
    if args.quick:
        args.repeats, args.large_queries = 2, 1000

    import torch

    from ndcglab.data import make_synthetic
    from ndcglab.training.config import auto_threads

    cores = os.cpu_count() or 1
    torch.set_num_threads(torch.get_num_threads())  # fix the default before any training run
    small = make_synthetic("default", seed=1)
    large = make_synthetic("mslr30k", n_queries=args.large_queries)
    cases = {
        "small": (small, {"optimizer": "adam", "epochs": 60, "loss": "listnet"}),
        "large": (large, {"optimizer": "gd", "epochs": 4, "loss": "listnet", "tol": 0.0}),
    }
    settings: dict[str, Any] = {
        "1": 1,
        f"{torch.get_num_threads()} (torch's)": "torch",
        "default rule": None,
    }
    print(
        f"cores {cores}; torch {torch.__version__} default threads {torch.get_num_threads()}; "
        f"load average before {os.getloadavg()}"
    )
    for name, (ds, _) in cases.items():
        print(
            f"{name}: {ds.n_queries} queries, {ds.n_docs} documents, {ds.n_features} features; "
            "the default rule picks "
            f"{auto_threads(ds.n_docs, ds.n_features, available=torch.get_num_threads())} "
            "thread(s) now"
        )
    times: dict[tuple[str, str], list[float]] = {}
    for ds, opts in cases.values():  # warm-up (numba, torch kernels)
        _run(ds, 1, **{**opts, "epochs": 1})
    for r in range(args.repeats):
        for name, (ds, opts) in cases.items():
            order = list(settings)
            order = order[r % len(order) :] + order[: r % len(order)]
            for label in order:
                times.setdefault((name, label), []).append(_run(ds, settings[label], **opts))
    print(f"load average after {os.getloadavg()}\n")
    print("seconds per run (median) and ratio to 1 thread over the repetitions (min/median/max)")
    print(f"{'data':<6} {'threads':<16} {'median s':>9} {'ratio min':>10} {'median':>8} {'max':>8}")
    for name in cases:
        base = times[(name, "1")]
        for label in settings:
            t = times[(name, label)]
            ratios = [a / b for a, b in zip(t, base)]
            print(
                f"{name:<6} {label:<16} {statistics.median(t):9.2f} {min(ratios):10.2f} "
                f"{statistics.median(ratios):8.2f} {max(ratios):8.2f}"
            )


if __name__ == "__main__":
    main()
