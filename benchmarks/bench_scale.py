"""Speed and memory at MSLR-WEB30K scale (synthetic: 31,531 queries, ≈3.77M docs, 136 features).

Stages (``--stage``, default ``all``), each run in a fresh Python process so that its peak memory
(``resource.getrusage(...).ru_maxrss``) is its own:

* ``write``  — ``make_synthetic("mslr30k")`` (features rounded to 3 decimals, as MSLR's text has
  about that precision) written as LETOR text with :func:`ndcglab.data.write_svmlight` to
  ``--dir`` (default ``/tmp/ndcglab_scale``; never the repository). Done once; reused after.
* ``parse``  — :func:`ndcglab.data.read_letor` of that text: seconds, MB/s (target ≥ 60), peak
  memory as a multiple of the float32 feature matrix (target ≤ 2.5×); then the binary cache
  (``read_letor(cache=...)``): the time to build it, and to reload it in a fresh process.
* ``train``  — a linear model trained by :func:`ndcglab.training.train` (Adam, batches of 64
  queries bucketed by length, float32) with ListNet, ListMLE and CS-ListMLE@10 for ``--epochs``
  epochs (default 3): documents per second of epoch 1 and of the later epochs, and the resident
  set after epoch 1 vs after the last epoch (memory must not grow with epochs).
* ``gbdt``   — 100 boosting rounds (``--rounds``) with our ListNet objective
  (:class:`ndcglab.gbdt.LossObjective`, closed-form gradient and Hessian) vs LightGBM's
  ``lambdarank`` and ``rank_xendcg``, same trees (num_leaves 31, learning rate 0.05,
  min_data_in_leaf 20) on the same constructed ``lightgbm.Dataset``: seconds, the ratio to
  ``lambdarank``, and the share of our time spent computing gradients in Python/torch.
* ``eval``   — :func:`ndcglab.measures.evaluate` of NDCG@1..10 and MAP (``standard`` preset:
  exp2 gain, log2 discount) on all 3.77M documents.

    nice python benchmarks/bench_scale.py                  # everything (tens of minutes)
    python benchmarks/bench_scale.py --quick               # 3,000 queries (≈360k docs)
    python benchmarks/bench_scale.py --stage gbdt --rounds 20
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
STAGES = ("parse", "train", "gbdt", "eval")
LOSSES = ("listnet", "listmle", "cs_listmle@10")
EVAL_MEASURES = [f"ndcg@{k}" for k in range(1, 11)] + ["map"]


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):  # pragma: no cover - not Linux
        return _peak_mb()


def _emit(result: dict) -> None:
    print("RESULT " + json.dumps(result), flush=True)


# ============================================================================ child stages
def _load(args: argparse.Namespace):
    from ndcglab.data import read_letor

    return read_letor(args.file, cache=_cache_dir(args), cache_verify=False)


def _cache_dir(args: argparse.Namespace) -> Path:
    return args.dir / f"cache_{args.file.stem}"


def _warm_up(args: argparse.Namespace) -> None:
    """Read a two-line file first, so the reader's compiled code is loaded before timing."""
    from ndcglab.data import read_letor

    tiny = args.dir / "_warm.txt"
    tiny.write_text("1 qid:1 1:0.5 2:1\n0 qid:1 1:0.25 2:0\n")
    read_letor(tiny)


def stage_write(args: argparse.Namespace) -> dict:
    from ndcglab.data import make_synthetic, write_svmlight

    t0 = time.perf_counter()
    overrides = {"n_queries": args.queries} if args.queries else {}
    ds = make_synthetic("mslr30k", seed=0, **overrides)
    gen = time.perf_counter() - t0
    np.round(ds.features, 3, out=ds.features)
    t1 = time.perf_counter()
    write_svmlight(args.file, ds)
    return {
        "stage": "write",
        "docs": ds.n_docs,
        "queries": ds.n_queries,
        "features": ds.n_features,
        "generate_s": gen,
        "write_s": time.perf_counter() - t1,
        "bytes": args.file.stat().st_size,
    }


def stage_parse(args: argparse.Namespace) -> dict:
    from ndcglab.data import read_letor

    _warm_up(args)
    base = _rss_mb()
    t0 = time.perf_counter()
    ds = read_letor(args.file)
    secs = time.perf_counter() - t0
    size = args.file.stat().st_size
    feat_mb = ds.features.nbytes / 2**20
    peak = _peak_mb()
    return {
        "stage": "parse",
        "seconds": secs,
        "mb_per_s": size / 2**20 / secs,
        "file_mb": size / 2**20,
        "docs": ds.n_docs,
        "features_mb": feat_mb,
        "rss_before_mb": base,
        "peak_mb": peak,
        "peak_over_features": peak / feat_mb,
        "peak_increase_over_features": (peak - base) / feat_mb,
    }


def stage_cache_build(args: argparse.Namespace) -> dict:
    from ndcglab.data import read_letor

    _warm_up(args)
    cache = _cache_dir(args)
    if cache.exists():
        for p in cache.iterdir():
            p.unlink()
    t0 = time.perf_counter()
    ds = read_letor(args.file, cache=cache)
    return {
        "stage": "cache_build",
        "seconds": time.perf_counter() - t0,
        "docs": ds.n_docs,
        "peak_mb": _peak_mb(),
    }


def stage_cache_reload(args: argparse.Namespace) -> dict:
    from ndcglab.data import read_letor

    _warm_up(args)
    base = _rss_mb()
    out = {}
    for verify in (True, False):
        t0 = time.perf_counter()
        ds = read_letor(args.file, cache=_cache_dir(args), cache_verify=verify)
        out["seconds_verify" if verify else "seconds_no_verify"] = time.perf_counter() - t0
        del ds
    ds = read_letor(args.file, cache=_cache_dir(args), cache_verify=False)
    feat_mb = ds.features.nbytes / 2**20
    return {
        "stage": "cache_reload",
        **out,
        "peak_mb": _peak_mb(),
        "rss_before_mb": base,
        "peak_over_features": _peak_mb() / feat_mb,
    }


def stage_train(args: argparse.Namespace) -> dict:
    from ndcglab._compat import torch
    from ndcglab.training import train

    torch().set_num_threads(args.threads)
    ds = _load(args)
    feat_mb = ds.features.nbytes / 2**20
    out: dict = {"stage": "train", "docs": ds.n_docs, "features_mb": feat_mb, "losses": {}}
    for loss in args.losses:
        rss: list[float] = []
        r = train(
            ds,
            loss=loss,
            optimizer="adam",
            lr=1e-3,
            epochs=args.epochs,
            tol=0.0,
            batch_size=64,
            normalize="none",
            progress=False,
            callback=lambda info, rss=rss: rss.append(_rss_mb()),
        )
        secs = [h["seconds"] for h in r.history]
        later = secs[1:] or secs
        out["losses"][loss] = {
            "epoch_seconds": secs,
            "docs_per_s_epoch1": ds.n_docs / secs[0],
            "docs_per_s_later": ds.n_docs / statistics.median(later),
            "rss_after_epoch_mb": rss,
            "rss_growth_1_to_last_mb": rss[-1] - rss[0],
            "loss_history": [h["loss"] for h in r.history],
        }
        print(
            f"  train {loss}: {secs} s/epoch; RSS after each epoch {[round(x) for x in rss]} MB",
            file=sys.stderr,
            flush=True,
        )
    out["peak_mb"] = _peak_mb()
    out["peak_over_features"] = out["peak_mb"] / feat_mb
    return out


def stage_gbdt(args: argparse.Namespace) -> dict:
    from ndcglab._compat import lightgbm, torch
    from ndcglab.gbdt import LossObjective, to_lgb_dataset

    lgb = lightgbm()
    torch().set_num_threads(args.threads)
    ds = _load(args)
    base = {
        "learning_rate": 0.05,
        "num_leaves": 31,
        "min_data_in_leaf": 20,
        "metric": "None",
        "verbosity": -1,
        "seed": 0,
        "num_threads": args.threads,
        "feature_pre_filter": False,
    }
    t0 = time.perf_counter()
    dtrain = to_lgb_dataset(ds, params={"feature_pre_filter": False}).construct()
    construct = time.perf_counter() - t0

    class Timed:
        """Our objective, with the time spent in it recorded."""

        def __init__(self, obj):
            self.obj, self.seconds, self.bind_seconds = obj, 0.0, 0.0

        def __deepcopy__(self, memo):  # lightgbm.train deep-copies params: keep our counters
            return self

        def __call__(self, preds, data):
            t = time.perf_counter()
            if self.obj._bound is None:
                self.obj._bound_for(data.get_label(), data.get_group())
                self.bind_seconds = time.perf_counter() - t
                t = time.perf_counter()
            out = self.obj(preds, data)
            self.seconds += time.perf_counter() - t
            return out

    runs: dict = {}
    for name in args.objectives:
        if name.startswith("lightgbm:"):
            objective, timed = name.split(":", 1)[1], None
        else:
            timed = Timed(LossObjective(name))
            objective = timed
        t = time.perf_counter()
        booster = lgb.train({**base, "objective": objective}, dtrain, num_boost_round=args.rounds)
        secs = time.perf_counter() - t
        scores = booster.predict(ds.features)
        from ndcglab.measures import evaluate

        ndcg10 = evaluate(ds, scores, ["ndcg@10"], preset="standard").mean["ndcg@10"]
        runs[name] = {"seconds": secs, "per_round_s": secs / args.rounds, "train_ndcg@10": ndcg10}
        if timed is not None:
            runs[name]["objective_seconds"] = timed.seconds
            runs[name]["bind_seconds"] = timed.bind_seconds
            runs[name]["objective_share"] = (timed.seconds + timed.bind_seconds) / secs
        print(f"  gbdt {name}: {secs:.1f}s for {args.rounds} rounds", file=sys.stderr, flush=True)
        del booster
    ref = runs.get("lightgbm:lambdarank", {}).get("seconds")
    for r in runs.values():
        r["ratio_to_lambdarank"] = r["seconds"] / ref if ref else None
    return {
        "stage": "gbdt",
        "docs": ds.n_docs,
        "rounds": args.rounds,
        "construct_s": construct,
        "runs": runs,
        "peak_mb": _peak_mb(),
        "peak_over_features": _peak_mb() / (ds.features.nbytes / 2**20),
    }


def stage_eval(args: argparse.Namespace) -> dict:
    from ndcglab.measures import evaluate

    ds = _load(args)
    rng = np.random.default_rng(0)
    w = rng.normal(size=ds.n_features).astype(np.float32)
    scores = rng.normal(size=ds.n_docs)  # a noisy linear scorer, computed in row chunks
    for lo in range(0, ds.n_docs, 1 << 18):
        scores[lo : lo + (1 << 18)] += np.nan_to_num(ds.features[lo : lo + (1 << 18)]) @ w
    evaluate(ds.subset(np.arange(10)), scores[: ds.boundaries[10]], EVAL_MEASURES)  # compile
    before = _rss_mb()
    t0 = time.perf_counter()
    res = evaluate(ds, scores, EVAL_MEASURES, preset="standard")
    secs = time.perf_counter() - t0
    return {
        "stage": "eval",
        "seconds": secs,
        "docs_per_s": ds.n_docs / secs,
        "queries": ds.n_queries,
        "mean": res.mean,
        "empty_queries": res.empty_queries,
        "peak_mb": _peak_mb(),
        "rss_before_mb": before,
        "peak_increase_mb": _peak_mb() - before,
    }


CHILD = {
    "write": stage_write,
    "parse": stage_parse,
    "cache_build": stage_cache_build,
    "cache_reload": stage_cache_reload,
    "train": stage_train,
    "gbdt": stage_gbdt,
    "eval": stage_eval,
}


# ============================================================================ parent
def _run_child(stage: str, args: argparse.Namespace) -> dict:
    cmd = [
        sys.executable,
        str(HERE),
        "--child",
        stage,
        "--dir",
        str(args.dir),
        "--file",
        str(args.file),
        "--epochs",
        str(args.epochs),
        "--rounds",
        str(args.rounds),
        "--threads",
        str(args.threads),
        "--losses",
        ",".join(args.losses),
        "--objectives",
        ",".join(args.objectives),
    ]
    if args.queries:
        cmd += ["--queries", str(args.queries)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=False)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            out = json.loads(line[7:])
            out["wall_s"] = time.perf_counter() - t0
            return out
    raise SystemExit(f"stage {stage} failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}")


def _report(r: dict) -> str:
    st = r["stage"]
    if st == "write":
        return (
            f"write: {r['docs']:,} docs, {r['queries']:,} queries, {r['features']} features; "
            f"generate {r['generate_s']:.1f}s, write {r['write_s']:.1f}s, "
            f"{r['bytes'] / 2**30:.2f} GiB"
        )
    if st == "parse":
        return (
            f"parse: read_letor {r['file_mb']:.0f} MiB in {r['seconds']:.1f}s = "
            f"{r['mb_per_s']:.1f} MiB/s (target >= 60); peak RSS {r['peak_mb']:.0f} MiB = "
            f"{r['peak_over_features']:.2f}x the float32 features ({r['features_mb']:.0f} MiB; "
            f"target <= 2.5x); increase over the {r['rss_before_mb']:.0f} MiB before the read "
            f"{r['peak_increase_over_features']:.2f}x"
        )
    if st == "cache_build":
        return f"cache: first read with cache={r['seconds']:.1f}s (parse + write .npz)"
    if st == "cache_reload":
        return (
            f"cache: reload {r['seconds_verify']:.2f}s (sha256 of the source checked), "
            f"{r['seconds_no_verify']:.2f}s (size+mtime only); peak RSS {r['peak_mb']:.0f} MiB = "
            f"{r['peak_over_features']:.2f}x features"
        )
    if st == "train":
        lines = [
            f"train (linear, Adam, batch 64 queries, {r['docs']:,} docs; peak RSS "
            f"{r['peak_mb']:.0f} MiB = {r['peak_over_features']:.2f}x features):"
        ]
        for loss, v in r["losses"].items():
            rss = v["rss_after_epoch_mb"]
            lines.append(
                f"  {loss:14s} epoch 1 {v['epoch_seconds'][0]:7.1f}s = "
                f"{v['docs_per_s_epoch1']:>10,.0f} docs/s; later epochs "
                f"{v['docs_per_s_later']:>10,.0f} docs/s; RSS after epoch 1 {rss[0]:.0f} MiB, "
                f"after epoch {len(rss)} {rss[-1]:.0f} MiB "
                f"(growth {v['rss_growth_1_to_last_mb']:+.0f} MiB)"
            )
        return "\n".join(lines)
    if st == "gbdt":
        lines = [
            f"gbdt: {r['rounds']} rounds on {r['docs']:,} docs (Dataset construction "
            f"{r['construct_s']:.1f}s, shared; peak RSS {r['peak_mb']:.0f} MiB = "
            f"{r['peak_over_features']:.2f}x features)"
        ]
        for name, v in r["runs"].items():
            extra = ""
            if "objective_seconds" in v:
                extra = (
                    f"; gradients {v['objective_seconds']:.1f}s + one-off padding index "
                    f"{v['bind_seconds']:.1f}s = {100 * v['objective_share']:.0f}% of the time"
                )
            ratio = v["ratio_to_lambdarank"]
            lines.append(
                f"  {name:22s} {v['seconds']:7.1f}s ({v['per_round_s']:.2f}s/round), "
                f"x{ratio:.2f} lambdarank, train NDCG@10 {v['train_ndcg@10']:.4f}{extra}"
            )
        return "\n".join(lines)
    if st == "eval":
        m = r["mean"]
        return (
            f"eval: NDCG@1..10 + MAP on {r['queries']:,} queries in {r['seconds']:.2f}s = "
            f"{r['docs_per_s']:,.0f} docs/s (NDCG@10 {m['ndcg@10']:.4f}, MAP {m['map']:.4f}); "
            f"peak RSS {r['peak_mb']:.0f} MiB, {r['peak_increase_mb']:+.0f} MiB during evaluate"
        )
    return json.dumps(r)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stage", default="all", choices=(*STAGES, "all"))
    ap.add_argument("--quick", action="store_true", help="3,000 queries (≈360k documents)")
    ap.add_argument("--queries", type=int, default=None, help="number of synthetic queries")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/ndcglab_scale"))
    ap.add_argument("--file", type=Path, default=None)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--losses", default=",".join(LOSSES))
    ap.add_argument("--objectives", default="listnet,lightgbm:lambdarank,lightgbm:rank_xendcg")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.quick and not args.queries:
        args.queries = 3000
    args.losses = [s for s in args.losses.split(",") if s]
    args.objectives = [s for s in args.objectives.split(",") if s]
    if args.file is None:
        tag = f"mslr30k_q{args.queries}" if args.queries else "mslr30k"
        args.file = args.dir / f"{tag}.txt"
    if args.child:
        _emit(CHILD[args.child](args))
        return 0

    args.dir.mkdir(parents=True, exist_ok=True)
    results = []
    stages = STAGES if args.stage == "all" else (args.stage,)
    todo = []
    if not args.file.exists():
        todo.append("write")
    for st in stages:
        todo += ["parse", "cache_build", "cache_reload"] if st == "parse" else [st]
    cache = _cache_dir(args)
    if "parse" not in todo and not (cache.exists() and any(cache.iterdir())):
        todo.insert(1 if todo and todo[0] == "write" else 0, "cache_build")
    for st in todo:
        print(f"[{time.strftime('%H:%M:%S')}] stage {st} ...", flush=True)
        r = _run_child(st, args)
        results.append(r)
        print(_report(r), f"[{r['wall_s']:.0f}s wall]", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
