"""Regenerate the conformance suite's golden files from the real libraries.

    python tests/measures/conformance/regenerate.py [TOOL ...]

Writes ``golden/cases.json`` (the cases of :mod:`cases`) and one ``golden/<tool>.json`` per
library: for every case and every library call, the library's value of each query (``null``
where the library leaves the query out) and its mean over the case, or the first line of the
error it raised, together with the ndcglab preset and measure that name the same convention.
Each file records the library's version and the tolerance the comparison uses (1e-12 where
the library computes in double precision; its float32 precision, or its printed digits, where
it does not). The output is deterministic: running this script again with the same library
versions gives the same files, bit for bit (``--check`` verifies it without writing).

allRank is not installable beside a current PyTorch (its 2021 release pins old versions): the
script imports ``allrank.models.metrics`` from any folder on ``PYTHONPATH`` (e.g. after
``pip install --no-deps --target DIR allrank``).
"""

# ruff: noqa: B023  (each closure is called at once, inside the loop that defines it)
from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from cases import generate  # noqa: E402

GOLDEN = HERE / "golden"
CUTS = (1, 3, 5, 10, None)


def _queries(case: dict[str, Any]) -> list[tuple[np.ndarray, np.ndarray, list[str]]]:
    y = np.asarray(case["labels"], dtype=np.float64)
    s = np.asarray(case["scores"], dtype=np.float64)
    b = np.concatenate([[0], np.cumsum(case["groups"])])
    return [
        (y[b[i] : b[i + 1]], s[b[i] : b[i + 1]], case["doc_ids"][b[i] : b[i + 1]])
        for i in range(len(case["groups"]))
    ]


def _err(exc: BaseException) -> str:
    if hasattr(exc, "returncode"):  # a command (gdeval.pl) that stopped: temporary names vary
        return f"{type(exc).__name__}: exit status {exc.returncode}"
    text = str(exc).strip().splitlines()
    first = next((t for t in text if "Check failed" in t or "Error" in t), text[0] if text else "")
    first = re.sub(r"^\[\d\d:\d\d:\d\d\]\s*", "", first.strip())  # XGBoost's clock time
    return f"{type(exc).__name__}: {first[:200]}"


def _entry(case: str, preset: str, measure: str, call: str, fn: Callable[[], Any]) -> dict:
    out: dict[str, Any] = {"case": case, "preset": preset, "measure": measure, "call": call}
    try:
        per_query, mean = fn()
    except Exception as exc:  # the library refuses the input: that is the expected outcome
        out["error"] = _err(exc)
        return out
    out["per_query"] = [None if v is None or np.isnan(v) else float(v) for v in per_query]
    out["mean"] = None if mean is None or np.isnan(mean) else float(mean)
    return out


def _cut(k: int | None) -> str:
    return "" if k is None else f"@{k}"


# ================================================================================= xgboost
def xgboost_entries(cases: list[dict]) -> tuple[str, list[dict]]:
    import xgboost as xgb

    def run(y: np.ndarray, s: np.ndarray, groups: list[int], metric: str, exp: bool) -> float:
        d = xgb.DMatrix(np.zeros((len(y), 1)), label=y, base_margin=s)
        d.set_group(groups)
        params = {
            "objective": "rank:ndcg",
            "base_score": 0.0,
            "eval_metric": [metric],
            "ndcg_exp_gain": exp,
            "nthread": 1,
        }
        bst = xgb.train(params, d, num_boost_round=0)
        text = bst.eval(d)
        return float(text.split(":")[-1])

    entries = []
    for case in cases:
        qs = _queries(case)
        for exp in (True, False):
            for metric in ("ndcg", "map"):
                if metric == "map" and not exp:
                    continue  # map ignores ndcg_exp_gain
                for k in CUTS:
                    for minus in ("", "-"):
                        name = f"{metric}{_cut(k)}{minus}"
                        preset = "xgboost" if exp else "xgboost(exp_gain=false)"

                        def fn(name: str = name, exp: bool = exp) -> tuple[list, float]:
                            pq = [run(y, s, [len(y)], name, exp) for y, s, _ in qs]
                            return pq, run(
                                np.asarray(case["labels"]),
                                np.asarray(case["scores"]),
                                case["groups"],
                                name,
                                exp,
                            )

                        call = f"xgboost.train(eval_metric={name!r}, ndcg_exp_gain={exp})"
                        entries.append(_entry(case["name"], preset, name, call, fn))
    return xgb.__version__, entries


# ================================================================================= catboost
def catboost_entries(cases: list[dict]) -> tuple[str, list[dict]]:
    import catboost
    from catboost.utils import eval_metric

    entries = []
    for case in cases:
        qs = _queries(case)
        for typ in ("Base", "Exp"):
            for den in ("LogPosition", "Position"):
                for k in CUTS:
                    metric = f"NDCG:type={typ};denominator={den}" + (f";top={k}" if k else "")
                    opts = []
                    if typ != "Base":
                        opts.append(f"type={typ.lower()}")
                    if den != "LogPosition":
                        opts.append(f"denominator={den.lower()}")
                    preset = "catboost" + (f"({','.join(opts)})" if opts else "")

                    def fn(metric: str = metric) -> tuple[list, float]:
                        pq = [eval_metric(y, s, metric, group_id=[0] * len(y))[0] for y, s, _ in qs]
                        gid = np.repeat(np.arange(len(case["groups"])), case["groups"])
                        return pq, eval_metric(
                            case["labels"], case["scores"], metric, group_id=gid
                        )[0]

                    entries.append(
                        _entry(
                            case["name"], preset, f"ndcg{_cut(k)}", f"eval_metric({metric!r})", fn
                        )
                    )
    return catboost.__version__, entries


# ============================================================================= torchmetrics
def torchmetrics_entries(cases: list[dict]) -> tuple[str, list[dict]]:
    import torch
    import torchmetrics
    from torchmetrics.retrieval import RetrievalNormalizedDCG

    def tensor_labels(y: np.ndarray) -> Any:
        # integer labels as integers (the documented input), fractional ones as floats
        return torch.tensor(y.astype(np.int64)) if (y == np.floor(y)).all() else torch.tensor(y)

    entries = []
    for case in cases:
        qs = _queries(case)
        for action in ("neg", "pos", "skip", "error"):
            for ignore in (None, -1):
                for k in CUTS:

                    def fn(
                        action: str = action, ignore: int | None = None, k: int | None = k
                    ) -> tuple:
                        def one(y: np.ndarray, s: np.ndarray, idx: np.ndarray) -> float:
                            m = RetrievalNormalizedDCG(
                                top_k=k, empty_target_action=action, ignore_index=ignore
                            )
                            v = m(torch.tensor(s), tensor_labels(y), indexes=torch.tensor(idx))
                            return float(v)

                        pq = []
                        for y, s, _ in qs:
                            if action == "skip":
                                kept = y if ignore is None else y[y != ignore]
                                if not kept.sum():
                                    pq.append(None)
                                    continue
                            try:
                                pq.append(one(y, s, np.zeros(len(y), dtype=np.int64)))
                            except ValueError:
                                if action == "error":
                                    raise
                                raise
                        idx = np.repeat(np.arange(len(case["groups"])), case["groups"])
                        y_all = np.asarray(case["labels"])
                        return pq, one(y_all, np.asarray(case["scores"]), idx)

                    opts = []
                    if action != "neg":
                        opts.append(f"empty={action}")
                    if ignore is not None:
                        opts.append(f"ignore_index={ignore}")
                    preset = "torchmetrics" + (f"({','.join(opts)})" if opts else "")
                    call = (
                        f"RetrievalNormalizedDCG(top_k={k}, empty_target_action={action!r}, "
                        f"ignore_index={ignore})"
                    )
                    entries.append(
                        _entry(
                            case["name"],
                            preset,
                            f"ndcg{_cut(k)}",
                            call,
                            lambda f=fn, i=ignore: f(ignore=i),
                        )
                    )
    return torchmetrics.__version__, entries


# ================================================================================== allRank
def _allrank_ndcg() -> Callable[..., Any]:
    """``allrank.models.metrics.ndcg``. Its module imports ``allrank.data.dataset_loading`` for
    one constant, and that module imports torchvision; where torchvision is missing, the
    constant (``PADDED_Y_VALUE``) is read from that module's source instead of importing it."""
    import ast
    import importlib.util
    import types

    try:
        import torchvision  # noqa: F401
    except ImportError:
        spec = importlib.util.find_spec("allrank")
        if spec is None or not spec.submodule_search_locations:
            raise
        src = Path(next(iter(spec.submodule_search_locations))) / "data" / "dataset_loading.py"
        stub = types.ModuleType("allrank.data.dataset_loading")
        for node in ast.parse(src.read_text()).body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "PADDED_Y_VALUE" for t in node.targets
            ):
                stub.PADDED_Y_VALUE = ast.literal_eval(node.value)  # type: ignore[attr-defined]
        sys.modules["allrank.data.dataset_loading"] = stub
    from allrank.models.metrics import ndcg

    return ndcg


def allrank_entries(cases: list[dict]) -> tuple[str, list[dict]]:
    import importlib.metadata

    import torch

    ndcg = _allrank_ndcg()

    entries = []
    for case in cases:
        qs = _queries(case)
        width = max(case["groups"])
        for filler in (1.0, 0.0):
            for k in CUTS:

                def fn(filler: float = filler, k: int | None = k) -> tuple:
                    yp = np.full((len(qs), width), -1.0)
                    sp = np.zeros((len(qs), width))
                    for i, (y, s, _) in enumerate(qs):
                        yp[i, : len(y)] = y
                        sp[i, : len(s)] = s
                    ats = None if k is None else [k]
                    v = ndcg(
                        torch.tensor(sp, dtype=torch.float32),
                        torch.tensor(yp, dtype=torch.float32),
                        ats=ats,
                        filler_value=filler,
                    )[:, 0]
                    pq = [float(x) for x in v]
                    return pq, float(v.mean())

                preset = "allrank" if filler == 1.0 else "allrank(filler=0)"
                ats = None if k is None else [k]
                call = f"allrank.models.metrics.ndcg(ats={ats}, filler_value={filler})"
                entries.append(_entry(case["name"], preset, f"ndcg{_cut(k)}", call, fn))
    return importlib.metadata.version("allrank"), entries


# ====================================================================================== rax
def rax_entries(cases: list[dict]) -> tuple[str, list[dict]]:
    import jax.numpy as jnp
    import rax

    entries = []
    for case in cases:
        qs = _queries(case)
        width = max(case["groups"])
        for k in CUTS:

            def fn(k: int | None = k) -> tuple:
                yp = np.zeros((len(qs), width))
                sp = np.zeros((len(qs), width))
                where = np.zeros((len(qs), width), dtype=bool)
                for i, (y, s, _) in enumerate(qs):
                    yp[i, : len(y)] = y
                    sp[i, : len(s)] = s
                    where[i, : len(y)] = True
                v = rax.ndcg_metric(
                    jnp.asarray(sp),
                    jnp.asarray(yp),
                    where=jnp.asarray(where),
                    topn=k,
                    reduce_fn=None,
                )
                mean = rax.ndcg_metric(
                    jnp.asarray(sp), jnp.asarray(yp), where=jnp.asarray(where), topn=k
                )
                return [float(x) for x in np.asarray(v)], float(mean)

            call = f"rax.ndcg_metric(topn={k}, where=<the real documents>)"
            entries.append(_entry(case["name"], "rax", f"ndcg{_cut(k)}", call, fn))
    return rax.__version__, entries


# ===================================================================================== ranx
def ranx_entries(cases: list[dict]) -> tuple[str, list[dict]]:
    import importlib.metadata

    from ranx import Qrels, Run, evaluate

    entries = []
    for case in cases:
        qs = _queries(case)
        for metric in ("ndcg", "ndcg_burges"):
            for k in CUTS:
                name = f"{metric}{_cut(k)}"

                def fn(name: str = name) -> tuple:
                    qd, rd = {}, {}
                    for i, (y, s, d) in enumerate(qs):
                        qd[f"q{i}"] = {
                            doc: int(v) if v == int(v) else float(v) for doc, v in zip(d, y)
                        }
                        rd[f"q{i}"] = {doc: float(v) for doc, v in zip(d, s)}
                    pq = evaluate(Qrels(qd), Run(rd), name, return_mean=False, make_comparable=True)
                    pq = [float(x) for x in np.asarray(pq)]
                    return pq, float(np.mean(pq))

                entries.append(_entry(case["name"], "ranx", name, f"ranx.evaluate({name!r})", fn))
    return importlib.metadata.version("ranx"), entries


# =================================================================================== gdeval
def gdeval_entries(cases: list[dict]) -> tuple[str, list[dict]]:
    import importlib.metadata

    import ir_measures
    from ir_measures import ERR, nDCG

    entries = []
    for case in cases:
        qs = _queries(case)
        for k in (1, 3, 5, 10):
            for measure, spec in ((nDCG @ k, f"ndcg@{k}"), (ERR @ k, f"err@{k}")):

                def fn(measure: Any = measure) -> tuple:
                    qrels, run = [], []
                    for i, (y, s, d) in enumerate(qs):
                        for doc, lab, sc in zip(d, y, s):
                            lab_t = int(lab) if lab == int(lab) else float(lab)
                            qrels.append(ir_measures.Qrel(str(i + 1), doc, lab_t))
                            run.append(ir_measures.ScoredDoc(str(i + 1), doc, float(sc)))
                    ev = ir_measures.gdeval.evaluator([measure], qrels)
                    got = {m.query_id: m.value for m in ev.iter_calc(run)}
                    pq = [got.get(str(i + 1)) for i in range(len(qs))]
                    vals = [v for v in pq if v is not None]
                    return pq, (float(np.mean(vals)) if vals else float("nan"))

                call = f"ir_measures.gdeval.evaluator([{measure}])"
                entries.append(_entry(case["name"], "gdeval", spec, call, fn))
    return "ir_measures " + importlib.metadata.version("ir_measures") + ", gdeval.pl 1.2a", entries


TOOLS: dict[str, tuple[Callable[[list[dict]], tuple[str, list[dict]]], float, str]] = {
    "xgboost": (
        xgboost_entries,
        1e-12,
        "double precision sums (labels and scores read as float32)",
    ),
    "catboost": (catboost_entries, 1e-12, "double precision"),
    "torchmetrics": (torchmetrics_entries, 1e-6, "float32 tensors"),
    "allrank": (allrank_entries, 1e-6, "float32 tensors"),
    "rax": (rax_entries, 1e-6, "float32 (JAX without x64)"),
    "ranx": (ranx_entries, 1e-12, "double precision (Numba)"),
    "gdeval": (gdeval_entries, 5e-6, "gdeval.pl prints 5 decimals"),
}


def _dump(obj: Any) -> str:
    return json.dumps(obj, indent=1, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    names = [a for a in argv if not a.startswith("--")] or list(TOOLS)
    cases = generate()
    files = {"cases.json": _dump({"cases": cases})}
    for name in names:
        fn, tol, why = TOOLS[name]
        version, entries = fn(cases)
        files[f"{name}.json"] = _dump(
            {
                "tool": name,
                "version": version,
                "tolerance": tol,
                "precision": why,
                "entries": entries,
            }
        )
        print(f"{name} {version}: {len(entries)} entries", file=sys.stderr)
    bad = 0
    for fname, text in files.items():
        path = GOLDEN / fname
        if check:
            if not path.exists() or path.read_text() != text:
                print(f"differs: {path}", file=sys.stderr)
                bad += 1
        else:
            GOLDEN.mkdir(exist_ok=True)
            path.write_text(text)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
