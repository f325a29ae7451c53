"""Speed of ndcglab's measures against pytrec_eval, ranx and scikit-learn, on an MSLR-WEB30K-sized
synthetic set (31,531 queries, ~3.77M documents, list sizes as MSLR, labels 0..4).

    python benchmarks/bench_measures.py [--quick] [--threads N] [--skip-compile]

What is timed (best of ``--repeat`` runs, wall clock and process CPU time):

* ndcglab from in-memory arrays: NDCG@10 (``ndcg_per_query``, and through ``evaluate_arrays``),
  NDCG@1..10 + MAP in one call (``evaluate_arrays``), each with 1 thread and with all threads;
* pytrec_eval: building its input dicts, building the ``RelevanceEvaluator``, and the evaluation
  step alone;
* ranx: building ``Qrels``/``Run`` from the dicts, and the evaluation step alone (after one call
  that compiles its Numba code);
* scikit-learn ``ndcg_score``: called once per group of equal-length lists (2-D arrays; the only
  practical way — one call per query is ~100x slower), lists of one document left out because
  sklearn refuses them;
* the rank family (recall, R-precision, success, bpref, infAP, gm_map, map_cut, interpolated
  precision, num_*) beside pytrec_eval's evaluate step, one measure at a time and all at once,
  with the ratio printed; ERR, RBP and judged@k (not in pytrec_eval) alone;
* first-call time of ndcglab in a fresh process, with an empty Numba cache and with a warm one.

Every library's numbers are cross-checked against ndcglab under the matching convention before
any time is printed (max |difference| must stay below 1e-9), so all of them do the same work:
pytrec_eval = preset ``trec_eval`` (linear gain, ties by docno descending, ideal over the qrels);
ranx = linear gain (ties: ranx sorts with an unstable sort, so queries with tied scores are
compared separately); sklearn = preset ``sklearn`` (ties averaged).

The feature matrix is generated with 8 features instead of 136 (the list sizes and labels are
the same as ``make_synthetic("mslr30k")``; only the scores differ) to keep memory low.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from ndcglab.data import make_synthetic  # noqa: E402
from ndcglab.measures import _kernels, evaluate_arrays, ndcg_per_query  # noqa: E402
from ndcglab.measures import compute as _compute  # noqa: E402

NDCG_SET = [f"ndcg@{k}" for k in range(1, 11)]
TOL = 1e-9


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """(best wall seconds, process CPU seconds of that run, last result)."""
    best = (float("inf"), float("inf"))
    out = None
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        t, c = time.perf_counter() - t0, time.process_time() - c0
        if t < best[0]:
            best = (t, c)
    return best[0], best[1], out


def row(name: str, wall: float, cpu: float | None = None, ref: float | None = None) -> None:
    ratio = "" if ref is None else f"{wall / ref:8.1f}x"
    c = "" if cpu is None else f"{cpu:8.3f}"
    print(f"  {name:<58s}{wall:8.3f}{c:>9s}{ratio:>10s}")


def header(title: str) -> None:
    print(f"\n{title}")
    print(f"  {'':<58s}{'wall s':>8s}{'cpu s':>9s}{'vs ndcglab':>10s}")


def check(name: str, ours: np.ndarray, theirs: np.ndarray) -> float:
    diff = float(np.max(np.abs(np.asarray(ours) - np.asarray(theirs)))) if len(ours) else 0.0
    status = "ok" if diff < TOL else "MISMATCH"
    print(f"  cross-check {name:<44s} max |diff| = {diff:.2e}  {status}")
    if diff >= TOL:
        raise SystemExit(f"{name}: libraries disagree ({diff:.3e}); the timings would not compare")
    return diff


# ------------------------------------------------------------------------------ compile time
_SNIPPET = r"""
import time, sys
t0 = time.perf_counter(); c0 = time.process_time()
import numpy as np
from ndcglab.measures import evaluate_arrays, ndcg_per_query
t1 = time.perf_counter(); c1 = time.process_time()
y = np.array([2, 0, 1, 0, 3.0, 1]); s = np.array([.1, .4, .3, .2, .5, .5]); b = np.array([0, 3, 6])
if sys.argv[1] == "ndcg10":
    ndcg_per_query(y, s, b, 10)
else:
    evaluate_arrays(y, s, b, [f"ndcg@{k}" for k in range(1, 11)] + ["map"])
t2 = time.perf_counter(); c2 = time.process_time()
print(f"{t1 - t0:.3f} {t2 - t1:.3f} {c2 - c1:.3f}")
"""


def compile_times() -> None:
    header("first call in a fresh process (import time, then first call = compile or cache load)")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    with tempfile.TemporaryDirectory() as cache:
        env["NUMBA_CACHE_DIR"] = cache
        for what in ("ndcg10", "set"):
            label = "NDCG@10" if what == "ndcg10" else "NDCG@1..10 + MAP"
            for state in ("cold cache", "warm cache"):
                out = subprocess.run(
                    [sys.executable, "-c", _SNIPPET, what],
                    env=env,
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout.split()
                imp, first, cpu = map(float, out)
                print(
                    f"  {label:<18s} {state:<11s} import {imp:6.2f} s   first call "
                    f"{first:6.2f} s wall  {cpu:6.2f} s cpu"
                )


# ------------------------------------------------------------------------------ main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="3,000 queries instead of 31,531")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None, help="ndcglab threads (default: all)")
    ap.add_argument("--skip-compile", action="store_true")
    ap.add_argument("--skip-others", action="store_true", help="time ndcglab only")
    args = ap.parse_args()

    t0 = time.perf_counter()
    over = {"n_queries": 3000} if args.quick else {}
    ds = make_synthetic("mslr30k", n_features=8, n_informative=4, **over)
    y, b = ds.labels, ds.boundaries
    s = ds.features.astype(np.float64).sum(axis=1)
    ids = np.asarray(ds.doc_ids, dtype=object)
    nq = ds.n_queries
    print(
        f"data: {nq} queries, {ds.n_docs} documents (mean list {ds.n_docs / nq:.1f}, max "
        f"{ds.query_lengths.max()}), labels {ds.label_counts()}, generated in "
        f"{time.perf_counter() - t0:.1f} s; {_compute.n_threads()} CPUs; "
        f"load average {os.getloadavg()[0]:.1f}"
    )

    # warm up (compile or load the cache)
    evaluate_arrays(y[:1000], s[:1000], [0, 500, 1000], [*NDCG_SET, "map"])
    ndcg_per_query(y[:1000], s[:1000], [0, 500, 1000], 10)

    header("ndcglab (standard preset: exp2 gain, log2 discount, ties in input order)")
    results: dict[str, float] = {}
    threads = [1, _compute.n_threads()] if args.threads is None else [args.threads]
    for th in sorted(set(threads)):
        os.environ["NDCGLAB_NUM_THREADS"] = str(th)
        w, c, _ = timed(lambda: ndcg_per_query(y, s, b, 10), args.repeat)
        row(f"NDCG@10, ndcg_per_query, {th} thread(s)", w, c)
        results[f"ndcg10_{th}"] = w
        w, c, _ = timed(lambda: evaluate_arrays(y, s, b, ["ndcg@10"]), args.repeat)
        row(f"NDCG@10, evaluate_arrays, {th} thread(s)", w, c)
        w, c, _ = timed(lambda: evaluate_arrays(y, s, b, [*NDCG_SET, "map"]), args.repeat)
        row(f"NDCG@1..10 + MAP, evaluate_arrays, {th} thread(s)", w, c)
        results[f"set_{th}"] = w
        w, c, _ = timed(lambda: evaluate_arrays(y, s, b, ["map"]), args.repeat)
        row(f"MAP alone, {th} thread(s)", w, c)
        w, c, _ = timed(lambda: ndcg_per_query(y, s, b), args.repeat)
        row(f"NDCG (whole list, full sort), {th} thread(s)", w, c)
    os.environ.pop("NDCGLAB_NUM_THREADS", None)
    ref10 = min(v for k, v in results.items() if k.startswith("ndcg10"))
    refset = min(v for k, v in results.items() if k.startswith("set"))
    presets_vs_standard(y, s, b, ids, args.repeat)

    if not args.skip_others:
        others(y, s, b, ids, nq, ref10, refset, args.repeat)
    if not args.skip_compile:
        compile_times()
    print(f"\ntotal benchmark time {time.perf_counter() - t0:.0f} s")


def presets_vs_standard(y, s, b, ids, repeat: int) -> None:
    """NDCG@1..10 + MAP under the tie-broken presets beside ``standard``, interleaved: the
    ``trec_eval`` preset ranks tied documents by docno, whose keys are built from the ids of the
    tied documents on the first call with an ids array and for all ids once from the second call
    on (kept while the array lives). Target: trec_eval <= 1.2x standard; the set <= 0.08 s with
    2 threads on the full-size set."""
    header("NDCG@1..10 + MAP: trec_eval preset (docid ties) vs standard, interleaved")
    spec = [*NDCG_SET, "map"]
    fresh = np.array(ids, dtype=object)  # an array never seen: the first call's cost
    t0 = time.perf_counter()
    evaluate_arrays(y, s, b, spec, preset="trec_eval", doc_ids=fresh)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    evaluate_arrays(y, s, b, spec, preset="trec_eval", doc_ids=fresh)
    second = time.perf_counter() - t0
    print(f"  trec_eval preset, first call {first:.3f} s, second (ranks all ids) {second:.3f} s")
    ratios, std, tre = [], [], []
    for _ in range(max(repeat, 3)):
        w_std, _, _ = timed(lambda: evaluate_arrays(y, s, b, spec), 1)
        w_tre, _, _ = timed(
            lambda: evaluate_arrays(y, s, b, spec, preset="trec_eval", doc_ids=fresh), 1
        )
        std.append(w_std)
        tre.append(w_tre)
        ratios.append(w_tre / w_std)
    print(
        f"  standard {min(std):.3f}..{max(std):.3f} s, trec_eval {min(tre):.3f}..{max(tre):.3f} s; "
        f"ratio min {min(ratios):.2f} median {float(np.median(ratios)):.2f} max {max(ratios):.2f}"
        f" (target <= 1.2: {'met' if float(np.median(ratios)) <= 1.2 else 'NOT met'}); "
        f"load average {os.getloadavg()[0]:.1f}"
    )


#: trec_eval measure (pytrec_eval's request, its result key) -> ndcglab spec
NEW_MEASURES = [
    ("recall.100", "recall_100", "recall@100"),
    ("Rprec", "Rprec", "rprec"),
    ("success.1", "success_1", "success@1"),
    ("bpref", "bpref", "bpref"),
    ("infAP", "infAP", "infap"),
    ("gm_map", "gm_map", "gm_map"),
    ("map_cut.10", "map_cut_10", "map@10"),
    ("iprec_at_recall", "iprec_at_recall_0.50", "iprec(level=0.5)"),
    ("11pt_avg", "11pt_avg", "iprec_11pt"),
    ("num_rel", "num_rel", "num_rel"),
    ("num_ret", "num_ret", "num_ret"),
    ("num_rel_ret", "num_rel_ret", "num_rel_ret"),
]
#: measures pytrec_eval lacks (timed alone)
NO_TREC_EVAL = ["err@20", "rbp(p=0.8)", "rbp_residual(p=0.8)", "judged@10"]


def new_measures(y, s, b, ids, qids, qrels, run, pytrec_eval, reps) -> None:
    """The rank family beside pytrec_eval's evaluate step, one measure at a time and all at once
    (ratio = pytrec_eval / ndcglab; every pair cross-checked per query first)."""
    header("rank family vs pytrec_eval (trec_eval preset; ratio = pytrec_eval / ndcglab)")

    def ours(specs):
        return evaluate_arrays(y, s, b, specs, preset="trec_eval", doc_ids=ids)

    def line(spec: str, wo: float, co: float, wt: float | None = None, ct: float = 0.0) -> None:
        theirs = (
            "(not in pytrec_eval)"
            if wt is None
            else f"pytrec_eval {wt:6.3f} / {ct:6.3f} s   "
            f"{wt / wo:5.1f}x / {ct / max(co, 1e-9):5.1f}x"
        )
        print(f"  {spec:<22s} ndcglab {wo:6.3f} / {co:6.3f} s   {theirs}")

    print("  (wall / CPU seconds; ratios: pytrec_eval's time over ndcglab's, wall / CPU)")
    for request, key, spec in NEW_MEASURES:
        ev = pytrec_eval.RelevanceEvaluator(qrels, {request})
        wt, ct, res = timed(partial(ev.evaluate, run), reps)
        wo, co, mine = timed(partial(ours, [spec]), reps)
        check(f"{spec} vs pytrec_eval {key}", mine.per_query[spec], [res[q][key] for q in qids])
        line(spec, wo, co, wt, ct)
    specs = [spec for _, _, spec in NEW_MEASURES]
    ev = pytrec_eval.RelevanceEvaluator(qrels, {r for r, _, _ in NEW_MEASURES})
    wt, ct, _ = timed(partial(ev.evaluate, run), reps)
    wo, co, _ = timed(partial(ours, specs), reps)
    line("all of the above", wo, co, wt, ct)
    for spec in NO_TREC_EVAL:
        wo, co, _ = timed(partial(ours, [spec]), reps)
        line(spec, wo, co)


def others(y, s, b, ids, nq, ref10, refset, repeat) -> None:
    qids = [f"q{q}" for q in range(nq)]
    reps = max(1, min(repeat, 3))

    # --------------------------------------------------------------------- pytrec_eval
    try:
        import pytrec_eval
    except ImportError:  # pragma: no cover
        pytrec_eval = None
    if pytrec_eval is not None:
        header("pytrec_eval (trec_eval 9: linear gain, ties by docno descending)")

        def build():
            qrels, run = {}, {}
            yl, sl, il = y.tolist(), s.tolist(), ids.tolist()
            for q in range(nq):
                lo, hi = int(b[q]), int(b[q + 1])
                qrels[qids[q]] = {il[i]: int(yl[i]) for i in range(lo, hi)}
                run[qids[q]] = {il[i]: sl[i] for i in range(lo, hi)}
            return qrels, run

        w, _, (qrels, run) = timed(build, 1)
        row("build qrels/run dicts from the arrays", w)
        ours10 = evaluate_arrays(y, s, b, ["ndcg@10"], preset="trec_eval", doc_ids=ids)
        ours_set = evaluate_arrays(y, s, b, [*NDCG_SET, "map"], preset="trec_eval", doc_ids=ids)
        w, _, ev = timed(lambda: pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}), 1)
        row("RelevanceEvaluator(qrels, ndcg_cut.10)", w)
        w, c, res = timed(lambda: ev.evaluate(run), reps)
        row("evaluate: NDCG@10", w, c, ref10)
        check(
            "pytrec_eval ndcg_cut_10 vs trec_eval preset",
            ours10.per_query["ndcg@10"],
            [res[q]["ndcg_cut_10"] for q in qids],
        )
        ev2 = pytrec_eval.RelevanceEvaluator(
            qrels, {"ndcg_cut." + ",".join(str(k) for k in range(1, 11)), "map"}
        )
        w, c, res = timed(lambda: ev2.evaluate(run), reps)
        row("evaluate: NDCG@1..10 + MAP", w, c, refset)
        for k in (1, 5, 10):
            check(
                f"pytrec_eval ndcg_cut_{k}",
                ours_set.per_query[f"ndcg@{k}"],
                [res[q][f"ndcg_cut_{k}"] for q in qids],
            )
        check("pytrec_eval map", ours_set.per_query["map"], [res[q]["map"] for q in qids])
        w, c, _ = timed(
            lambda: evaluate_arrays(y, s, b, [*NDCG_SET, "map"], preset="trec_eval", doc_ids=ids),
            reps,
        )
        row("(ndcglab, trec_eval preset incl. docid tie keys, same set)", w, c, refset)
        new_measures(y, s, b, ids, qids, qrels, run, pytrec_eval, reps)

        # ------------------------------------------------------------------ ranx
        try:
            import ranx
        except ImportError:  # pragma: no cover
            ranx = None
        if ranx is not None:
            header("ranx (linear gain = Jarvelin ndcg; ties: unstable sort)")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                small_q = {q: qrels[q] for q in qids[:20]}
                small_r = {q: run[q] for q in qids[:20]}
                ranx.evaluate(ranx.Qrels(small_q), ranx.Run(small_r), [*NDCG_SET, "map"])  # compile
                w, _, (rq, rr) = timed(lambda: (ranx.Qrels(qrels), ranx.Run(run)), 1)
                row("build Qrels/Run from the dicts (after compiling on 20 queries)", w)
                ranx.evaluate(rq, rr, ["ndcg@10"])  # compile
                w, c, _ = timed(lambda: ranx.evaluate(rq, rr, ["ndcg@10"]), reps)
                row("evaluate: NDCG@10", w, c, ref10)
                mets = [*NDCG_SET, "map"]
                ranx.evaluate(rq, rr, mets)
                w, c, _ = timed(lambda: ranx.evaluate(rq, rr, mets), reps)
                row("evaluate: NDCG@1..10 + MAP", w, c, refset)
            ours = evaluate_arrays(
                y,
                s,
                b,
                [
                    "ndcg(gain=linear,ties=input)@10",
                    "ndcg(gain=linear,ties=input)@3",
                    "map(ties=input)",
                ],
            )
            # ranx orders tied scores by an unstable sort (not a stated rule): compare per
            # query on the queries without tied scores, and report the others
            tied = np.zeros(len(y), dtype=bool)
            _compute.run_kernel(
                _kernels.tie_flags_kernel,
                b,
                s,
                np.zeros(len(y)),
                b,
                np.ascontiguousarray(b[1:]),
                (tied,),
            )
            qtied = np.add.reduceat(tied, b[:-1]) > 0 if len(y) else np.zeros(0, bool)
            clean = ~qtied
            for ours_name, theirs in [
                ("ndcg(gain=linear,ties=input)@10", "ndcg@10"),
                ("ndcg(gain=linear,ties=input)@3", "ndcg@3"),
                ("map(ties=input)", "map"),
            ]:
                per = np.array([rr.scores[theirs][q] for q in qids])
                mine = ours.per_query[ours_name]
                check(
                    f"ranx {theirs} ({clean.sum()} queries without ties)", mine[clean], per[clean]
                )
                off = np.abs(mine[qtied] - per[qtied]) > TOL
                print(
                    f"  {'':<12s}{qtied.sum()} queries with tied scores: {off.sum()} differ "
                    f"(ranx breaks ties by an unstable sort)"
                )

    # --------------------------------------------------------------------- scikit-learn
    try:
        from sklearn.metrics import ndcg_score
    except ImportError:  # pragma: no cover
        return
    header("scikit-learn ndcg_score (linear gain, ties averaged), one call per list length")
    lengths = np.diff(b)
    keep = lengths >= 2
    order = np.argsort(lengths, kind="stable")

    def sk() -> float:
        total, count = 0.0, 0
        starts = b[:-1]
        for n in np.unique(lengths[keep]):
            qs = order[lengths[order] == n]
            rows = starts[qs][:, None] + np.arange(n)[None, :]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                total += ndcg_score(y[rows], s[rows], k=10) * len(qs)
            count += len(qs)
        return total / count

    w, c, sk_mean = timed(sk, 1)
    row("ndcg_score, NDCG@10, grouped by list length", w, c, ref10)
    ours = evaluate_arrays(y, s, b, ["ndcg@10"], preset="sklearn").per_query["ndcg@10"]
    check(
        "sklearn mean NDCG@10 (lists of >= 2 docs)",
        np.array([ours[keep].mean()]),
        np.array([sk_mean]),
    )
    w, c, _ = timed(lambda: evaluate_arrays(y, s, b, ["ndcg@10"], preset="sklearn"), reps)
    row("(ndcglab, sklearn preset: average ties, full sort)", w, c, ref10)


if __name__ == "__main__":
    main()
