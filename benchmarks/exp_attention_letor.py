"""Five-fold comparison on LETOR: self-attention vs MLP vs boosted trees, DASALC options on/off.

For MQ2008 and OHSUMED (QueryLevelNorm), every fold: train on ``train``, choose the epoch (trees:
the round) on ``vali`` by NDCG@10, score ``test``; NDCG@1/5/10 under the ``letor4`` preset per
test query, pooled over the five folds; paired t-test and paired randomisation test (Holm over
the comparisons of a table) of each run against the MLP. Small settings (the machine is shared):
see ``RUNS`` and ``--epochs``. Writes one JSON file and prints a Markdown table.

    python benchmarks/exp_attention_letor.py --epochs 20 --ensemble 3 --out /tmp/exp.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from ndcglab.analysis.paired_tests import holm, paired_t_test, permutation_test
from ndcglab.data import load_letor_folder
from ndcglab.training import TrainConfig
from ndcglab.training.crossval import cross_validate

MEASURES = ["ndcg@1", "ndcg@5", "ndcg@10"]
DATA = Path(os.environ.get("NDCGLAB_SHARED_DATA", "shared/data"))


def runs(epochs: int, ensemble: int, rounds: int) -> dict[str, TrainConfig]:
    common = {"epochs": epochs, "patience": None, "seed": 0, "preset": "letor4"}
    mlp = {"model": "mlp", "hidden": (64, 32), "lr": 1e-3, "batch_size": 16}
    att = {"model": "attention", "hidden": (64,), "heads": 2, "blocks": 2, "ff_width": 128,
           "dropout": 0.1, "lr": 1e-3, "batch_size": 16}  # fmt: skip
    dasalc = {"normalize": "log1p_zscore", "noise": 0.1, "ensemble": ensemble}
    return {
        "mlp": TrainConfig(**common, **mlp),
        "mlp+dasalc": TrainConfig(**common, **mlp, **dasalc),
        "attention": TrainConfig(**common, **att),
        "attention+dasalc": TrainConfig(**common, **att, **dasalc),
        "gbdt": TrainConfig(
            model="gbdt", seed=0, preset="letor4", rounds=rounds, patience=30, num_threads=1
        ),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--ensemble", type=int, default=3, help="seeds of the DASALC runs")
    ap.add_argument("--rounds", type=int, default=300, help="boosting rounds of the trees")
    ap.add_argument("--datasets", default="MQ2008,OHSUMED")
    ap.add_argument("--out", default="/tmp/exp_attention_letor.json")
    args = ap.parse_args()
    where = {"MQ2008": DATA / "MQ2008", "OHSUMED": DATA / "OHSUMED" / "QueryLevelNorm"}
    report: dict[str, object] = {
        "epochs": args.epochs,
        "ensemble": args.ensemble,
        "rounds": args.rounds,
        "load_start": os.getloadavg(),
    }
    for name in args.datasets.split(","):
        folds = load_letor_folder(where[name])
        t0 = time.perf_counter()
        res = cross_validate(
            folds,
            runs(args.epochs, args.ensemble, args.rounds),
            measures=MEASURES,
            preset="letor4",
            progress=False,
            on_fold=lambda r, name=name: print(
                f"# {name} {r.fold} {r.run}: {r.seconds:.0f} s, load {os.getloadavg()[0]:.1f}",
                file=sys.stderr,
                flush=True,
            ),
        )
        per_run: dict[str, dict[str, np.ndarray]] = {}
        for r in res.results:
            if r.evaluation is None:
                continue
            d = per_run.setdefault(r.run, {m: [] for m in MEASURES})  # type: ignore[misc]
            for m in MEASURES:
                d[m].append(np.asarray(r.evaluation.per_query[m]))
        table = {}
        for run, d in per_run.items():
            table[run] = {m: np.concatenate(v) for m, v in d.items()}
        rows = {}
        for m in MEASURES:
            base = table["mlp"][m]
            others = [k for k in table if k != "mlp"]
            p_t = [paired_t_test(table[k][m], base).p_value for k in others]
            p_r = [permutation_test(table[k][m], base, seed=0).p_value for k in others]
            adj = holm(p_r)
            for k, pt, pr, pa in zip(others, p_t, p_r, adj):
                rows.setdefault(k, {})[m] = {
                    "mean": float(np.nanmean(table[k][m])),
                    "diff_vs_mlp": float(np.nanmean(table[k][m] - base)),
                    "p_t": float(pt),
                    "p_perm": float(pr),
                    "p_perm_holm": float(pa),
                }
            rows.setdefault("mlp", {})[m] = {"mean": float(np.nanmean(base))}
        report[name] = {
            "queries": len(table["mlp"]["ndcg@10"]),
            "seconds": time.perf_counter() - t0,
            "rows": rows,
        }
        print(f"## {name} ({report[name]['queries']} test queries, 5 folds)")  # type: ignore[index]
        print("| run | " + " | ".join(MEASURES) + " |")
        print("|---|" + "---|" * len(MEASURES))
        for run, cells in rows.items():
            texts = []
            for m in MEASURES:
                c = cells[m]
                extra = (
                    "" if "p_t" not in c else f" (p_t {c['p_t']:.3f}, holm {c['p_perm_holm']:.3f})"
                )
                texts.append(f"{c['mean']:.4f}{extra}")
            print(f"| {run} | " + " | ".join(texts) + " |")
        sys.stdout.flush()
    report["load_end"] = os.getloadavg()
    Path(args.out).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
