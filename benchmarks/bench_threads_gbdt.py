"""``ndcglab train --model gbdt``: the default thread count against ``--threads 1`` (and against
every core, what LightGBM did by default before the one thread rule), on a busy machine.

Each setting runs the same command line as a child process (the command a user types: reading
the data, training, writing the model), on MQ2008's Fold1 when ``NDCGLAB_SHARED_DATA`` (default
``/work/shared/data``) holds it, else on the embedded ``default`` synthetic set. The settings
are interleaved (``benchmarks/_interleave.py``: every repetition runs each once, the reference
``--threads 1`` first), so a change of machine load hits all of them alike; the table shows the
min / median / max over the repetitions of ``seconds(setting) / seconds(--threads 1)`` and the
one-minute load average before and after. Every model written must hold the same trees as the
``--threads 1`` model (LightGBM's model text up to ``end of trees``, byte for byte; XGBoost's
trees as JSON): the thread count may change the time, never the model.

    python benchmarks/bench_threads_gbdt.py [--repeats 5] [--rounds 100] [--engine lightgbm]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _interleave import interleaved_ratios


def _data() -> str:
    shared = Path(os.environ.get("NDCGLAB_SHARED_DATA", "/work/shared/data"))
    fold = shared / "MQ2008" / "Fold1"
    return str(fold) if (fold / "train.txt.gz").exists() else "synthetic:default"


def _trees(path: Path, engine: str) -> bytes:
    """The trees of a model file: LightGBM's text up to ``end of trees`` (the parameters after it
    record the thread count), XGBoost's ``trees`` array."""
    with zipfile.ZipFile(path) as z:
        if engine == "lightgbm":
            return z.read("lightgbm.txt").split(b"end of trees")[0]
        model = json.loads(z.read("xgboost.json"))
    return json.dumps(model["learner"]["gradient_booster"]["model"]["trees"]).encode()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--engine", default="lightgbm", choices=("lightgbm", "xgboost"))
    args = ap.parse_args()
    data = _data()
    cores = os.cpu_count() or 1
    settings = {"default": [], f"--threads {cores} (every core)": ["--threads", str(cores)]}
    tmp = Path(tempfile.mkdtemp(prefix="bench_threads_gbdt_"))
    reference: dict[str, bytes] = {}

    def run(name: str | None) -> float:
        extra = ["--threads", "1"] if name is None else settings[name]
        out = tmp / f"{(name or 'one').split()[0].strip('-')}.ndcglab"
        cmd = [sys.executable, "-m", "ndcglab.cli.main", "train", data, "--model", "gbdt",
               "--engine", args.engine, "--rounds", str(args.rounds), "--patience",
               str(args.rounds), "--out", str(out), "-q", *extra]  # fmt: skip
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        seconds = time.perf_counter() - t0
        trees = _trees(out, args.engine)
        key = "ref"
        if key not in reference:
            reference[key] = trees
        assert trees == reference[key], f"{name or '--threads 1'} grew other trees"
        return seconds

    ratios, ref_times, loads = interleaved_ratios(run, list(settings), args.repeats)
    print(f"data {data}; engine {args.engine}; {args.rounds} rounds; {cores} cores; "
          f"{args.repeats} interleaved repetitions")  # fmt: skip
    print(f"--threads 1: median {statistics.median(ref_times):.1f} s "
          f"(min {min(ref_times):.1f}, max {max(ref_times):.1f})")  # fmt: skip
    print(f"{'setting':<28} {'min':>6} {'median':>7} {'max':>6}   (seconds / seconds(--threads 1))")
    for name, r in ratios.items():
        print(f"{name:<28} {min(r):6.2f} {statistics.median(r):7.2f} {max(r):6.2f}")
    print(f"load average (1 min): {loads[0]:.1f} before, {loads[-1]:.1f} after, "
          f"max {max(loads):.1f}; every model identical to --threads 1's: yes")  # fmt: skip


if __name__ == "__main__":
    main()
