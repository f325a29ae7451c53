"""XGBoost driven by our losses vs XGBoost's own ``rank:ndcg``: test NDCG and time per round.

Every objective is trained by :func:`ndcglab.gbdt.train_xgboost` with the same trees and rounds
(``num_leaves`` leaves grown leaf-wise, ``learning_rate``, at most ``--rounds`` rounds, one
thread), the same early stopping (``--patience`` rounds without improvement of NDCG@10 under
``letor4`` on the fold's validation file, computed by :mod:`ndcglab.measures` for every
objective, XGBoost's included), and scored on the fold's test file under ``letor4``. The table
shows the mean NDCG@10 over the five folds (and the standard deviation over folds).

    python benchmarks/bench_xgboost.py                   # MQ2008 + OHSUMED, 5 folds
    python benchmarks/bench_xgboost.py --quick           # 2 folds
    python benchmarks/bench_xgboost.py --per-round       # seconds per round vs rank:ndcg

``--per-round``: ``xgboost.train`` with the same parameters (1 thread, no validation) driven by
our objectives and by ``rank:ndcg`` on the dataset's Fold1 training file, interleaved and
repeated; prints the min/median/max of each objective's time per round divided by
``rank:ndcg``'s in the same repeat, and the load average.

Data: ``$NDCGLAB_SHARED_DATA/MQ2008`` and ``.../OHSUMED/QueryLevelNorm`` (or ``--data``).
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
OBJECTIVES = ["listnet", "cs_listmle@10", "lambdaloss@10", "xgboost:rank:ndcg"]
REFERENCE = "xgboost:rank:ndcg"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--datasets", default="MQ2008,OHSUMED")
    ap.add_argument("--losses", default=";".join(OBJECTIVES), help="';'-separated specs")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--learning-rate", type=float, default=0.1)
    ap.add_argument("--num-leaves", type=int, default=31)
    ap.add_argument("--patience", type=int, default=30)
    ap.add_argument("--quick", action="store_true", help="2 folds")
    ap.add_argument("--per-round", action="store_true", help="seconds per round vs rank:ndcg")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", type=Path, default=None, help="also write all numbers here")
    args = ap.parse_args(argv)
    losses = [s.strip() for s in args.losses.split(";") if s.strip()]
    if args.per_round:
        return _per_round(args, losses)

    from ndcglab._compat import torch
    from ndcglab.data import load_letor_folder
    from ndcglab.gbdt import train_xgboost
    from ndcglab.measures import evaluate

    torch().set_num_threads(1)
    settings = {
        "num_boost_round": args.rounds,
        "learning_rate": args.learning_rate,
        "num_leaves": args.num_leaves,
        "early_stopping_rounds": args.patience,
        "measure": "ndcg@10",
        "preset": "letor4",
        "num_threads": 1,
        "seed": 0,
    }
    print("settings (identical for every objective):", json.dumps(settings))
    n_folds = 2 if args.quick else args.folds
    results: dict[str, dict[str, dict]] = {}
    for ds_name in args.datasets.split(","):
        folder = args.data / DATASETS.get(ds_name, ds_name)
        if not folder.exists():
            print(f"skipping {ds_name}: {folder} not found", file=sys.stderr)
            continue
        folds = load_letor_folder(folder)[:n_folds]
        results[ds_name] = {}
        for loss in losses:
            per_fold = []
            t0 = time.perf_counter()
            for f in folds:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    model = train_xgboost(f.train, loss, valid=f.vali, **settings)
                res = evaluate(f.test, model.predict(f.test), ["ndcg@10"], preset="letor4")
                per_fold.append(
                    {"fold": f.name, "ndcg@10": res.mean["ndcg@10"], "best": model.best_iteration}
                )
            secs = time.perf_counter() - t0
            vals = [p["ndcg@10"] for p in per_fold]
            results[ds_name][loss] = {
                "ndcg@10": float(np.mean(vals)),
                "std": float(np.std(vals)),
                "folds": per_fold,
                "seconds": secs,
            }
            print(
                f"  {ds_name:8s} {loss:20s} NDCG@10 {np.mean(vals):.4f} ± {np.std(vals):.4f}  "
                f"best rounds {[p['best'] for p in per_fold]}  {secs:6.1f}s",
                flush=True,
            )
    print()
    print(f"| objective (XGBoost) | {' | '.join(results)} |")
    print(f"|---|{'---|' * len(results)}")
    for loss in losses:
        cells = [
            f"{r[loss]['ndcg@10']:.4f} ± {r[loss]['std']:.4f}"
            for r in results.values()
            if loss in r
        ]
        print(f"| {loss} | {' | '.join(cells)} |")
    print(f"\nNDCG@10 (letor4) on the test files, mean ± std over {n_folds} folds")
    if args.json:
        args.json.write_text(json.dumps({"settings": settings, "results": results}, indent=2))
    return 0


def _per_round(args: argparse.Namespace, losses: list[str]) -> int:
    """Seconds per round, ours vs ``rank:ndcg``, interleaved and repeated (1 thread)."""
    import xgboost as xgb

    from ndcglab._compat import torch
    from ndcglab.data import load_letor_folder
    from ndcglab.gbdt.xgboost_objective import XGBoostObjective
    from ndcglab.gbdt.xgboost_train import to_dmatrix, xgboost_objective, xgboost_params

    torch().set_num_threads(1)
    rounds = 10 if args.quick else 30
    repeats = 3 if args.quick else args.repeats
    ours = [name for name in losses if xgboost_objective(name) is None]
    for ds_name in args.datasets.split(","):
        folder = args.data / DATASETS.get(ds_name, ds_name)
        if not folder.exists():
            print(f"skipping {ds_name}: {folder} not found", file=sys.stderr)
            continue
        train = load_letor_folder(folder)[0].train
        base = xgboost_params(
            learning_rate=args.learning_rate, num_leaves=args.num_leaves, seed=0, num_threads=1
        )
        bound = {name: XGBoostObjective(name) for name in ours}
        dtrain = to_dmatrix(train)

        def run(
            name: str | None, dtrain: object = dtrain, base: dict = base, bound: dict = bound
        ) -> float:
            params = dict(base)
            if name is None:
                params["objective"] = "rank:ndcg"
            t0 = time.perf_counter()
            xgb.train(
                params, dtrain, num_boost_round=rounds, obj=None if name is None else bound[name]
            )
            return (time.perf_counter() - t0) / rounds

        ratios, ref_times, loads = interleaved_ratios(run, ours, repeats)
        print(
            f"{ds_name} Fold1 train ({train.n_queries} queries, {train.n_docs} docs), {rounds} "
            f"rounds, {repeats} interleaved repeats, 1 thread; load average "
            f"{min(loads):.2f}..{max(loads):.2f}"
        )
        print(f"  xgboost:rank:ndcg    {1e3 * float(np.median(ref_times)):.2f} ms/round (median)")
        for name, rs in ratios.items():
            print(
                f"  {name:20s} x rank:ndcg per round: min {min(rs):.2f}  median "
                f"{float(np.median(rs)):.2f}  max {max(rs):.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
