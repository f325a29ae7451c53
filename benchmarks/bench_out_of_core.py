"""Out-of-core evaluation: an MSLR-sized LETOR file evaluated on Dask with small workers.

Steps (each timed; every process's peak resident memory measured by polling it and its
children every 0.2 s with psutil, or /proc when psutil is missing):

1. ``ndcglab generate mslr30k --out DIR/mslr30k.txt`` (about 6.8 GiB for the full 31,531
   queries; ``--queries N`` for a smaller file); the free disk space is checked first;
2. a score file, one score per document, rounded to 3 decimals (many ties), written in chunks;
3. ``ndcglab evaluate FILE --scores S --dask local:W --dask-memory-limit LIMIT --format json``;
4. ``ndcglab evaluate FILE --scores S --format json`` once in one process (the whole file in
   memory), unless ``--skip-single``;
5. the means compared to 1e-9; wall times and peak RSS per process (the client, the nanny and
   worker processes) written to ``DIR/results.json`` and printed.

::

    python benchmarks/bench_out_of_core.py                       # full size, 2 workers of 1 GiB
    python benchmarks/bench_out_of_core.py --queries 2000 --out-dir /tmp/ooc-small   # quick
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

#: bytes per document of `generate mslr30k` (136 dense features), measured on a small file
BYTES_PER_DOC = 1900
MSLR_QUERIES, MSLR_DOCS_PER_QUERY = 31531, 119.6


def _rss_tree(pid: int) -> dict[int, tuple[str, int]]:
    """``{pid: (command line, rss bytes)}`` of ``pid`` and its descendants."""
    try:
        import psutil
    except ImportError:
        return _rss_tree_proc(pid)
    out: dict[int, tuple[str, int]] = {}
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return out
    for p in procs:
        try:
            out[p.pid] = (" ".join(p.cmdline())[:160], int(p.memory_info().rss))
        except psutil.Error:
            pass
    return out


def _rss_tree_proc(pid: int) -> dict[int, tuple[str, int]]:
    """The same from /proc (Linux) when psutil is missing."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    out: dict[int, tuple[str, int]] = {}
    todo = [pid]
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        try:
            cmd = (Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ")).decode()[:160]
            rss = int(Path(f"/proc/{p}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError):
            continue
        out[p] = (cmd, rss)
    return out


def run_measured(cmd: list[str], **kw: Any) -> dict[str, Any]:
    """Run ``cmd``; its wall time, output and the peak RSS of every process of its tree."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    peaks: dict[int, tuple[str, int]] = {}
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            for p, (c, r) in _rss_tree(proc.pid).items():
                if r > peaks.get(p, ("", 0))[1]:
                    peaks[p] = (c, r)
            done.wait(0.2)

    th = threading.Thread(target=poll, daemon=True)
    th.start()
    out, err = proc.communicate()
    done.set()
    th.join()
    return {
        "cmd": " ".join(cmd),
        "rc": proc.returncode,
        "wall_s": time.perf_counter() - t0,
        "stdout": out,
        "stderr_tail": err[-2000:],
        "peak_rss": [
            {"pid": p, "role": _role(p, proc.pid, c), "peak_rss_mib": r / 2**20, "cmd": c}
            for p, (c, r) in sorted(peaks.items())
        ],
    }


def _role(pid: int, root: int, cmd: str) -> str:
    """``client`` (the command; with ``local:N`` it also runs the scheduler and the nannies),
    ``helper`` (multiprocessing's resource tracker / fork server) or ``worker``."""
    if pid == root:
        return "client"
    if "resource_tracker" in cmd or "forkserver" in cmd:
        return "helper"
    return "worker"


def write_scores(data: Path, out: Path, seed: int = 0) -> int:
    """One score per document line of ``data`` (chunks of 1 MiB lines), 3 decimals."""
    rng = np.random.default_rng(seed)
    n = 0
    with open(data, "rb") as f, open(out, "w") as g:
        while True:
            lines = f.readlines(64 * 2**20)
            if not lines:
                break
            k = sum(1 for ln in lines if ln.strip() and not ln.lstrip().startswith(b"#"))
            np.savetxt(g, np.round(rng.random(k), 3), fmt="%.3f")
            n += k
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out-dir", default="/tmp/ndcglab-out-of-core")
    ap.add_argument("--queries", type=int, default=None, help="default: the full 31,531")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="1GiB")
    ap.add_argument("--skip-single", action="store_true", help="no single-process reference")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    a = ap.parse_args(argv)
    d = Path(a.out_dir)
    d.mkdir(parents=True, exist_ok=True)
    data, scores = d / "mslr30k.txt", d / "mslr30k.scores"
    nq = a.queries or MSLR_QUERIES
    need = int(nq * MSLR_DOCS_PER_QUERY * (BYTES_PER_DOC + 16) * 1.2)
    free = shutil.disk_usage(d).free
    if free < need:
        print(f"not enough disk: {free / 2**30:.1f} GiB free in {d}, need about "
              f"{need / 2**30:.1f} GiB", file=sys.stderr)  # fmt: skip
        return 1
    ndcglab = [sys.executable, "-m", "ndcglab.cli.main"]
    results: dict[str, Any] = {"queries": nq, "workers": a.workers, "memory_limit": a.memory_limit}

    def save() -> None:
        (d / "results.json").write_text(json.dumps(results, indent=1))

    t0 = time.perf_counter()
    if not data.exists():
        gen = [*ndcglab, "generate", "mslr30k", "--out", str(data)]
        if a.queries:
            gen += ["--queries", str(a.queries)]
        subprocess.run(gen, check=True)
    results["file_gib"] = data.stat().st_size / 2**30
    results["generate_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    results["documents"] = write_scores(data, scores)
    results["scores_s"] = time.perf_counter() - t0
    print(f"{data}: {results['file_gib']:.2f} GiB, {results['documents']} documents", flush=True)
    save()
    ev = [*ndcglab, "evaluate", str(data), "--scores", str(scores), "--format", "json"]
    dask_cmd = [*ev, "--dask", f"local:{a.workers}", "--dask-memory-limit", a.memory_limit]
    results["dask"] = run_measured(dask_cmd)
    save()
    print(f"dask: {results['dask']['wall_s']:.1f} s", flush=True)
    if not a.skip_single:
        results["single"] = run_measured(ev)
        print(f"single process: {results['single']['wall_s']:.1f} s", flush=True)
    ok = results["dask"]["rc"] == 0
    if ok and "single" in results and results["single"]["rc"] == 0:
        m1 = json.loads(results["single"]["stdout"])["mean"]
        m2 = json.loads(results["dask"]["stdout"])["mean"]
        diff = max(abs(m1[k] - m2[k]) for k in m1) if m1.keys() == m2.keys() else float("inf")
        results["max_abs_diff"] = diff
        results["equal_to_1e-9"] = diff <= 1e-9
        ok = diff <= 1e-9
    save()
    for step in ("dask", "single"):
        if step in results:
            r = results[step]
            print(f"{step}: rc {r['rc']}, wall {r['wall_s']:.1f} s")
            for p in r["peak_rss"]:
                print(f"  pid {p['pid']} {p['role']}: peak RSS {p['peak_rss_mib']:.0f} MiB")
    print(f"max |mean difference| = {results.get('max_abs_diff')}")
    if not a.keep:
        for f in (data, scores, d / (scores.name + ".npy")):
            f.unlink(missing_ok=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
