"""Reproduce the papers' experiments and write a self-contained report folder for each.

Experiments (one module each, registered in :data:`EXPERIMENTS`):

=====================  =====================================================================
name                   what it reproduces
=====================  =====================================================================
``cost-sensitive``     Lu et al. (PAKDD 2010) Tables 1–6: CS-ListMLE@k vs ListMLE and baselines
``consistency``        Ravikumar et al. (AISTATS 2011) Fig. 1: original vs NDCG-consistent losses
``qnorm``              Ravikumar et al. Fig. 2: normalised q-norm loss vs cosine and ListNet
``distinguishability`` Wang et al. (COLT 2013) Figures 1–4: NDCG vs list size for three rankers
``limits``             Wang et al. Theorems 1, 3, 5–13: limits of NDCG vs simulation
``linear-ndcg``        Jin & Geng (2010): DCG^β_ideal − DCG^β_f = R(f) on every query
``consistency-audit``  Ravikumar et al.: numerical NDCG-consistency verdict of every loss
``clicks``             unbiased learning to rank from simulated clicks: naive, IPS, DLA, DR, affine
``all``                every experiment above, into sub-folders, with an index page
=====================  =====================================================================

:func:`run_experiment` runs one and writes its report atomically (see :mod:`.report`).
Each module defines ``TITLE``, ``CLAIM`` and ``run(report, settings)``; heavy imports (torch,
matplotlib) happen inside ``run``. The protocols are described in ``docs/reproduce.md``.

References:

* Lu, Xie, Wang, Liu, Huang, "Cost-Sensitive Listwise Ranking Approach" (PAKDD 2010).
* Ravikumar, Tewari, Yang, "On NDCG Consistency of Listwise Ranking Methods" (AISTATS 2011).
* Wang, Wang, Li, He, Chen, Liu, "A Theoretical Analysis of NDCG Type Ranking Measures"
  (COLT 2013).
* Jin & Geng, "Linear NDCG and Pair-wise Loss" (ECML/PKDD Discovery Challenge 2010).
* Qin, Liu, Xu, Li, "LETOR: A benchmark collection for research on learning to rank for
  information retrieval" (Information Retrieval 13(4), 2010): the folds and data formats.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import Any

from .._tables import html_escape
from ..errors import NdcglabError
from ._common import Settings, normalize_text
from .report import Report, Table, write_bundle
from .verdicts import DISAGREES, SUMMARY_HTML, VERDICTS, counts_text, verdict_counts, verdict_of

__all__ = ["EXPERIMENTS", "Settings", "build_report", "run_experiment"]

#: experiment name -> module in ndcglab.reproduce (imported lazily)
EXPERIMENTS: dict[str, str] = {
    "cost-sensitive": "cost_sensitive",
    "consistency": "consistency",
    "qnorm": "qnorm",
    "distinguishability": "distinguishability",
    "limits": "limits",
    "linear-ndcg": "linear_ndcg",
    "consistency-audit": "consistency_audit",
    "clicks": "clicks_ultr",
}

#: the index's column title for each verdict of :data:`.verdicts.VERDICTS`, in that order
VERDICT_COLUMNS = ("claims agreeing", "disagreeing", "inconclusive", "not testable")

#: every name accepted by ``ndcglab reproduce``
NAMES: tuple[str, ...] = (*EXPERIMENTS, "all")


def _module(name: str) -> ModuleType:
    if name not in EXPERIMENTS:
        raise NdcglabError(f"unknown experiment {name!r}; known: {', '.join(NAMES)}")
    return importlib.import_module(f"{__name__}.{EXPERIMENTS[name]}")


@contextmanager
def _torch_threads(enabled: bool = True) -> Iterator[int | None]:
    """Run torch single-threaded (``NDCGLAB_TORCH_THREADS`` overrides), restoring the setting after.

    The experiments train small linear models; on a busy 2-core machine torch's intra-op thread
    pool makes them 5–15 times slower (threads spin while the other core is taken), and one
    thread costs nothing measurable when the machine is idle.
    """
    from .._compat import has

    if not enabled or not has("torch"):
        yield None
        return
    from .._compat import torch_threads

    want = max(1, int(os.environ.get("NDCGLAB_TORCH_THREADS", "1")))
    with torch_threads(want):
        yield want


def _new_report(
    name: str, title: str, settings: Settings, *, claim: str = "", quick_note: str = ""
) -> Report:
    """An empty report stamped with the run's settings: quick flag (and ``quick_note`` when
    quick), master seed, command line."""
    report = Report(
        name,
        title,
        claim=claim,
        quick=settings.quick,
        seed=settings.seed,
        command=settings.command or None,
    )
    report.seeds["seed"] = settings.seed
    if settings.quick:
        report.quick_note = quick_note
    return report


#: how to point an experiment at real data (shown in every synthetic run's banner)
_REAL_DATA_HOWTO = (
    "To test them on real data, run <code>ndcglab reproduce {name} --data LETOR_DIR --out DIR"
    "</code>, where <code>LETOR_DIR</code> is an unpacked LETOR folder with "
    "<code>Fold1</code>…<code>Fold5</code> (e.g. <code>OHSUMED/QueryLevelNorm</code> from LETOR "
    "3.0 or <code>MQ2008</code> from LETOR 4.0)."
)


def scope_html(name: str, module: ModuleType | None, settings: Settings) -> str:
    """The banner text (HTML) that says which claims this run can test and how to run it on
    real data. A module may define ``SCOPE_SYNTHETIC`` / ``SCOPE_REAL`` to replace the defaults
    (``{name}`` and ``{data}`` are filled in)."""
    data = "" if settings.data is None else html_escape(str(settings.data))
    howto = _REAL_DATA_HOWTO.format(name=html_escape(name))
    if settings.data is None:
        text = getattr(module, "SCOPE_SYNTHETIC", None) or (
            "This run uses the embedded synthetic data (no <code>--data</code>). It tests the "
            "mechanisms and directions the paper claims — which method is better or comparable, "
            "relative to the noise — not the paper's absolute numbers, which were measured on "
            "LETOR data and are printed for reference only. " + howto
        )
    else:
        text = getattr(module, "SCOPE_REAL", None) or (
            "This run uses real data (<code>{data}</code>): the claims about directions, "
            "significance and equivalence are tested on them. The paper's absolute numbers are "
            "comparable only where it used the same dataset and protocol; this page prints them "
            "beside ours where it has them, with the differences in data stated."
        )
    return (
        text.replace("{name}", html_escape(name)).replace("{data}", data).replace("{howto}", howto)
    )


def data_html(datasets: Sequence[Mapping[str, Any]], settings: Settings) -> str:
    """The banner naming the data this run read (HTML): the path given, what was read of it,
    its sizes and feature count, and — only when its sizes match one — the public collection it
    has the sizes of; the folder's name is never taken as evidence. ``""`` without data."""
    e = html_escape
    d = next((x for x in datasets if x.get("source")), None)
    if d is None:
        return ""
    # the normalisation is stated only for data with features (the models are trained on them)
    norm = (
        f"Features of every trained model: {e(normalize_text(settings.normalize))}."
        if d.get("features") is not None
        else ""
    )
    if d.get("kind") == "synthetic":
        hashes = "; ".join(
            f"{e(k.replace('_sha256', '').replace('_', ' '))} <code>{e(str(v)[:16])}…</code>"
            for k, v in (d.get("hashes") or {}).items()
        )
        sizes = ", ".join(
            f"{d[k]} {w}"
            for k, w in (("queries", "queries"), ("docs", "documents"), ("features", "features"))
            if d.get(k) is not None
        )
        return (
            f"<code>{e(str(d['source']))}</code> (generated{', ' + sizes if sizes else ''}); "
            f"sha256 of {hashes or 'its arrays: under “Data” below'}. {norm}"
        ).strip()
    given = settings.data if settings.data is not None else d["source"]
    files = d.get("hashes") or {}
    text = (
        f"<code>{e(str(given))}</code> ({e(str(d.get('description', '')))}); "
        f"{len(files)} file(s) read, each with its sha256 under “Data” below. "
    )
    coll = d.get("collection")
    if coll:
        text += (
            f"The collection ({e(coll['from'])}): {coll['queries']} queries, {coll['docs']} "
            f"documents, {coll['features']} features. "
        )
    n_test = d.get("test_files")
    if d.get("queries") is not None and n_test:
        text += (
            f"The tests use {d['queries']} queries ({d.get('docs')} documents), the test parts "
            f"of {n_test} fold(s)"
            + (
                ": every query of the collection once. "
                if n_test >= 5
                else ", not the whole collection. "
            )
        )
    elif d.get("queries") is not None:
        text += f"It has {d['queries']} queries ({d.get('docs')} documents). "
    match = d.get("sizes_match")
    text += (
        f"Its sizes match {e(match)}'s; the page names it so only by its sizes. "
        if match
        else "Its sizes match no public LETOR collection this tool knows; it is named by its "
        "path only. "
    )
    return text + norm


def build_report(name: str, settings: Settings, log: Callable[[str], None] | None = None) -> Report:
    """Run experiment ``name``; return its filled, time-stamped :class:`Report` (not written)."""
    mod = _module(name)
    report = _new_report(
        name,
        mod.TITLE,
        settings,
        claim=getattr(mod, "CLAIM", ""),
        quick_note=getattr(mod, "QUICK_NOTE", "")
        if settings.mode == "quick"
        else "tiny test mode: minimal data and work; the numbers mean nothing",
    )
    report.scope = scope_html(name, mod, settings)
    report.verdict_note = SUMMARY_HTML
    t0 = time.perf_counter()
    if log:
        log(f"{name}: running ({settings.mode})")
    with _torch_threads(getattr(mod, "USES_TORCH", True)) as threads:
        report.results["torch_threads"] = threads
        mod.run(report, settings)
    report.data_note = data_html(report.datasets, settings)
    report.finish(time.perf_counter() - t0)
    if log:
        log(f"{name}: done in {report.elapsed_s:.1f} s")
    return report


def run_experiment(
    name: str,
    out: str | Path,
    *,
    data: str | Path | None = None,
    quick: bool = False,
    seed: int = 0,
    mode: str | None = None,
    command: Sequence[str] = (),
    log: Callable[[str], None] | None = None,
    normalize: str = "zscore",
) -> tuple[Path, Report]:
    """Run experiment ``name`` (or ``"all"``) and write its report folder to ``out`` atomically.

    ``mode`` overrides ``quick`` (``"full"``, ``"quick"`` or the test-suite's ``"tiny"``);
    ``normalize`` is the feature normalisation of every trained model (``"zscore"``, the
    experiments' own, ``"query_minmax"`` or ``"none"``).
    Returns the folder written and the (top) report. When any experiment fails, nothing is
    written and the error propagates.
    """
    settings = Settings(
        data=None if data is None else Path(data),
        mode=mode or ("quick" if quick else "full"),
        seed=int(seed),
        command=tuple(command),
        log=log,
        normalize=normalize,
    )
    if name == "all":
        t0 = time.perf_counter()
        started = datetime.now(timezone.utc)
        children: list[tuple[str, Report]] = []
        for sub in EXPERIMENTS:
            children.append((sub, build_report(sub, settings, log)))
        index = _new_report(
            "all",
            "ndcglab: every reproduced experiment",
            settings,
            quick_note="every experiment ran with reduced settings (fewer folds, epochs, "
            "repetitions, smaller n); each page states its own.",
        )
        index.started = started  # when the first experiment began, not when the index was made

        index.scope = _index_scope(settings)
        rows = []
        total = dict.fromkeys(VERDICTS, 0)
        for sub, rep in children:
            rep.parent_href = "../index.html"
            counts = verdict_counts(rep.findings)
            for k in VERDICTS:
                total[k] += counts[k]
            rows.append(
                [
                    sub,
                    rep.title,
                    round(rep.elapsed_s or 0.0, 1),
                    *(counts[v] for v in VERDICTS),
                ]
            )
            index.add_link(
                f"{sub}/index.html",
                rep.title,
                f"{rep.elapsed_s:.1f} s; claims: {counts_text(counts)}"
                + (
                    f"; {len(rep.failed_runs)} run(s) failed to train: "
                    + ", ".join(f"{r['method']} under {r['protocol']}" for r in rep.failed_runs)
                    if rep.failed_runs
                    else ""
                ),
            )
            index.timings[sub] = rep.elapsed_s or 0.0
            index.results[sub] = {
                "elapsed_s": rep.elapsed_s,
                "findings": rep.findings,
                "verdict_counts": counts,
                "failed_runs": rep.failed_runs,
                "folder": sub,
            }
            index.datasets.extend(d for d in rep.datasets if d not in index.datasets)
        disagreeing = [
            (sub, f) for sub, rep in children for f in rep.findings if verdict_of(f) == DISAGREES
        ]
        index.add_link(
            "tables/experiments.csv",
            "every experiment as a table",
            f"all experiments: {counts_text(total)} (CSV; also tables/experiments.md and .tex)",
        )
        if disagreeing:
            index.heading(
                "The claim that disagrees" if len(disagreeing) == 1 else "The claims that disagree"
            )
            for sub, f in disagreeing:
                index.text(
                    f"{sub}: “{f['claim']}” — {f.get('reason') or f.get('detail') or ''}".rstrip(
                        " —"
                    )
                )
        index.add_table(
            Table(
                "experiments",
                "Experiments",
                [
                    "experiment",
                    "title",
                    "run time (s)",
                    *VERDICT_COLUMNS,
                ],
                rows,
                digits=1,
                notes=[
                    f"all experiments: {counts_text(total)} (how each verdict is decided: the "
                    "rules listed under each experiment's verdict table; docs/reproduce.md)"
                ],
            ),
            shown=False,  # the page lists the experiments once, as links (above)
        )
        index.finish(time.perf_counter() - t0)
        return write_bundle(out, index, children), index
    report = build_report(name, settings, log)
    return report.write(out), report


def _index_scope(settings: Settings) -> str:
    """The index page's banner: what the whole run can test."""
    if settings.data is None:
        return (
            "Every page below ran without real data: the embedded synthetic data "
            "(<code>cost-sensitive</code>, <code>consistency</code>, <code>qnorm</code>, "
            "<code>linear-ndcg</code>), web-like synthetic lists (<code>distinguishability</code>) "
            "and a simulation of the theorems' model (<code>limits</code>). They test the papers' "
            "mechanisms and directions — identities, limits, which loss or measure is better or "
            "comparable — not the papers' absolute numbers, which were measured on LETOR data. "
            + _REAL_DATA_HOWTO.format(name="all")
        )
    return (
        f"These pages ran on <code>{html_escape(str(settings.data))}</code> (except "
        "<code>limits</code>, which simulates the theorems' model, and "
        "<code>distinguishability</code>, which uses Fold1 only). Directions and significance "
        "are tested on these data; absolute numbers are comparable with a paper only where it "
        "used the same dataset and protocol."
    )
