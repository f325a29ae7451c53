"""Prediction throughput at MSLR-WEB30K size: ndcglab's ``predict`` vs the exported models.

On the synthetic ``mslr30k`` set (31,531 queries, about 3.77M documents, 136 features), each
model scores every document, timed per pass, interleaved and repeated. The neural models run
on one thread everywhere (torch, onnxruntime), the trees with LightGBM's default threads in
both paths, so the comparison is of the code, not of the cores:

* **linear** and **MLP** (136 → 64 → 32 → 1, ReLU), z-score normalisation: ndcglab's
  ``TrainedModel.predict`` (normalise in NumPy, then the torch model in blocks of 262,144 rows)
  vs the ONNX export run by ``onnxruntime`` and the TorchScript export run by ``torch.jit``
  (normalisation inside the graph; the same blocks of raw features);
* **GBDT** (LightGBM trees grown with ndcglab's ``listnet`` objective on 2,000 of the queries,
  ``--trees`` trees of 31 leaves): ndcglab's ``GBDTModel.predict`` vs LightGBM's own
  ``Booster.predict`` on the exported model text.

Prints, per model, the documents per second of each path (median over the repeats), the
min/median/max of the ratio of each exported path's time to ndcglab's in the same repeat, the
largest score difference, and the load average.

    python benchmarks/bench_predict_export.py [--repeats 3] [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

BLOCK = 262_144


def _timed(fn: Callable[[], np.ndarray]) -> tuple[float, np.ndarray]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _blocks(fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    return np.concatenate(
        [np.asarray(fn(x[lo : lo + BLOCK])).ravel() for lo in range(0, len(x), BLOCK)]
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--quick", action="store_true", help="the first 300,000 documents only")
    args = ap.parse_args(argv)

    import lightgbm as lgb
    import onnxruntime as ort
    import torch

    from ndcglab.data import load_dataset
    from ndcglab.data.normalize import Normalizer
    from ndcglab.gbdt import export_lightgbm, train_gbdt
    from ndcglab.models import TrainedModel, export_model, make_model

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    ds = load_dataset("synthetic:mslr30k")
    if args.quick:
        ds = ds.subset(np.arange(int(np.searchsorted(ds.boundaries, 300_000))))
    x = ds.features
    print(
        f"data: {ds.n_queries} queries, {ds.n_docs} documents, {ds.n_features} features "
        f"({time.perf_counter() - t0:.1f}s to generate)",
        flush=True,
    )
    norm = Normalizer.fit("zscore", x)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    tmp = Path(tempfile.mkdtemp())
    loads = [os.getloadavg()[0]]

    def report(name: str, rows: dict[str, list[float]], diffs: dict[str, float]) -> None:
        ref = rows["ndcglab predict"]
        print(f"{name}:")
        for path, times in rows.items():
            rate = ds.n_docs / float(np.median(times))
            line = f"  {path:28s} {rate / 1e6:7.2f} M docs/s (median of {len(times)})"
            if path != "ndcglab predict":
                r = [t / b for t, b in zip(times, ref)]
                line += (
                    f"   time / ndcglab: min {min(r):.2f} median {float(np.median(r)):.2f} "
                    f"max {max(r):.2f}   max |score diff| {diffs[path]:.2e}"
                )
            print(line, flush=True)

    for kind, params in (("linear", {"init": "normal"}), ("mlp", {"hidden": [64, 32]})):
        torch.manual_seed(0)
        trained = TrainedModel(model=make_model(kind, ds.n_features, **params), normalizer=norm)
        onnx_path = export_model(trained, tmp / f"{kind}.onnx", "onnx")
        ts_path = export_model(trained, tmp / f"{kind}.pt", "torchscript")
        sess = ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"])
        scripted = torch.jit.load(str(ts_path))

        def onnx_run(b: np.ndarray, sess: object = sess) -> np.ndarray:
            return sess.run(None, {"features": b})[0]  # type: ignore[attr-defined]

        def ts_run(b: np.ndarray, scripted: object = scripted) -> np.ndarray:
            with torch.no_grad():
                return scripted(torch.from_numpy(b)).numpy()  # type: ignore[operator]

        paths: dict[str, Callable[[], np.ndarray]] = {
            "ndcglab predict": lambda trained=trained: trained.predict(ds),
            "onnxruntime (exported)": lambda f=onnx_run: _blocks(f, x),
            "torch.jit (exported)": lambda f=ts_run: _blocks(f, x),
        }
        rows: dict[str, list[float]] = {p: [] for p in paths}
        diffs: dict[str, float] = {}
        want = None
        for _ in range(args.repeats):
            for p, fn in paths.items():
                secs, out = _timed(fn)
                rows[p].append(secs)
                if p == "ndcglab predict":
                    want = out
                else:
                    diffs[p] = float(np.abs(out.astype(np.float64) - want).max())
            loads.append(os.getloadavg()[0])
        report(kind, rows, diffs)

    sub = ds.subset(np.arange(2000))
    model = train_gbdt(
        sub, "listnet", num_boost_round=args.trees, num_threads=1, early_stopping_rounds=None
    )
    text = export_lightgbm(model, tmp / "trees.txt")
    plain = lgb.Booster(model_file=str(text))
    paths = {  # LightGBM's default threads in both
        "ndcglab predict": lambda: model.predict(ds),
        "lightgbm Booster.predict": lambda: plain.predict(x),
    }
    rows = {p: [] for p in paths}
    diffs = {}
    for _ in range(args.repeats):
        for p, fn in paths.items():
            secs, out = _timed(fn)
            rows[p].append(secs)
            if p == "ndcglab predict":
                want = out
            else:
                diffs[p] = float(np.abs(out - want).max())
        loads.append(os.getloadavg()[0])
    report(f"gbdt ({args.trees} trees, 31 leaves)", rows, diffs)
    print(f"load average {min(loads):.2f}..{max(loads):.2f} (2 cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
