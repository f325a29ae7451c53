"""Whole-process time of ``ndcglab trec_eval -m all_trec`` against the trec_eval binary.

    python benchmarks/bench_trec_eval.py --binary PATH [--queries 31531] [--lines 3770000]
                                         [--repeat 3] [--version 9|10] [--keep DIR] [--cold]

Writes an MSLR-WEB30K-sized qrels/run pair (by default 31,531 topics and 3.77M run lines, every
retrieved document judged 0..4 with MSLR's label shares, scores with 4 decimals so that ties
occur), checks once that ``ndcglab trec_eval`` prints exactly what the binary prints, then times
both as separate processes, interleaved round by round after one warm-up each
(benchmarks/_interleave.py). The binary is trec_eval built from source with its Makefile; its
path comes from ``--binary`` or ``NDCGLAB_TREC_EVAL_BIN`` (the benchmark is skipped without
it). Printed: min/median/max of the wall-clock and CPU (user + system) times of each and of
their ratios ndcglab / trec_eval within a round, and the load average before, between and after
the rounds (the machine is shared: read the ratios with the load), and each one's peak resident
memory. Files already in ``--keep DIR`` (``qrels``, ``run``) are reused. ``--cold`` also times
one ndcglab process with an empty numba cache (its kernels compiled in the process, once per
installation and source change; the timed rounds find them compiled).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _interleave import interleaved_ratios

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
#: MSLR-WEB30K's label shares (labels 0..4)
LABEL_SHARES = (0.514, 0.325, 0.134, 0.019, 0.008)


def write_files(folder: str, n_queries: int, n_lines: int, seed: int = 0) -> tuple[str, str]:
    """A qrels and a run with ``n_queries`` topics and about ``n_lines`` lines each."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(20, 240, size=n_queries).astype(np.float64)
    sizes = np.maximum(1, np.round(sizes * n_lines / sizes.sum())).astype(int)
    qrels = os.path.join(folder, "qrels")
    run = os.path.join(folder, "run")
    with open(qrels, "w") as fq, open(run, "w") as fr:
        for q in range(n_queries):
            n = int(sizes[q])
            labels = rng.choice(5, size=n, p=LABEL_SHARES)
            scores = np.round(rng.random(n), 4)
            order = np.argsort(-scores, kind="stable")
            qid = str(q + 1)
            fq.write("".join(f"{qid} 0 d{i} {labels[i]}\n" for i in range(n)))
            fr.write("".join(f"{qid} Q0 d{i} {r + 1} {scores[i]} bench\n"
                             for r, i in enumerate(order)))  # fmt: skip
    return qrels, run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=os.environ.get("NDCGLAB_TREC_EVAL_BIN"))
    ap.add_argument("--queries", type=int, default=31531)
    ap.add_argument("--lines", type=int, default=3_770_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--version", choices=("9", "10"), default="9")
    ap.add_argument("--keep", default=None, help="write the files here (and keep them)")
    ap.add_argument("--cold", action="store_true", help="also time a cold numba cache")
    args = ap.parse_args()
    if not args.binary or not os.path.isfile(args.binary):
        print("skipped: no trec_eval binary (give --binary or NDCGLAB_TREC_EVAL_BIN)")
        return 0
    folder = args.keep or tempfile.mkdtemp(prefix="bench_trec_eval_")
    os.makedirs(folder, exist_ok=True)
    t0 = time.perf_counter()
    qrels, run = os.path.join(folder, "qrels"), os.path.join(folder, "run")
    if not (os.path.isfile(qrels) and os.path.isfile(run)):
        qrels, run = write_files(folder, args.queries, args.lines)
    with open(run, "rb") as f:
        n_lines = sum(1 for _ in f)
    print(f"files: {n_lines} run lines ({time.perf_counter() - t0:.0f} s to write or count), "
          f"in {folder}")  # fmt: skip
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    ours = [sys.executable, "-m", "ndcglab", "trec_eval", "--trec-eval-version", args.version,
            "-m", "all_trec", qrels, run]  # fmt: skip
    theirs = [args.binary, "-m", "all_trec", qrels, run]
    a = subprocess.run(ours, capture_output=True, env=env, check=True).stdout
    b = subprocess.run(theirs, capture_output=True, check=True).stdout
    print("outputs identical:", a == b)
    cpu: dict[str, list[float]] = {"trec_eval": [], "ndcglab": []}
    wall: dict[str, list[float]] = {"trec_eval": [], "ndcglab": []}
    rss: dict[str, list[float]] = {"trec_eval": [], "ndcglab": []}

    def one(cmd: list[str], run_env: dict[str, str]) -> tuple[float, float, float]:
        """(wall s, CPU s, peak resident MB) of one process."""
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=run_env)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            raise SystemExit(f"{cmd[0]} failed ({proc.returncode})")
        return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024

    if args.cold:
        with tempfile.TemporaryDirectory(prefix="numba_cold_") as cache:
            w, c, m = one(ours, {**env, "NUMBA_CACHE_DIR": cache})
        print(f"ndcglab, cold numba cache (kernels compiled): wall {w:.2f} s, CPU {c:.2f} s, "
              f"peak {m:.0f} MB")  # fmt: skip

    def timed(name: str | None) -> float:
        cmd, key = (theirs, "trec_eval") if name is None else (ours, "ndcglab")
        elapsed, used, peak = one(cmd, env)
        cpu[key].append(used)
        wall[key].append(elapsed)
        rss[key].append(peak)
        return elapsed

    ratios, _, loads = interleaved_ratios(timed, ["ndcglab"], args.repeat)
    for key in ("trec_eval", "ndcglab"):  # drop the warm-up
        cpu[key] = cpu[key][1:]
        wall[key] = wall[key][1:]
        rss[key] = rss[key][1:]

    def mmm(xs: list[float]) -> str:
        return f"{min(xs):.2f} / {statistics.median(xs):.2f} / {max(xs):.2f}"

    print(f"rounds: {args.repeat}; load average per round: "
          + ", ".join(f"{x:.1f}" for x in loads))  # fmt: skip
    for key in ("trec_eval", "ndcglab"):
        print(f"{key:10s} wall s min/median/max {mmm(wall[key])}; CPU s {mmm(cpu[key])}; "
              f"peak MB {max(rss[key]):.0f}")  # fmt: skip
    cpu_ratio = [o / t for o, t in zip(cpu["ndcglab"], cpu["trec_eval"], strict=True)]
    print(f"ratio ndcglab / trec_eval: wall {mmm(ratios['ndcglab'])}; CPU {mmm(cpu_ratio)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
