"""Boosted trees driven by our losses vs LightGBM's own ``lambdarank`` and ``rank_xendcg``, one run.

Every objective is trained with exactly the same trees and rounds (``num_leaves``,
``learning_rate``, ``min_data_in_leaf``, at most ``--rounds`` rounds), the same early stopping
(``--patience`` rounds without improvement of NDCG@10 under the ``letor4`` preset on the fold's
validation file, computed by :mod:`ndcglab.measures` for every objective, LightGBM's included),
and is scored on the fold's test file with the official LETOR 4.0 conventions (``letor4``:
NDCG@1,3,5,10 and MAP). The table shows means over the five folds.

    python benchmarks/bench_gbdt.py                      # MQ2008 + OHSUMED, 5 folds, all objectives
    python benchmarks/bench_gbdt.py --quick              # 2 folds, fewer objectives
    python benchmarks/bench_gbdt.py --losses listnet,lightgbm:lambdarank --datasets MQ2008
    python benchmarks/bench_gbdt.py --per-round [--quick]  # seconds per round vs lambdarank
    python benchmarks/bench_gbdt.py --pair-memory          # ranknet/lambdarank, one 10k list

``--per-round``: the same ``lightgbm.train`` (same trees, 1 thread) driven by our objectives and
by LightGBM's ``lambdarank`` on MQ2008 Fold1's training file, interleaved and repeated; prints
the min/median/max of each objective's time per round divided by lambdarank's in the same
repeat, and the load average. ``--pair-memory``: peak memory (the peak RSS growth of a fresh
child process; tracemalloc does not see torch's allocations) of the value and gradient of
``ranknet`` and ``lambdarank`` (no cut-off) on one 10,000-document list, with glibc's default
malloc and with a fixed mmap threshold (freed blocks go back at once: the live peak).

Data: ``../shared/data/MQ2008`` and ``../shared/data/OHSUMED/QueryLevelNorm`` (or ``--data``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from _interleave import interleaved_ratios

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("NDCGLAB_SHARED_DATA", ROOT.parent / "shared" / "data"))

DATASETS = {"MQ2008": "MQ2008", "OHSUMED": "OHSUMED/QueryLevelNorm"}
OURS = [
    "listnet",
    "listnet(gain=exp2)",
    "consistent_listnet",
    "consistent_listnet(norm=z10)",
    "consistent_squared",
    "listmle",
    "cs_listmle@10",
    "ranknet",
    "lambdarank",
    "lambdarank@10",
]
THEIRS = ["lightgbm:lambdarank", "lightgbm:rank_xendcg"]
QUICK = ["listnet", "consistent_listnet", "lambdarank@10"]
TEST_MEASURES = ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--datasets", default="MQ2008,OHSUMED")
    ap.add_argument("--losses", default=None, help="comma-separated; default: ours + LightGBM's")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--learning-rate", type=float, default=0.05)
    ap.add_argument("--num-leaves", type=int, default=31)
    ap.add_argument("--min-data-in-leaf", type=int, default=20)
    ap.add_argument("--patience", type=int, default=100)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="2 folds, 3 of our losses")
    ap.add_argument("--json", type=Path, default=None, help="also write all numbers here")
    ap.add_argument("--per-round", action="store_true", help="seconds per round vs lambdarank")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--pair-memory", action="store_true", help="peak memory on a 10k list")
    ap.add_argument("--pair-child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.pair_child:
        return _pair_child(args.pair_child)
    if args.pair_memory:
        return _pair_memory()
    if args.per_round:
        return _per_round(args)

    from ndcglab._compat import torch
    from ndcglab.data import load_letor_folder
    from ndcglab.gbdt import train_gbdt
    from ndcglab.measures import evaluate

    torch().set_num_threads(max(1, args.threads))
    losses = (
        args.losses.split(";")
        if args.losses and ";" in args.losses
        else (
            [s.strip() for s in _split_specs(args.losses)]
            if args.losses
            else (QUICK if args.quick else OURS) + THEIRS
        )
    )
    n_folds = 2 if args.quick else args.folds
    settings = {
        "num_boost_round": args.rounds,
        "learning_rate": args.learning_rate,
        "num_leaves": args.num_leaves,
        "min_data_in_leaf": args.min_data_in_leaf,
        "early_stopping_rounds": args.patience,
        "measure": "ndcg@10",
        "preset": "letor4",
        "num_threads": args.threads,
        "seed": 0,
    }
    print("settings (identical for every objective):", json.dumps(settings))
    results: dict[str, dict[str, dict]] = {}
    for ds_name in args.datasets.split(","):
        folder = args.data / DATASETS.get(ds_name, ds_name)
        if not folder.exists():
            print(f"skipping {ds_name}: {folder} not found", file=sys.stderr)
            continue
        folds = load_letor_folder(folder)[:n_folds]
        data = [(f.name, f.train, f.vali, f.test) for f in folds]
        results[ds_name] = {}
        for loss in losses:
            per_fold = []
            t0 = time.perf_counter()
            for name, train, vali, test in data:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    model = train_gbdt(train, loss, valid=vali, **settings)
                res = evaluate(test, model.predict(test), TEST_MEASURES, preset="letor4")
                per_fold.append(
                    {
                        "fold": name,
                        **res.mean,
                        "best_iteration": model.best_iteration,
                        "hessian": model.metadata["objective"].get(
                            "hessian_used", model.metadata["objective"].get("hessian")
                        ),
                    }
                )
            secs = time.perf_counter() - t0
            mean = {m: float(np.mean([f[m] for f in per_fold])) for m in TEST_MEASURES}
            results[ds_name][loss] = {"mean": mean, "folds": per_fold, "seconds": secs}
            print(
                f"  {ds_name:8s} {loss:32s} NDCG@10 {mean['ndcg@10']:.4f}  MAP {mean['map']:.4f}  "
                f"best it {[f['best_iteration'] for f in per_fold]}  {secs:6.1f}s",
                flush=True,
            )
        print()
        print(_table(ds_name, results[ds_name], len(data)))
        print()
    if args.json:
        args.json.write_text(
            json.dumps({"settings": settings, "results": results}, indent=2, default=str)
        )
    return 0


PER_ROUND = ["cs_listmle@10", "ranknet", "lambdarank", "lambdarank@10", "listnet"]


def _per_round(args: argparse.Namespace) -> int:
    """Seconds per boosting round, ours vs LightGBM lambdarank, interleaved and repeated."""
    import lightgbm as lgb

    from ndcglab.data import load_letor_folder
    from ndcglab.gbdt import LossObjective
    from ndcglab.gbdt.train import to_lgb_dataset

    train = load_letor_folder(args.data / DATASETS["MQ2008"])[0].train
    rounds = 10 if args.quick else 30
    repeats = 3 if args.quick else args.repeats
    objectives = [s.strip() for s in _split_specs(args.losses)] if args.losses else PER_ROUND
    base = {
        "num_leaves": args.num_leaves,
        "learning_rate": args.learning_rate,
        "min_data_in_leaf": args.min_data_in_leaf,
        "num_threads": args.threads,
        "verbosity": -1,
        "seed": 0,
        "deterministic": True,
    }
    bound = {name: LossObjective(name) for name in objectives}

    def run(name: str | None) -> float:
        params = dict(base)
        params["objective"] = "lambdarank" if name is None else bound[name]
        ds = to_lgb_dataset(train)
        t0 = time.perf_counter()
        lgb.train(params, ds, num_boost_round=rounds)
        return (time.perf_counter() - t0) / rounds

    ratios, ref_times, loads = interleaved_ratios(run, objectives, repeats)
    print(
        f"MQ2008 Fold1 train ({train.n_queries} queries, {train.n_docs} docs), {rounds} rounds, "
        f"{repeats} interleaved repeats, {args.threads} thread(s); load average "
        f"{min(loads):.2f}..{max(loads):.2f}"
    )
    print(f"  lightgbm:lambdarank  {1e3 * float(np.median(ref_times)):.2f} ms/round (median)")
    for name, rs in ratios.items():
        print(
            f"  {name:20s} x lambdarank per round: min {min(rs):.2f}  median "
            f"{float(np.median(rs)):.2f}  max {max(rs):.2f}"
        )
    return 0


def _pair_child(spec: str) -> int:
    """Value + gradient of ``spec`` on one 10,000-document list; prints the peak RSS growth."""
    import resource

    from ndcglab._compat import torch as _t
    from ndcglab.losses import get_loss

    torch = _t()
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(0)
    m = 10_000
    s = torch.randn(1, m, generator=gen, dtype=torch.float64, requires_grad=True)
    y = torch.randint(0, 5, (1, m), generator=gen).to(torch.float64)
    loss = get_loss(spec)
    loss(s[:, :8].detach(), y[:, :8])  # imports and first calls before the baseline
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    t0 = time.perf_counter()
    value = loss(s, y).sum()
    (g,) = __import__("torch").autograd.grad(value, s)
    secs = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    out = {"spec": spec, "peak_mb": peak - before, "seconds": secs}
    print(json.dumps({**out, "value": float(value.detach()), "grad_norm": float(g.norm())}))
    return 0


def _pair_memory() -> int:
    """Peak memory of ``ranknet`` and ``lambdarank`` on one 10,000-document list (child runs)."""
    import subprocess

    # glibc's malloc keeps freed blocks of the heap resident, so the default peak RSS overstates
    # what is live; a fixed mmap threshold returns every large block on free (live memory)
    for spec in ("ranknet", "lambdarank"):
        for label, extra in (("default malloc", {}), ("live", {"MALLOC_MMAP_THRESHOLD_": "65536"})):
            out = (
                subprocess.run(
                    [sys.executable, __file__, "--pair-child", spec],
                    capture_output=True,
                    text=True,
                    check=True,
                    env={**os.environ, **extra},
                )
                .stdout.strip()
                .splitlines()[-1]
            )
            r = json.loads(out)
            print(
                f"  {spec:12s} one 10,000-document list, value + gradient: peak RSS "
                f"+{r['peak_mb']:.0f} MB ({label}), {r['seconds']:.2f} s "
                f"(value {r['value']:.10g}, |grad| {r['grad_norm']:.10g})",
                flush=True,
            )
    return 0


def _split_specs(text: str) -> list[str]:
    """Split a comma-separated list of specs, keeping commas inside brackets."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += (ch == "(") - (ch == ")")
        cur += ch
    if cur:
        out.append(cur)
    return [s for s in out if s.strip()]


def _table(ds_name: str, res: dict[str, dict], n_folds: int) -> str:
    header = ["objective", *[m.upper().replace("NDCG", "NDCG") for m in TEST_MEASURES], "sec"]
    rows = []
    best10 = max(r["mean"]["ndcg@10"] for r in res.values())
    for loss, r in res.items():
        mark = " *" if r["mean"]["ndcg@10"] == best10 else ""
        rows.append(
            [loss + mark, *[f"{r['mean'][m]:.4f}" for m in TEST_MEASURES], f"{r['seconds']:.0f}"]
        )
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    lines = [f"{ds_name}: test, letor4 conventions, mean over {n_folds} folds (* best NDCG@10)"]
    lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))
            )
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
