"""Peak memory and time of ``ndcglab evaluate --qrels --run`` against the trec_eval binary.

    python benchmarks/bench_trec_memory.py --trec-eval PATH/trec_eval [--queries 3771]
        [--docs 1000] [--repeat 3] [--also-src NAME=SRC] [--folder DIR]

Writes a TREC qrels/run pair (``--queries`` x ``--docs`` run lines, 3,771,000 by default: the
size of MSLR-WEB30K; about 30% judged, labels 0..2; ``benchmarks/bench_startup.py``'s writer)
or reuses the pair in ``--folder``, then times, as separate processes, interleaved round by
round, ``-m all_trec`` and ``-m ndcg_cut.10`` for:

* the trec_eval binary (``--trec-eval``, built from its sources);
* ``ndcglab evaluate --qrels Q --run R -m M`` (and the same from other source trees,
  ``--also-src NAME=SRC``, e.g. an earlier commit's ``src``).

Each process's peak resident memory comes from ``os.wait4`` (its own ``ru_maxrss``), its CPU
time from the same call. The warm-up run of each tree also writes its bytecode cache
(``PYTHONDONTWRITEBYTECODE`` is unset for the timed processes, as in ``bench_startup.py``).
Prints min/median/max of wall seconds, CPU seconds and peak MiB, the ratios to the binary's
within each round (targets: memory <= 1.0x, time <= 0.5x), and the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_measured(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak MiB of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err.decode()}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _stats(values: list[float]) -> str:
    med = statistics.median(values)
    return f"min {min(values):8.2f}  median {med:8.2f}  max {max(values):8.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trec-eval", required=True, help="the trec_eval binary")
    ap.add_argument("--queries", type=int, default=3771)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--folder", default=None, help="reuse (or write) qrels.txt/run.txt here")
    ap.add_argument("--also-src", action="append", default=[], metavar="NAME=SRC")
    args = ap.parse_args(argv)

    folder = Path(args.folder or tempfile.mkdtemp(prefix="ndcglab-trec-memory-"))
    qrels, run = folder / "qrels.txt", folder / "run.txt"
    if not (qrels.is_file() and run.is_file()):
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from bench_startup import write_files

        folder.mkdir(parents=True, exist_ok=True)
        write_files(str(folder), args.queries, args.docs, letor_file=False)
    lines = sum(1 for _ in open(run, "rb"))
    print(f"run: {lines:,} lines ({run.stat().st_size / 2**20:.0f} MiB); qrels: "
          f"{sum(1 for _ in open(qrels, 'rb')):,} lines")  # fmt: skip
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    if env.pop("PYTHONDONTWRITEBYTECODE", None):
        # as bench_startup.py: an installed package has its bytecode compiled; without this
        # every process compiles the source tree's modules again (about 0.08 s of CPU)
        print("PYTHONDONTWRITEBYTECODE unset for the timed processes (bytecode cached)")
    trees = {"ndcglab": env}
    for spec in args.also_src:
        name, _, path = spec.partition("=")
        trees[f"ndcglab [{name}]"] = dict(env, PYTHONPATH=str(Path(path).resolve()))
    loads = [os.getloadavg()[0]]
    for measure in ("all_trec", "ndcg_cut.10"):
        cases = {"trec_eval binary": ([args.trec_eval, "-m", measure, str(qrels), str(run)], env)}
        for name, e in trees.items():
            cmd = [sys.executable, "-m", "ndcglab.cli.main", "evaluate", "--qrels", str(qrels)]
            cases[name] = ([*cmd, "--run", str(run), "-m", measure], e)
        got: dict[str, list[tuple[float, float, float]]] = {k: [] for k in cases}
        for name, (cmd, e) in cases.items():  # warm-up of every tree: the page cache, and
            if name != "trec_eval binary":  # Numba's cache of each tree's kernels
                run_measured(cmd, e)
        for _ in range(args.repeat):
            for name, (cmd, e) in cases.items():
                got[name].append(run_measured(cmd, e))
            loads.append(os.getloadavg()[0])
        print(f"\n-m {measure}: {args.repeat} interleaved rounds")
        for i, what in enumerate(("wall s", "CPU s", "peak MiB")):
            print(f"  {what}")
            for name, vals in got.items():
                print(f"    {name:28s} {_stats([v[i] for v in vals])}")
        ref = got["trec_eval binary"]
        for name, vals in got.items():
            if name == "trec_eval binary":
                continue
            for i, what, target in ((0, "time", 0.5), (2, "peak memory", 1.0)):
                ratios = [a[i] / b[i] for a, b in zip(vals, ref, strict=True)]
                med = statistics.median(ratios)
                verdict = "met" if med <= target else "NOT met"
                print(
                    f"  {name} / binary, {what}: {_stats(ratios)}  (target <= {target}: {verdict})",
                    flush=True,
                )
    print(f"\nload average {min(loads):.2f}..{max(loads):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
