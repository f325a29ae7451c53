"""Fingerprints of trained models, cross-validation outputs and reproduce reports.

Prints one JSON object: for every registered loss x model kind (linear, MLP; AdaRank; boosted trees
with a few objectives) trained on fixed seeds and small synthetic data, the SHA-256 of the learned
weights (torch models) and of the predictions on a test set; the ``ndcglab cv --format json``
outputs of a few configurations (run times removed); and, with ``--reproduce``, a hash of the
numbers of every ``results.json`` of ``ndcglab reproduce all --quick`` (timings, paths, dates and
versions removed). Used to show that a refactoring changes no number: run it before and after
and compare the two outputs (``diff``).

Only the command line and names that are public in every version are used (``load_dataset``,
``training.train``, ``TrainConfig``, ``NDCGRanker``, ``ndcglab train``/``cv``/``generate``/
``reproduce``).

Usage: ``python benchmarks/fit_fingerprints.py [--reproduce] > fingerprints.json``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

NDCGLAB = [sys.executable, "-m", "ndcglab"]
#: keys whose values depend on the run (time, machine, folder), not on the numbers: dropped
VOLATILE = frozenset(
    {
        "seconds",
        "elapsed_s",
        "timings_s",
        "started",
        "finished",
        "versions",
        "platform",
        "python",
        "command",
        "cpus",
        "torch_threads",
        "folder",
        "href",
        "links",
    }
)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def array_hash(a: Any) -> str:
    return sha(np.ascontiguousarray(np.asarray(a, dtype=np.float64)).tobytes())


def weights_hash(model: Any) -> str:
    state = model.state_dict()
    h = hashlib.sha256()
    for key in sorted(state):
        h.update(key.encode())
        h.update(state[key].detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def losses() -> list[tuple[str, str]]:
    out = subprocess.run(
        [*NDCGLAB, "list", "losses", "--format", "json"], capture_output=True, text=True, check=True
    ).stdout
    return [(i["name"], i.get("kind", "")) for i in json.loads(out)["items"]]


def torch_models(train: Any, valid: Any, test: Any) -> dict[str, Any]:
    from ndcglab.training import TrainConfig
    from ndcglab.training import train as fit

    out: dict[str, Any] = {}
    runs: list[tuple[str, dict[str, Any]]] = []
    for name, kind in losses():
        if kind == "boosting":
            runs.append((f"adarank/{name}", {"loss": "adarank(rounds=10)", "model": "adarank"}))
            continue
        runs.append((f"linear/{name}", {"loss": name, "model": "linear", "epochs": 6}))
        runs.append((f"mlp/{name}", {"loss": name, "model": "mlp", "epochs": 3, "hidden": (8,)}))
    runs += [
        ("linear-gd/listnet", {"loss": "listnet", "optimizer": "gd", "epochs": 30}),
        (
            "linear-lbfgs/cs_listmle@10",
            {"loss": "cs_listmle@10", "optimizer": "lbfgs", "epochs": 10},
        ),
        ("linear-gd/ranksvm-C", {"loss": "ranksvm", "optimizer": "gd", "epochs": 20, "C": 2.0}),
        ("mlp-dropout/listmle", {"loss": "listmle", "model": "mlp", "epochs": 3, "dropout": 0.2}),
    ]
    for key, opts in runs:
        res = fit(train, TrainConfig(seed=3, **opts), validation=valid, progress=False)
        out[key] = {
            "weights": weights_hash(res.trained.model),
            "test": array_hash(res.trained.predict(test)),
            "best_epoch": res.best_epoch,
            "epochs_run": res.epochs_run,
            "best_score": res.best_score,
            "stop_reason": res.stop_reason,
        }
    return out


def estimator_models(train: Any, valid: Any, test: Any) -> dict[str, Any]:
    from ndcglab.estimator import NDCGRanker

    out: dict[str, Any] = {}
    for key, params in [
        ("estimator/linear/listnet", {"loss": "listnet", "epochs": 6}),
        ("estimator/mlp/lambdarank", {"loss": "lambdarank", "model": "mlp", "epochs": 3}),
        ("estimator/adarank", {"model": "adarank", "loss": "adarank(rounds=8)"}),
        ("estimator/gbdt/listnet", {"model": "gbdt", "gbdt_params": {"num_boost_round": 15}}),
    ]:
        r = NDCGRanker(seed=5, **params).fit(train, eval_set=valid)
        out[key] = {"test": array_hash(r.predict(test)), "best_epoch": r.best_epoch_}
    return out


def cli_models(tmp: Path, test: Any) -> dict[str, Any]:
    from ndcglab.estimator import NDCGRanker

    out: dict[str, Any] = {}
    runs = [
        ("gbdt/listnet", ["--loss", "listnet"]),
        ("gbdt/lambdarank", ["--loss", "lambdarank", "--num-leaves", "7"]),
        ("gbdt/cs_listmle@10", ["--loss", "cs_listmle@10", "--hessian", "exact"]),
        ("gbdt/lightgbm:lambdarank", ["--loss", "lightgbm:lambdarank", "--lr", "0.1"]),
        ("gbdt/approx_ndcg", ["--loss", "approx_ndcg", "--gbdt-param", "lambda_l2=1"]),
    ]
    for key, extra in runs:
        model = tmp / (key.replace("/", "_").replace(":", "_").replace("@", "_") + ".zip")
        cmd = [
            *NDCGLAB,
            "train",
            "synthetic:default:1",
            "--validation",
            "synthetic:default:2",
            "--model",
            "gbdt",
            "--rounds",
            "25",
            "--seed",
            "4",
            "--out",
            str(model),
            "-q",
            "--format",
            "json",
            *extra,
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        payload = json.loads(done.stdout)
        r = NDCGRanker.load(model)
        out[key] = {
            "test": array_hash(r.predict(test)),
            "best_iteration": payload.get("best_iteration"),
            "mean": payload.get("mean"),
        }
    for key, extra in [
        ("cli/linear/listnet", ["--loss", "listnet", "--epochs", "6"]),
        ("cli/mlp/ranknet", ["--loss", "ranknet", "--model", "mlp", "--epochs", "3"]),
        ("cli/adarank", ["--model", "adarank", "--rounds", "8"]),
        ("cli/linear/listnet-gd", ["--loss", "listnet", "--optimizer", "gd", "--epochs", "20"]),
    ]:
        model = tmp / (key.replace("/", "_") + ".zip")
        cmd = [
            *NDCGLAB,
            "train",
            "synthetic:default:1",
            "--validation",
            "synthetic:default:2",
            "--seed",
            "4",
            "--out",
            str(model),
            "-q",
            "--format",
            "json",
            *extra,
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        payload = json.loads(done.stdout)
        r = NDCGRanker.load(model)
        out[key] = {
            "weights": weights_hash(r.trained_.model),
            "test": array_hash(r.predict(test)),
            "mean": payload.get("mean"),
            "best_epoch": payload.get("best_epoch"),
        }
    return out


#: table columns that hold run times (dropped from a report's tables before hashing)
VOLATILE_COLUMNS = frozenset({"seconds", "run time (s)"})


def strip(obj: Any) -> Any:
    """``obj`` without the run-dependent keys of :data:`VOLATILE` (and, in a report's tables,
    the columns of :data:`VOLATILE_COLUMNS`)."""
    if isinstance(obj, dict) and isinstance(obj.get("columns"), list) and "rows" in obj:
        keep = [i for i, c in enumerate(obj["columns"]) if c not in VOLATILE_COLUMNS]
        obj = {
            **obj,
            "columns": [obj["columns"][i] for i in keep],
            "rows": [[row[i] for i in keep] for row in obj["rows"]],
        }
    if isinstance(obj, dict):
        return {k: strip(v) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [strip(v) for v in obj]
    return obj


def cv_outputs(tmp: Path) -> dict[str, Any]:
    root = tmp / "letor"
    for fold in (1, 2):
        for part, seed in (("train", 10), ("vali", 20), ("test", 30)):
            path = root / f"Fold{fold}" / f"{part}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                [
                    *NDCGLAB,
                    "generate",
                    "default",
                    "--queries",
                    "40",
                    "--seed",
                    str(seed + fold),
                    "--out",
                    str(path),
                ],
                capture_output=True,
                check=True,
            )
    out: dict[str, Any] = {}
    for key, extra in [
        ("linear", ["--loss", "listnet", "--loss", "cs_listmle@10", "--epochs", "8"]),
        (
            "linear-gd",
            [
                "--loss",
                "squared",
                "--optimizer",
                "gd",
                "--epochs",
                "15",
                "--measure",
                "ndcg@5",
                "--measure",
                "map",
            ],
        ),
        ("mlp", ["--loss", "lambdarank", "--model", "mlp", "--epochs", "3", "--hidden", "8"]),
        (
            "gbdt",
            [
                "--model",
                "gbdt",
                "--loss",
                "listnet",
                "--loss",
                "lightgbm:lambdarank",
                "--rounds",
                "15",
            ],
        ),
        ("adarank", ["--model", "adarank", "--rounds", "8"]),
    ]:
        done = subprocess.run(
            [*NDCGLAB, "cv", str(root), "-q", "--format", "json", "--seed", "2", *extra],
            capture_output=True,
            text=True,
        )
        out[key] = {"status": done.returncode, "json": strip(json.loads(done.stdout))}
    return out


def reproduce_outputs(tmp: Path) -> dict[str, Any]:
    folder = tmp / "reproduce"
    subprocess.run(
        [*NDCGLAB, "reproduce", "all", "--quick", "--out", str(folder), "-q"],
        capture_output=True,
        check=True,
    )
    return hash_reports(folder)


def hash_reports(folder: Path) -> dict[str, Any]:
    """A hash of the numbers of every ``results.json`` under ``folder``."""
    out: dict[str, Any] = {}
    for path in sorted(folder.rglob("results.json")):
        data = strip(json.loads(path.read_text()))
        out[str(path.relative_to(folder))] = sha(json.dumps(data, sort_keys=True).encode())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reproduce", action="store_true", help="also run reproduce all --quick")
    ap.add_argument("--keep", default=None, help="keep the temporary files in this folder")
    ap.add_argument(
        "--hash-reports",
        default=None,
        metavar="DIR",
        help="only print the hashes of the results.json files of a reproduce folder",
    )
    args = ap.parse_args()
    if args.hash_reports:
        json.dump(hash_reports(Path(args.hash_reports)), sys.stdout, indent=1, sort_keys=True)
        print()
        return
    os.environ.setdefault("PYTHONHASHSEED", "0")
    from ndcglab.data import load_dataset

    train = load_dataset("synthetic:default:1")
    valid = load_dataset("synthetic:default:2")
    test = load_dataset("synthetic:default:3")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(args.keep or name)
        tmp.mkdir(parents=True, exist_ok=True)
        result = {
            "torch": torch_models(train, valid, test),
            "estimator": estimator_models(train, valid, test),
            "cli": cli_models(tmp, test),
            "cv": cv_outputs(tmp),
        }
        if args.reproduce:
            result["reproduce"] = reproduce_outputs(tmp)
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
