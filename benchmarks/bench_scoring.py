"""Scoring at MSLR-WEB30K size against a matrix product and a bare torch forward pass.

    python benchmarks/bench_scoring.py [--file LETOR.txt] [--repeats 5] [--old] [--quick]

On ``synthetic:mslr30k`` (31,531 queries, about 3.77M documents, 136 features) or the LETOR file
``--file`` (e.g. written by ``ndcglab generate mslr30k --out /tmp/mslr.txt``), with z-score
normalisation fitted on the data, times in this process, interleaved round by round:

* **linear**: ``TrainedModel.predict(ds)`` (the normalisation folded into the weights, one fused
  pass) against NumPy's ``x @ w`` (float32) on the parsed array; target <= 2x;
* **MLP** (136 -> 64 -> 32 -> 1, ReLU): ``TrainedModel.predict(ds)`` against a bare torch forward
  pass of the same network on the parsed array (``torch.from_numpy(x)``, inference mode, the
  same thread count); target <= 1.2x. Also printed, for reference: the same bare forward pass
  in calls of 16,384 rows (as ``predict`` cuts them; the whole array in one call spends its
  time on intermediate values far larger than the caches);
* ``--old``: also the two-step path of earlier versions (normalise the whole matrix, then
  ``RankModel.predict``), once per round;
* ``--before SRC``: also the linear model scored by the ``models/scoring.py`` of an earlier
  version's source folder (loaded beside this version's modules), once per round.

With ``--file`` it also times whole processes: ``ndcglab predict MODEL FILE --out SCORES`` of
the linear model against a process that only parses the file (``load_dataset(FILE)``); target
<= 1.2x. Every ratio is taken within one round (same load; the order of the calls turns from
round to round) and each call starts after a pause (``--pause``, 0.5 s: the threads a call
leaves spinning, OpenBLAS's after ``x @ w``, do not bill the next one); min/median/max and the
load average are printed, and the largest difference of the scores to the two-step path's.
The process CPU seconds (all threads) of each call are printed too: under load they vary less
than wall times.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _timed(fn: Callable[[], object], cpu: list[float] | None = None) -> float:
    """Wall seconds of ``fn()``; its process CPU seconds appended to ``cpu``."""
    c0 = time.process_time()
    t0 = time.perf_counter()
    fn()
    wall = time.perf_counter() - t0
    if cpu is not None:
        cpu.append(time.process_time() - c0)
    return wall


def _earlier_scoring(src: str) -> Any:
    """The ``ndcglab.models.scoring`` module of the source folder ``src``, loaded under another
    name beside this version's package (its relative imports resolve to this version's)."""
    import importlib.util

    path = Path(src).resolve() / "ndcglab" / "models" / "scoring.py"
    spec = importlib.util.spec_from_file_location("ndcglab.models._scoring_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _process(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and peak resident MiB of the process ``cmd``."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err.decode()}")
    return wall, usage.ru_maxrss / 1024


def _stats(values: list[float]) -> str:
    return (
        f"min {min(values):7.3f}  median {statistics.median(values):7.3f}  max {max(values):7.3f}"
    )


def _report(
    title: str,
    times: dict[str, list[float]],
    ref: str,
    target: float,
    cpu: dict[str, list[float]] | None = None,
) -> None:
    print(f"{title}  (seconds)")
    for name, vals in times.items():
        print(f"  {name:40s} {_stats(vals)}")
    for name, vals in (cpu or {}).items():
        print(f"  CPU {name:36s} {_stats(vals)}")
    for name, vals in times.items():
        if name == ref or "two-step" in name or name.startswith("bare"):
            continue
        ratios = [a / b for a, b in zip(vals, times[ref], strict=True)]
        med = statistics.median(ratios)
        verdict = "met" if med <= target else "NOT met"
        print(f"  ratio {name} / {ref}: {_stats(ratios)}  (target <= {target}: {verdict})")


def _in_process(args: argparse.Namespace, ds: Any, linear: Any, mlp: Any) -> None:
    import torch

    x = ds.features
    loads = [os.getloadavg()[0]]
    w32 = linear.model.weight.astype(np.float32)
    net = mlp.model.eval()

    def bare_forward() -> np.ndarray:
        with torch.inference_mode():
            return net(torch.from_numpy(x)).numpy()

    def bare_forward_calls() -> np.ndarray:
        t = torch.from_numpy(x)
        with torch.inference_mode():
            return torch.cat([net(t[i : i + 16_384]) for i in range(0, len(x), 16_384)]).numpy()

    cases: dict[str, dict[str, Callable[[], object]]] = {
        "linear": {
            "NumPy x @ w (float32)": lambda: x @ w32,
            "TrainedModel.predict": lambda: linear.predict(ds),
        },
        "MLP 136-64-32-1": {
            "bare torch forward": bare_forward,
            "TrainedModel.predict": lambda: mlp.predict(ds),
            "bare torch forward, calls of 16,384 rows": bare_forward_calls,
        },
    }
    if args.before:
        before = _earlier_scoring(args.before)

        def predict_before() -> np.ndarray:
            out: np.ndarray = before.score_features(
                linear.model, linear.normalizer, x, ds.boundaries
            )
            return out

        cases["linear"]["TrainedModel.predict, --before"] = predict_before
        same = np.array_equal(predict_before(), linear.predict(ds))  # and the warm-up
        print(f"linear scores of this version and --before identical: {same}", flush=True)
    if args.old:
        for key, tm in (("linear", linear), ("MLP 136-64-32-1", mlp)):
            cases[key]["two-step path (earlier versions)"] = lambda tm=tm: tm.model.predict(
                tm.normalizer.transform(x, ds.boundaries)
            )
    for tm in (linear, mlp):  # warm-up: Numba's cache, torch's first call
        tm.predict(ds.subset(np.arange(min(ds.n_queries, 50))))
    times: dict[str, dict[str, list[float]]] = {k: {n: [] for n in v} for k, v in cases.items()}
    cpu: dict[str, dict[str, list[float]]] = {k: {n: [] for n in v} for k, v in cases.items()}
    for r in range(args.repeats):
        for key, fns in cases.items():
            # the order turns round by round: a call right after another pays for the other's
            # leftovers (its BLAS threads still spinning, the caches it filled)
            names = list(fns)
            for name in names[r % len(names) :] + names[: r % len(names)]:
                time.sleep(args.pause)
                times[key][name].append(_timed(fns[name], cpu[key][name]))
        loads.append(os.getloadavg()[0])
    _report("linear", times["linear"], "NumPy x @ w (float32)", 2.0, cpu["linear"])
    _report(
        "MLP 136-64-32-1",
        times["MLP 136-64-32-1"],
        "bare torch forward",
        1.2,
        cpu["MLP 136-64-32-1"],
    )
    for tm, name in ((linear, "linear"), (mlp, "MLP")):
        new = tm.predict(ds)
        old = tm.model.predict(tm.normalizer.transform(x, ds.boundaries))
        print(
            f"{name}: largest |score - two-step score| {np.abs(new - old).max():.2e} "
            f"(largest |score| {np.abs(old).max():.2e}); identical: {np.array_equal(new, old)}"
        )
    print(f"load average {min(loads):.2f}..{max(loads):.2f}", flush=True)


def _processes(args: argparse.Namespace, linear: Any) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="ndcglab-scoring-"))
    model_path = linear.save(tmp / "linear.zip")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    parse = [
        sys.executable,
        "-c",
        "import sys; from ndcglab.data import load_dataset; load_dataset(sys.argv[1])",
        args.file,
    ]
    predict = [
        *(sys.executable, "-m", "ndcglab.cli.main", "predict"),
        *(str(model_path), args.file, "--out", str(tmp / "scores.txt")),
    ]
    procs = {"parse the file (a process)": (parse, env), "ndcglab predict (linear)": (predict, env)}
    if args.before:
        before = dict(env, PYTHONPATH=str(Path(args.before).resolve()))
        cmd = [*predict[:-1], str(tmp / "scores-before.txt")]
        procs["ndcglab predict, --before"] = (cmd, before)
    ptimes: dict[str, list[float]] = {k: [] for k in procs}
    memory: dict[str, list[float]] = {k: [] for k in procs}
    ploads = [os.getloadavg()[0]]
    for _ in range(args.process_rounds or max(1, args.repeats // 2)):
        for name, (cmd, e) in procs.items():
            wall, mib = _process(cmd, e)
            ptimes[name].append(wall)
            memory[name].append(mib)
        ploads.append(os.getloadavg()[0])
    _report("whole processes", ptimes, "parse the file (a process)", 1.2)
    print("peak resident memory (MiB)")
    for name, vals in memory.items():
        print(f"  {name:40s} {_stats(vals)}")
    if args.before:
        same = (tmp / "scores.txt").read_bytes() == (tmp / "scores-before.txt").read_bytes()
        print(f"score files of this version and --before identical: {same}")
    print(f"load average {min(ploads):.2f}..{max(ploads):.2f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", default=None, help="a LETOR file to read (default: synthetic)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--pause", type=float, default=0.5, help="seconds before each timed call")
    ap.add_argument("--old", action="store_true", help="also time the two-step path")
    ap.add_argument("--quick", action="store_true", help="the first 300,000 documents only")
    ap.add_argument("--before", default=None, help="an earlier version's src folder")
    ap.add_argument("--process-rounds", type=int, default=None, help="rounds of processes")
    ap.add_argument(
        "--processes-only",
        action="store_true",
        help="with --file: only the whole processes (the model fitted on the file's first rows)",
    )
    args = ap.parse_args(argv)

    import torch

    from ndcglab.data import load_dataset, read_letor_bytes
    from ndcglab.data.normalize import Normalizer
    from ndcglab.models import TrainedModel, make_model

    t0 = time.perf_counter()
    if args.processes_only and args.file:
        with open(args.file, "rb") as f:
            head = f.read(16 << 20)
        ds = read_letor_bytes(head[: head.rfind(b"\n") + 1], name=args.file)
    else:
        ds = load_dataset(args.file or "synthetic:mslr30k")
    if args.quick:
        ds = ds.subset(np.arange(int(np.searchsorted(ds.boundaries, 300_000))))
    print(
        f"data: {ds.n_queries} queries, {ds.n_docs} documents, {ds.n_features} features "
        f"({time.perf_counter() - t0:.1f} s to read); torch threads {torch.get_num_threads()}",
        flush=True,
    )
    norm = Normalizer.fit("zscore", ds.features)
    torch.manual_seed(0)
    linear = TrainedModel(make_model("linear", ds.n_features, init="normal"), norm)
    mlp = TrainedModel(make_model("mlp", ds.n_features, hidden=[64, 32]), norm)
    if not args.processes_only:
        _in_process(args, ds, linear, mlp)
    if args.file:
        del ds
        _processes(args, linear)
    return 0


if __name__ == "__main__":
    sys.exit(main())
