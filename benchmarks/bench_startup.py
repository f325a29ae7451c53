"""Whole-process time of the command line against pytrec_eval's (and ir_measures') one call.

    python benchmarks/bench_startup.py [--quick] [--repeat N] [--queries Q] [--docs D] [--trec-only]

A user who evaluates one run file many times in a script waits for a whole process each time:
interpreter start, imports, reading the files, measuring, printing. This benchmark writes a
TREC-sized qrels/run pair (``--queries`` x ``--docs``, default 50 x 1,000, ~30% judged, labels
0..2) and a LETOR file of the same size (46 features), then times, as separate processes,
interleaved round by round:

* ``ndcglab evaluate --qrels Q --run R`` (preset ``trec_eval``: MAP, P@5, P@10, NDCG, NDCG@10),
  with the Numba cache as it is (warm) and with an empty one (``NUMBA_CACHE_DIR`` set to a new
  folder: cold);
* ``ndcglab describe LETORFILE``, warm and cold, and with ``--cache`` once the binary copy
  exists (the warm-up run writes it); and ``ndcglab describe`` of MQ2008 Fold1's
  ``train.txt.gz`` (a real LETOR file, 5.9 MB once decompressed) when ``../shared/data`` (or
  ``NDCGLAB_SHARED_DATA``) holds it;
* ``python -c "import pytrec_eval; ..."``: parse both files with pytrec_eval's own readers,
  build the evaluator, evaluate the same measures (its one call as a process);
* ``ir_measures Q R 'AP P@5 P@10 nDCG nDCG@10'`` when ir_measures is installed;
* ``ndcglab --version`` (the console script's entry point, ``ndcglab.cli.main:main``),
  ``python -c pass`` (the interpreter alone) and ``python -c 'import numpy'`` (what both
  ndcglab and pytrec_eval's script import first, OpenBLAS's threads included: ``evaluate``
  loads OpenBLAS on one thread, see docs/DESIGN.md section 7).

Each process is timed in wall seconds and in CPU seconds (user + system, from
``getrusage(RUSAGE_CHILDREN)``): on a loaded machine the CPU time is what the process itself
cost, the wall time also what it waited for the cores.

``--trec-only`` leaves out the LETOR file and the describe cases (a large run:
``--queries 1000 --trec-only``). It prints min/median/max of each time and of the ratios
ndcglab / pytrec_eval taken within the same round (so both see the same load), and the load
average before and after. Targets: ``ndcglab --version`` <= 0.1 s wall (median), and, for
50 x 100 files (``--docs 100``), the warm ``evaluate`` <= 1.2x pytrec_eval's one call (median
ratio, wall and CPU).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
SHARED = os.environ.get(
    "NDCGLAB_SHARED_DATA", os.path.join(os.path.dirname(ROOT), "shared", "data")
)
MQ2008_TRAIN = os.path.join(SHARED, "MQ2008", "Fold1", "train.txt.gz")

PYTREC = (
    "import pytrec_eval,sys\n"
    "q=pytrec_eval.parse_qrel(open(sys.argv[1]))\n"
    "r=pytrec_eval.parse_run(open(sys.argv[2]))\n"
    "e=pytrec_eval.RelevanceEvaluator(q,{'map','P_5','P_10','ndcg','ndcg_cut_10'})\n"
    "res=e.evaluate(r)\n"
    "for m in ('map','P_5','P_10','ndcg','ndcg_cut_10'):\n"
    "    print(m, sum(v[m] for v in res.values())/len(res))\n"
)


def write_files(
    folder: str, n_queries: int, n_docs: int, seed: int = 0, letor_file: bool = True
) -> tuple[str, str, str]:
    """A TREC qrels/run pair and (``letor_file``) a LETOR file with ``n_queries`` lists of
    ``n_docs``."""
    rng = np.random.default_rng(seed)
    qrels, run, letor = (os.path.join(folder, n) for n in ("qrels.txt", "run.txt", "letor.txt"))
    with (
        open(qrels, "w") as fq,
        open(run, "w") as fr,
        open(letor if letor_file else os.devnull, "w") as fl,
    ):
        for q in range(1, n_queries + 1):
            scores = rng.random(n_docs)
            order = np.argsort(-scores, kind="stable")
            fr.writelines(
                f"{q} Q0 d{i} {r + 1} {scores[i]:.6f} bench\n" for r, i in enumerate(order)
            )
            judged = rng.random(n_docs) < 0.3
            labels = rng.integers(0, 3, n_docs)
            fq.writelines(f"{q} 0 d{i} {labels[i]} \n" for i in np.flatnonzero(judged))
            feats = rng.random((n_docs, 46))
            for i in range(n_docs if letor_file else 0):
                cols = " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(feats[i]))
                fl.write(f"{labels[i]} qid:{q} {cols}\n")
    return qrels, run, letor


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one process."""
    c0 = _children_cpu()
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr.decode()}")
    return wall, _children_cpu() - c0


def stats(values: list[float]) -> str:
    return (
        f"min {min(values):7.3f}  median {statistics.median(values):7.3f}  max {max(values):7.3f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 rounds instead of --repeat")
    ap.add_argument("--repeat", type=int, default=10, help="rounds (default 10)")
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument(
        "--trec-only",
        action="store_true",
        help="time evaluate (TREC files) only: no LETOR file, no describe (for large --queries)",
    )
    ap.add_argument(
        "--also-src",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="also time 'ndcglab evaluate' and 'ndcglab describe' (warm and cold) from another "
        "source tree (e.g. an earlier commit's src folder), in the same rounds; repeatable",
    )
    args = ap.parse_args()
    rounds = 3 if args.quick else args.repeat

    tmp = tempfile.mkdtemp(prefix="ndcglab-startup-")
    try:
        qrels, run, letor = write_files(tmp, args.queries, args.docs, letor_file=not args.trec_only)
        env = dict(os.environ)
        env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
        if env.pop("PYTHONDONTWRITEBYTECODE", None):
            # an installed package has its bytecode compiled; without this the source tree's
            # modules would be compiled again in every process (tens of ms each time)
            print("PYTHONDONTWRITEBYTECODE unset for the timed processes (bytecode cached)")
        cold_env = dict(env)
        ours = [sys.executable, "-m", "ndcglab.cli.main"]
        cases: dict[str, tuple[list[str], dict[str, str] | None]] = {
            "ndcglab evaluate (warm)": ([*ours, "evaluate", "--qrels", qrels, "--run", run], env),
            "ndcglab evaluate (cold)": (
                [*ours, "evaluate", "--qrels", qrels, "--run", run],
                cold_env,
            ),
            "ndcglab describe (warm)": ([*ours, "describe", letor], env),
            "ndcglab describe (cold)": ([*ours, "describe", letor], cold_env),
        }
        cached_env = dict(env, NDCGLAB_CACHE_DIR=os.path.join(tmp, "letor-cache"))
        cases["ndcglab describe --cache (filled)"] = (
            [*ours, "describe", letor, "--cache"],
            cached_env,
        )
        entry = "import sys; from ndcglab.cli.main import main; sys.exit(main())"
        cases["ndcglab --version"] = ([sys.executable, "-c", entry, "--version"], env)
        cases["python -c pass"] = ([sys.executable, "-c", "pass"], env)
        # what both ndcglab and pytrec_eval's script import first: the rest is each one's own
        cases["python -c 'import numpy'"] = ([sys.executable, "-c", "import numpy"], env)
        if args.trec_only:
            cases = {k: v for k, v in cases.items() if "describe" not in k}
        elif os.path.isfile(MQ2008_TRAIN):
            cases["ndcglab describe MQ2008 train (warm)"] = ([*ours, "describe", MQ2008_TRAIN], env)
        else:
            print(f"{MQ2008_TRAIN} not found: the real-file describe case is skipped")
        for spec in args.also_src:
            label, _, path = spec.partition("=")
            other = dict(env)
            other["PYTHONPATH"] = (
                os.path.abspath(path) + os.pathsep + os.environ.get("PYTHONPATH", "")
            )
            cases[f"ndcglab evaluate [{label}]"] = (
                [*ours, "evaluate", "--qrels", qrels, "--run", run],
                other,
            )
            if not args.trec_only:
                cases[f"ndcglab describe (warm) [{label}]"] = ([*ours, "describe", letor], other)
                cases[f"ndcglab describe (cold) [{label}]"] = ([*ours, "describe", letor], other)
        try:
            import pytrec_eval  # noqa: F401

            cases["pytrec_eval one call"] = ([sys.executable, "-c", PYTREC, qrels, run], env)
        except ImportError:
            print("pytrec_eval not installed: no reference time")
        irm = shutil.which("ir_measures")
        if irm:
            cases["ir_measures"] = ([irm, qrels, run, "AP P@5 P@10 nDCG nDCG@10"], env)
        else:
            print("ir_measures not installed: skipped")

        # warm-up: fills the Numba and bytecode caches
        for name, (cmd, e) in cases.items():
            if "cold" not in name:
                timed(cmd, e or env)
        times: dict[str, list[float]] = {name: [] for name in cases}
        cpus: dict[str, list[float]] = {name: [] for name in cases}
        print(f"{args.queries} queries x {args.docs} documents; {rounds} interleaved rounds")
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for r in range(rounds):
            for name, (cmd, e) in cases.items():
                e = dict(e or env)
                if "cold" in name:
                    e["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(dir=tmp, prefix=f"numba{r}-")
                wall, cpu = timed(cmd, e)
                times[name].append(wall)
                cpus[name].append(cpu)
        print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
        print("whole-process wall seconds")
        for name, vals in times.items():
            print(f"  {name:36s} {stats(vals)}")
        print("whole-process CPU seconds (user + system)")
        for name, vals in cpus.items():
            print(f"  {name:36s} {stats(vals)}")
        ref = times.get("pytrec_eval one call")
        if ref:
            for what, table in (("wall", times), ("CPU", cpus)):
                print(f"\nratio to pytrec_eval's one call, same round ({what})")
                base = table["pytrec_eval one call"]
                for name, vals in table.items():
                    if name.startswith("ndcglab evaluate") or name == "ir_measures":
                        ratios = [a / b for a, b in zip(vals, base, strict=True)]
                        print(f"  {name:36s} {stats(ratios)}")
        med = statistics.median(times["ndcglab --version"])
        print(f"\ntarget: ndcglab --version median {med:.3f} s wall vs 0.1 s: ", end="")
        print("met" if med <= 0.1 else "NOT met", end="")
        cpu_med = statistics.median(cpus["ndcglab --version"])
        cpu_pass = statistics.median(cpus["python -c pass"])
        print(f" (CPU {cpu_med:.3f} s; python -c pass {cpu_pass:.3f} s)")
        if ref and (args.queries, args.docs) == (50, 100):
            for what, table in (("wall", times), ("CPU", cpus)):
                ratios = [
                    a / b
                    for a, b in zip(
                        table["ndcglab evaluate (warm)"], table["pytrec_eval one call"], strict=True
                    )
                ]
                med = statistics.median(ratios)
                verdict = "met" if med <= 1.2 else "NOT met"
                print(f"target: evaluate / pytrec_eval ({what}) median {med:.2f} vs 1.2: {verdict}")
        if (args.queries, args.docs) != (50, 1000):
            print("\nthe targets are for the default 50 x 1,000 files: not checked")
            return
        print("\ntargets: evaluate <= 0.25 s warm, <= 1 s cold; describe likewise")
        checks = [
            (f"{name} {kind}", f"ndcglab {name} ({kind})", limit)
            for name in ("evaluate",) + (() if args.trec_only else ("describe",))
            for kind, limit in (("warm", 0.25), ("cold", 1.0))
        ]
        if "ndcglab describe MQ2008 train (warm)" in times:
            checks.append(
                ("describe MQ2008 train warm", "ndcglab describe MQ2008 train (warm)", 0.25)
            )
        for label, name, limit in checks:
            med = statistics.median(times[name])
            verdict = "met" if med <= limit else "NOT met"
            print(f"  {label}: median {med:.3f} s vs {limit} s: {verdict}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
