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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from ..errors import NdcglabError
from ._common import Settings
from .report import Report, Table, write_bundle

__all__ = ["EXPERIMENTS", "Settings", "build_report", "run_experiment"]

#: experiment name -> module in ndcglab.reproduce (imported lazily)
EXPERIMENTS: dict[str, str] = {
    "cost-sensitive": "cost_sensitive",
    "consistency": "consistency",
    "qnorm": "qnorm",
    "distinguishability": "distinguishability",
    "limits": "limits",
    "linear-ndcg": "linear_ndcg",
}

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
    from .._compat import torch

    th = torch()
    before = th.get_num_threads()
    want = int(os.environ.get("NDCGLAB_TORCH_THREADS", "1"))
    th.set_num_threads(max(1, want))
    try:
        yield max(1, want)
    finally:
        th.set_num_threads(before)


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
    t0 = time.perf_counter()
    if log:
        log(f"{name}: running ({settings.mode})")
    with _torch_threads(getattr(mod, "USES_TORCH", True)) as threads:
        report.results["torch_threads"] = threads
        mod.run(report, settings)
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
) -> tuple[Path, Report]:
    """Run experiment ``name`` (or ``"all"``) and write its report folder to ``out`` atomically.

    ``mode`` overrides ``quick`` (``"full"``, ``"quick"`` or the test-suite's ``"tiny"``).
    Returns the folder written and the (top) report. When any experiment fails, nothing is
    written and the error propagates.
    """
    settings = Settings(
        data=None if data is None else Path(data),
        mode=mode or ("quick" if quick else "full"),
        seed=int(seed),
        command=tuple(command),
        log=log,
    )
    if name == "all":
        t0 = time.perf_counter()
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

        rows = []
        for sub, rep in children:
            verdicts = [f["agrees"] for f in rep.findings]
            agree = sum(v is True for v in verdicts)
            disagree = sum(v is False for v in verdicts)
            rows.append(
                [
                    sub,
                    rep.title,
                    round(rep.elapsed_s or 0.0, 1),
                    agree,
                    disagree,
                    len(verdicts) - agree - disagree,
                ]
            )
            index.add_link(
                f"{sub}/index.html",
                rep.title,
                f"{rep.elapsed_s:.1f} s; claims: {agree} agree, {disagree} disagree",
            )
            index.timings[sub] = rep.elapsed_s or 0.0
            index.results[sub] = {
                "elapsed_s": rep.elapsed_s,
                "findings": rep.findings,
                "folder": sub,
            }
            index.datasets.extend(d for d in rep.datasets if d not in index.datasets)
        index.add_table(
            Table(
                "experiments",
                "Experiments",
                [
                    "experiment",
                    "title",
                    "run time (s)",
                    "claims agreeing",
                    "disagreeing",
                    "inconclusive",
                ],
                rows,
                digits=1,
            )
        )
        index.finish(time.perf_counter() - t0)
        return write_bundle(out, index, children), index
    report = build_report(name, settings, log)
    return report.write(out), report
