"""``consistency``: Ravikumar, Tewari & Yang (AISTATS 2011) Fig. 1 — original vs NDCG-consistent.

Three surrogate families, each in its original form and in its NDCG-consistent form with the DCG
norm approximated by Z(y)_1, Z(y)_10 and the full Z(y) (``consistent_*(norm=z1|z10|z)`` in
:mod:`ndcglab.losses`): cosine (RankCosine), squared, and cross-entropy (ListNet). Same linear
model and optimiser (full-batch Adam) for all, no tuning; NDCG@1..10 on the test folds; paired
randomisation tests (consistent vs original, Holm-adjusted per cut-off).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _surrogates as S
from ._common import Settings, source_for, subplots
from .report import Report, Table
from .verdicts import AGREES, ALPHA, DISAGREES, threshold
from .verdicts import better as better_rule

TITLE = "NDCG-consistent surrogates vs the originals (Ravikumar et al., AISTATS 2011, Fig. 1)"
CLAIM = (
    "Replacing the gains G(y) by G(y)/‖G(y)‖_D (approximated by Z_1, Z_10 or Z) makes cosine, "
    "squared and ListNet losses NDCG-consistent, and helps in practice: the large changes "
    "(> 3%) are "
    "all improvements (up to ~30% for cross-entropy on HP2003), small degradations occur on a few "
    "datasets."
)
SCOPE_REAL = S.SCOPE_REAL_RAVIKUMAR
QUICK_NOTE = S.QUICK_NOTE_RAVIKUMAR

FAMILIES: dict[str, tuple[str, str]] = {
    # family: (display name, loss spec of the original); consistent = consistent_<family>
    "cosine": ("cosine", "cosine"),
    "squared": ("squared", "squared"),
    "listnet": ("ListNet (cross-entropy)", "listnet"),
}
NORMS = (("Z_1", "z1"), ("Z_10", "z10"), ("Z", "z"))


def losses_of(family: str) -> list[tuple[str, str]]:
    """``(display name, spec)`` of the original and its three consistent versions."""
    orig_name, orig = FAMILIES[family]
    out = [(f"{orig_name}: original", orig)]
    out += [
        (f"{orig_name}: consistent {label}", f"consistent_{family}(norm={norm})")
        for label, norm in NORMS
    ]
    return out


def run(report: Report, settings: Settings) -> None:
    source = source_for(settings)
    S.describe_protocol(report, settings, source)
    all_losses = [pair for fam in FAMILIES for pair in losses_of(fam)]
    store, preset, info = S.train_all(report, settings, source, all_losses)

    sigs = {}
    tests: dict[str, dict[str, Any]] = {}
    summary_rows: list[list[Any]] = []
    for fam in FAMILIES:
        names = [n for n, _ in losses_of(fam)]
        sig = sigs[fam] = S.compare(store, names, names[0], settings)
        tests[fam] = S.mean_k_tests(store, names[1:], names[0])
        base = np.mean([store.mean(names[0], m) for m in S.NDCG_K])
        for n in names[1:]:
            mean = float(np.mean([store.mean(n, m) for m in S.NDCG_K]))
            rel = (mean - base) / base if base > 0 else float("nan")
            better = sum(1 for m in S.NDCG_K if sig.get(n, m).mark and sig.get(n, m).diff > 0)
            worse = sum(1 for m in S.NDCG_K if sig.get(n, m).mark and sig.get(n, m).diff < 0)
            summary_rows.append(
                [fam, n, base, mean, rel * 100, tests[fam][n]["p_adjusted"], better, worse]
            )
        report.results.setdefault("significance", {})[fam] = sig.to_dict()

    conv = S.conv_text(store, preset)
    fig, axes = subplots(len(FAMILIES), ncols=3, size=(5.0, 4.2))
    for ax, fam in zip(axes, FAMILIES):
        S.curves(ax, store, [n for n, _ in losses_of(fam)], conv, FAMILIES[fam][0])
    fig.suptitle(
        f"{source.label}: original vs NDCG-consistent surrogates (band: ±1 s.e. over queries)"
    )
    fig.tight_layout()
    report.add_figure(
        "ndcg_at_k",
        fig,
        title="NDCG@1..10 per loss family",
        caption="one panel per family: the original loss and its consistent versions "
        "with Z_1, Z_10 and Z; band ±1 standard error over test queries; NDCG@k is "
        f"{conv}",
    )
    report.add_table(
        Table(
            "summary",
            "Change of mean NDCG@1..10, consistent vs original",
            [
                "family",
                "consistent loss",
                "original mean N@1..10",
                "consistent mean N@1..10",
                "relative change (%)",
                "p (mean N@1..10, Holm)",
                "k with significant gain",
                "k with significant loss",
            ],
            summary_rows,
            digits=4,
            notes=[
                "p: paired t-test on the per-query mean of NDCG@1..10, consistent vs its own "
                "original, Holm-adjusted over the family's three consistent versions",
                "k with significant gain/loss: paired randomisation test per k against the "
                "family's own original, Holm-adjusted over the three consistent versions, p < 0.05",
            ],
        )
    )
    for fam in FAMILIES:
        names = [n for n, _ in losses_of(fam)]
        report.heading(f"{FAMILIES[fam][0]}")
        S.ndcg_table(
            report,
            f"ndcg_{fam}",
            f"{FAMILIES[fam][0]}: original vs consistent (baseline: {names[0]!r})",
            store,
            names,
            sigs[fam],
            names[0],
        )
        S.add_sig_files(report, f"{fam}_consistent_vs_original", sigs[fam])
    report.add_table(S.training_table(info))
    _findings(report, summary_rows, tests)
    report.results["mean"] = {n: {m: store.mean(n, m) for m in S.NDCG_K} for n, _ in all_losses}
    report.results["fold_means"] = store.fold_means
    report.results["summary"] = [
        dict(
            zip(
                [
                    "family",
                    "loss",
                    "original",
                    "consistent",
                    "relative_change_pct",
                    "p_holm_mean_k",
                    "k_better",
                    "k_worse",
                ],
                r,
            )
        )
        for r in summary_rows
    ]


#: a relative change of the mean NDCG@1..10 larger than this (in %) is "large" (the paper's 3 %)
LARGE_PCT = 3.0


def _findings(
    report: Report, rows: list[list[Any]], tests: dict[str, dict[str, Any]], alpha: float = ALPHA
) -> None:
    """The three claims, each decided by a stated rule (see :mod:`.verdicts`).

    ``rows``: ``[family, loss, original mean, consistent mean, relative change %, Holm p, ...]``;
    ``tests``: :func:`._surrogates.mean_k_tests` per family.
    """
    sig = [r for r in rows if r[5] < alpha]
    big = [r for r in sig if abs(r[4]) > LARGE_PCT]
    changes = ", ".join(
        f"{r[1].split(':')[1].strip()} ({r[0]}) {r[4]:+.1f}% (p = {r[5]:.2g})" for r in rows
    )
    report.add_finding(
        f"§6: the large changes (> {LARGE_PCT:g}% of mean NDCG@1..10) from restoring consistency "
        "are all improvements",
        f"{len(big)} of {len(rows)} consistent variants change significantly by more than "
        f"{LARGE_PCT:g}%"
        + (": " + ", ".join(f"{r[1]} {r[4]:+.1f}%" for r in big) if big else "")
        + "; all changes: "
        + changes,
        threshold(
            bool(big) and all(r[4] > 0 for r in big),
            any(r[4] < 0 for r in big),
            f"a large change is a relative change of the mean NDCG@1..10 of more than "
            f"{LARGE_PCT:g}% that is significant (paired t-test on per-query mean NDCG@1..10, "
            f"Holm over the family's three versions, p < {alpha:g}); agrees if at least one "
            "large change exists and all are improvements; disagrees if any is a degradation; "
            "otherwise (no significant large change) inconclusive",
        ),
    )
    better = [r for r in sig if r[4] > 0]
    worse = [r for r in sig if r[4] < 0]
    report.add_finding(
        "§6 / Table 1 (appendix): consistent versions are mostly better, degradations small "
        "and rare",
        f"significantly better: {len(better)} variants, significantly worse: {len(worse)} ("
        + (", ".join(f"{r[1]} {r[4]:+.1f}%" for r in worse) or "none")
        + ")",
        threshold(
            len(better) > len(worse) and all(abs(r[4]) <= LARGE_PCT for r in worse),
            len(worse) > len(better) or any(r[4] < -LARGE_PCT for r in worse),
            f"significance of the mean NDCG@1..10 change (paired t-test, Holm, p < {alpha:g}); "
            "agrees if more variants are significantly better than significantly worse and "
            f"every significant degradation is within {LARGE_PCT:g}%; disagrees if more are "
            "significantly worse than better or a significant degradation exceeds "
            f"{LARGE_PCT:g}%; otherwise (as many better as worse, or no significant change) "
            "inconclusive",
        ),
    )
    lnet = tests["listnet"]
    parts = [
        better_rule(t["diff"], t["p_adjusted"], alpha=alpha, what=f"{n} − original")
        for n, t in lnet.items()
    ]
    helped = [v for v in parts if v.verdict == AGREES]
    best = max(lnet, key=lambda n: lnet[n]["diff"])
    report.add_finding(
        "Fig. 1(a): restoring consistency helps the cross-entropy (ListNet) surrogate",
        f"best consistent ListNet: {best} (mean NDCG@1..10 {lnet[best]['diff']:+.4f} against "
        f"the original, Holm p = {lnet[best]['p_adjusted']:.3g})",
        threshold(
            bool(helped),
            all(v.verdict == DISAGREES for v in parts),
            f"better (significance and direction): agrees if some consistent ListNet has a "
            f"significantly higher per-query mean NDCG@1..10 than the original (paired t-test, "
            f"Holm over the three, p < {alpha:g}); disagrees if all three are significantly "
            "lower; otherwise inconclusive",
            "; ".join(v.detail for v in parts),
        ),
    )
