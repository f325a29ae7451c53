"""Parse speed of ndcglab's LETOR reader vs scikit-learn's ``load_svmlight_file``.

    python benchmarks/bench_parse.py                 # real files + a ~200 MB generated file
    python benchmarks/bench_parse.py --size-mb 50    # a smaller generated file
    python benchmarks/bench_parse.py --full          # the whole mslr30k shape (31,531 queries)

For each file (MQ2008 / OHSUMED from ../shared/data when present, decompressed to a temporary
folder first so both readers parse the same plain bytes; and a LETOR text generated from the
``mslr30k`` synthetic shape), every measurement runs in a fresh Python process (after a warm-up
read of a tiny file, so Numba's compiled code is loaded and imports are done) and reports:

* MB/s = uncompressed file size / wall time of the read, for ndcglab's two readers and
  scikit-learn (``load_svmlight_file(query_id=True, dtype=float32)``), and the ratio of ndcglab's
  Numba parser to scikit-learn. ``read_letor`` in a fresh process reads with its NumPy reader
  (files up to 32 MiB in its shape; ``-`` for the others), without loading Numba; once the Numba
  parser has read a file in the process (the warm-up here), it reads every file;
* peak memory = the process's peak resident set (``ru_maxrss``) after the read minus its
  resident set just before it, for the Numba parser (also as a multiple of the float32 feature
  matrix), scikit-learn and the NumPy reader;
* the binary cache: the time of ``read_letor(cache=...)`` reloading the ``.npz`` (source sha256
  check included).

``--full`` writes the whole mslr30k shape (≈3.77M documents) with features rounded to
``--decimals`` (default 3) to keep the text near MSLR's size, and skips scikit-learn unless
``--sklearn`` is given (it needs several times more memory).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("NDCGLAB_SHARED_DATA", ROOT.parent / "shared" / "data"))
REAL = [
    "MQ2008/Fold1/train.txt.gz",
    "MQ2008/Fold1/vali.txt.gz",
    "OHSUMED/QueryLevelNorm/Fold1/train.txt.gz",
    "OHSUMED/Feature-null/Fold1/trainingset.txt.gz",
]


def _rss_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _rss_now_mb() -> float:
    """Current resident set (Linux /proc), else the peak so far."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        return _rss_peak_mb()


def worker(kind: str, path: str, cache_dir: str | None) -> None:
    """Run one measurement in this (fresh) process and print a JSON line."""
    import numpy as np

    tiny = Path(tempfile.mkdtemp()) / "tiny.txt"
    tiny.write_text("1 qid:1 1:0.5 2:1 #docid = a inc = 1\n0 qid:1 1:0.25 2:2\n")
    if kind in ("numpy", "numba", "cache"):
        from ndcglab.data import letor, read_letor

        read_letor(tiny)  # the NumPy reader's imports (a fresh process reads with it first)
        if kind != "numpy":
            letor._letor_numpy.MAX_BYTES = -1
            read_letor(tiny)  # loads the compiled Numba code: from now on it reads
            letor._letor_numpy.MAX_BYTES = 32 << 20
    else:
        from sklearn.datasets import load_svmlight_file

        load_svmlight_file(str(tiny), query_id=True)
    shutil.rmtree(tiny.parent)
    base = _rss_now_mb()
    t = time.perf_counter()
    if kind in ("numpy", "numba"):
        ds = read_letor(path)
        shape = ds.features.shape
        if kind == "numpy" and letor._numba_parser_loaded():
            print(json.dumps({"error": "not in the NumPy reader's shape or size"}))
            return
    elif kind == "cache":
        ds = read_letor(path, cache=cache_dir)
        shape = ds.features.shape
    else:
        X, _, _ = load_svmlight_file(path, query_id=True, dtype=np.float32)
        shape = X.shape
    dt = time.perf_counter() - t
    print(
        json.dumps(
            {
                "seconds": dt,
                "peak_mb": _rss_peak_mb() - base,
                "matrix_mb": shape[0] * shape[1] * 4 / 2**20,
            }
        )
    )


def measure(kind: str, path: Path, cache_dir: Path | None = None) -> dict:
    cmd = [sys.executable, __file__, "--worker", kind, str(path)]
    if cache_dir is not None:
        cmd += ["--cache-dir", str(cache_dir)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr else "failed"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def generate(path: Path, size_mb: float | None, decimals: int | None) -> None:
    import numpy as np

    from ndcglab.data import make_synthetic, write_svmlight

    bytes_per_doc = 1950 if decimals is None else 136 * (decimals + 7)
    if size_mb is None:
        n_queries = None
    else:
        n_queries = max(1, int(size_mb * 2**20 / bytes_per_doc / 119.6))
    t = time.perf_counter()
    kw = {} if n_queries is None else {"n_queries": n_queries}
    ds = make_synthetic("mslr30k", seed=0, **kw)
    t_gen = time.perf_counter() - t
    if decimals is not None:
        np.round(ds.features, decimals, out=ds.features)
    t = time.perf_counter()
    write_svmlight(path, ds)
    t_write = time.perf_counter() - t
    mb = path.stat().st_size / 2**20
    print(
        f"generated {path.name}: {ds.n_queries} queries, {ds.n_docs} docs, {ds.n_features} "
        f"features, {mb:.0f} MB (make_synthetic {t_gen:.1f} s, write_svmlight {t_write:.1f} s "
        f"= {mb / t_write:.0f} MB/s)"
    )


def row(name: str, path: Path, with_sklearn: bool, cache: bool, tmp: Path) -> None:
    mb = path.stat().st_size / 2**20
    b = measure("numpy", path)
    a = measure("numba", path)
    s = measure("sklearn", path) if with_sklearn else {"error": "skipped"}
    c = measure("cache", path, tmp / "cache") if cache else None  # parse + write the cache
    c = measure("cache", path, tmp / "cache") if cache else None  # reload
    if "error" in a:
        print(f"{name:<50} ndcglab failed: {a['error']}")
        return
    nd = mb / a["seconds"]
    npy = f"{mb / b['seconds']:9.1f}" if "seconds" in b else f"{'-':>9}"
    line = f"{name:<50} {mb:8.1f} {npy} {nd:9.1f} "
    if "seconds" in s:
        sk = mb / s["seconds"]
        line += f"{sk:9.1f} {nd / sk:6.2f}x "
    else:
        line += f"{'-':>9} {'-':>7} "
    line += f"{a['peak_mb']:8.0f} ({a['peak_mb'] / max(a['matrix_mb'], 1e-9):4.2f}x) "
    if "seconds" in s:
        line += f"{s['peak_mb']:8.0f} "
    else:
        line += f"{'-':>8} "
    line += f"{c['seconds']:7.2f}" if c and "seconds" in c else f"{'-':>7}"
    line += f" {b['peak_mb']:8.0f}" if "seconds" in b else f" {'-':>8}"
    print(line)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=200, help="generated file size (MB)")
    ap.add_argument("--full", action="store_true", help="all 31,531 mslr30k queries")
    ap.add_argument("--decimals", type=int, default=None, help="round generated features")
    ap.add_argument("--sklearn", action="store_true", help="compare with sklearn under --full")
    ap.add_argument("--no-real", action="store_true", help="skip the real LETOR files")
    ap.add_argument("--no-sklearn", action="store_true", help="skip scikit-learn on generated data")
    ap.add_argument("--keep", default=None, help="folder to keep the generated file in")
    ap.add_argument("--worker", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    ap.add_argument("--cache-dir", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker[0], args.worker[1], args.cache_dir)
        return 0

    tmp = Path(tempfile.mkdtemp(prefix="ndcglab-bench-"))
    try:
        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
        header = (
            f"{'file':<50} {'MB':>8} {'NumPy':>9} {'Numba':>9} {'sklearn':>9} {'ratio':>7} "
            f"{'peak MB':>8} {'(x F32)':>7} {'sk peak':>8} {'cache s':>7} {'np peak':>8}"
        )
        print("MB/s per reader; peak = growth of the peak RSS during the read\n" + header)
        if not args.no_real:
            for rel in REAL:
                src = SHARED / rel
                if not src.exists():
                    print(f"{rel:<50} (absent, skipped)")
                    continue
                plain = tmp / rel.replace("/", "_").removesuffix(".gz")
                with gzip.open(src, "rb") as f, open(plain, "wb") as g:
                    shutil.copyfileobj(f, g)
                if "Feature-null" in rel:  # sklearn cannot read NULL: give it nan instead
                    sk_plain = plain.with_suffix(".nan.txt")
                    sk_plain.write_bytes(plain.read_bytes().replace(b"NULL", b"nan"))
                    row(rel.removesuffix(".gz") + " NULL", plain, False, False, tmp)
                    row(rel.removesuffix(".gz") + " NULL->nan", sk_plain, True, False, tmp)
                else:
                    row(rel.removesuffix(".gz"), plain, True, False, tmp)
        folder = Path(args.keep) if args.keep else tmp
        folder.mkdir(parents=True, exist_ok=True)
        decimals = args.decimals if args.decimals is not None else (3 if args.full else None)
        gen = folder / ("mslr30k_full.txt" if args.full else f"mslr30k_{int(args.size_mb)}mb.txt")
        if not gen.exists():
            generate(gen, None if args.full else args.size_mb, decimals)
        with_sk = not args.no_sklearn and ((not args.full) or args.sklearn)
        row(gen.name, gen, with_sk, True, tmp)
        print(header)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
