"""Learning from clicks costs what learning from judgments costs: the time per epoch of the same
model and loss trained on click labels (read from the sufficient statistics of a click log, once)
against judged labels (target: at most 1.1×), interleaved with the load average printed.

The click labels (``ips``, :mod:`ndcglab.clicks.learn`) are computed once from the log's
statistics before training; each round then times one :func:`ndcglab.training.fit` on the judged
labels (the reference) and one on the click labels, with the same loss (``--loss``, with the
linear gain click labels get), model, optimiser and epochs; the ratio is per epoch. The time to
aggregate the log (once per training, not per epoch) is printed apart.

    python benchmarks/bench_clicks_learn.py --sessions 100000 --repeats 5

Measured (2 cores shared with other jobs, load average 12.7-12.9; synthetic:default,
10^5 sessions, linear ListNet with a linear gain, 20 epochs, 5 rounds): click labels / judged
labels per epoch min 0.938, median 0.984, max 1.061 (21.5 ms per epoch); aggregating the log of
10^6 rows took 0.26 s, once.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _interleave import interleaved_ratios
from ndcglab.clicks.learn import click_labels, click_loss, click_statistics
from ndcglab.clicks.simulate import make_policy, simulate_clicks
from ndcglab.data import load_dataset
from ndcglab.training import fit


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="synthetic:default")
    ap.add_argument("--sessions", type=int, default=100_000)
    ap.add_argument("--loss", default="listnet")
    ap.add_argument("--model", default="linear")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    ds = load_dataset(args.data)
    rng = np.random.default_rng(0)
    policy = make_policy(ds.labels + rng.normal(size=ds.n_docs), "pl(temperature=1)")
    log = simulate_clicks(ds, "pbm(eta=1)", policy, args.sessions, k=10, seed=0)
    t0 = time.perf_counter()
    stats = click_statistics(log, ds)
    labels = click_labels(stats, estimator="ips", examination=log.meta["examination"], tau=0.01)
    aggregate_s = time.perf_counter() - t0
    loss = click_loss(args.loss)
    judged = ds
    clicked = dataclasses.replace(ds, labels=labels)
    opts = {
        "model": args.model,
        "loss": loss,
        "epochs": args.epochs,
        "patience": None,
        "progress": False,
        "seed": 0,
    }
    epochs: dict[str, int] = {}

    def run(name: str | None) -> float:
        data = judged if name is None else clicked
        t = time.perf_counter()
        res = fit(data, **opts)
        elapsed = time.perf_counter() - t
        epochs[name or "judged"] = int(res.epochs_run)
        return elapsed / max(int(res.epochs_run), 1)

    ratios, ref, loads = interleaved_ratios(run, ["clicks"], args.repeats)
    r = ratios["clicks"]
    print(
        f"{args.data}: {ds.n_queries} queries, {ds.n_docs} documents; {args.sessions:,} sessions "
        f"({len(log):,} rows) aggregated in {aggregate_s:.3f} s (once per training)"
    )
    print(
        f"model {args.model}, loss {loss}, {args.epochs} epochs (run: judged "
        f"{epochs.get('judged')}, clicks {epochs.get('clicks')})"
    )
    print(f"judged labels: median {statistics.median(ref) * 1e3:.1f} ms per epoch")
    print(
        f"click labels / judged labels, per epoch: min {min(r):.3f}, median "
        f"{statistics.median(r):.3f}, max {max(r):.3f} (target <= 1.1)"
    )
    print(f"load average (1 min) during the rounds: {min(loads):.1f}-{max(loads):.1f}")


if __name__ == "__main__":
    main()
