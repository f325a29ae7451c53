"""``consistency``: Ravikumar, Tewari & Yang (AISTATS 2011) Fig. 1 — original vs NDCG-consistent.

Three surrogate families, each in its original form and in its NDCG-consistent form with the DCG
norm approximated by Z(y)_1, Z(y)_10 and the full Z(y) (``consistent_*(norm=z1|z10|z)`` in
:mod:`ndcglab.losses`): cosine (RankCosine), squared, and cross-entropy (ListNet). Same linear
model and protocol for all, under three protocols (:mod:`.protocols`: line-search — the paper's,
primary —, tuned-gd and adam), each claim's verdict combined over them; NDCG@1..10 on the test
folds; paired randomisation tests (consistent vs original, Holm-adjusted per cut-off).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _surrogates as S
from ._common import Settings, source_for, subplots
from .protocols import (
    Protocol,
    add_verdict_table,
    convergence_summary,
    experiment_protocols,
    fit_record,
)
from .report import Report, Table
from .verdicts import AGREES, ALPHA, DISAGREES, Finding, threshold, untestable
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
    protocols = experiment_protocols("consistency", settings)
    primary = protocols[0]
    all_losses = [pair for fam in FAMILIES for pair in losses_of(fam)]
    stores, preset, fits, failed = S.train_and_check(
        report, settings, source, all_losses, protocols
    )

    per_protocol: dict[str, list[Finding]] = {}
    results: dict[str, Any] = {}
    for i, p in enumerate(protocols):
        store = stores[p.name]
        sfx = "" if i == 0 else f"_{p.slug}"
        sigs, tests, summary_rows = _analyse(store, settings)
        report.heading(
            f"Results under {p.name}" + (" (primary: the paper's protocol)" if i == 0 else "")
        )
        if i:
            report.begin_details(f"Results and training runs under {p.name} (described above)")
        if i == 0:
            _figure(report, store, preset, source.label, p.name)
        _summary_table(report, summary_rows, p, sfx)
        for fam in FAMILIES:
            names = [n for n, _ in losses_of(fam)]
            S.ndcg_table(
                report,
                f"ndcg_{fam}{sfx}",
                f"{FAMILIES[fam][0]} under {p.name}: original vs consistent "
                f"(baseline: {names[0]!r})",
                store,
                names,
                sigs[fam],
                names[0],
                failed[p.name],
                p.name,
            )
            if i == 0:
                S.add_sig_files(report, f"{fam}_consistent_vs_original", sigs[fam])
        report.text(convergence_summary(p, fits[p.name]))
        report.add_table(
            S.training_table(fits[p.name], f"training{sfx}", f"Training runs under {p.name}")
        )
        if i:
            report.end_details()
        per_protocol[p.name] = untestable(_claims(summary_rows, tests), failed[p.name])
        results[p.name] = {
            "protocol": p.to_dict(),
            "mean": {n: {m: store.mean(n, m) for m in S.NDCG_K} for n, _ in all_losses},
            "fold_means": store.fold_means,
            "per_query": {n: {m: store.per_query(n, m) for m in S.NDCG_K} for n, _ in all_losses},
            "significance": {fam: sig.to_dict() for fam, sig in sigs.items()},
            "summary": _summary_dicts(summary_rows),
            "power": _power_rows(store),
            "training": [fit_record(f, n, fit) for f, n, fit in fits[p.name]],
            "failed": failed[p.name],
        }
    report.add_protocol_findings(per_protocol)
    add_verdict_table(report, per_protocol)
    report.heading("Variance and power")
    _power_section(report, stores[primary.name], primary.name)

    store = stores[primary.name]
    report.results["primary_protocol"] = primary.name
    report.results["protocols"] = results
    report.results["significance"] = results[primary.name]["significance"]
    report.results["mean"] = results[primary.name]["mean"]
    report.results["fold_means"] = store.fold_means
    report.results["summary"] = results[primary.name]["summary"]


def _analyse(
    store: Any, settings: Settings
) -> tuple[dict[str, Any], dict[str, dict[str, Any]], list[list[Any]]]:
    """Randomisation tests per k, t-tests on the mean of N@1..10 and the summary rows of one
    protocol's results."""
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
    return sigs, tests, summary_rows


def _summary_dicts(rows: list[list[Any]]) -> list[dict[str, Any]]:
    keys = [
        "family",
        "loss",
        "original",
        "consistent",
        "relative_change_pct",
        "p_holm_mean_k",
        "k_better",
        "k_worse",
    ]
    return [dict(zip(keys, r)) for r in rows]


def _figure(report: Report, store: Any, preset: str, label: str, protocol: str = "") -> None:
    conv = S.conv_text(store, preset)
    fig, axes = subplots(len(FAMILIES), ncols=3, size=(5.0, 4.2))
    for ax, fam in zip(axes, FAMILIES):
        names = [n for n, _ in losses_of(fam)]
        S.curves(
            ax,
            store,
            names,
            conv,
            FAMILIES[fam][0],
            [n.split(": ", 1)[-1] for n in names],
            legend=False,
        )
    # one legend for the three panels (the same four versions in the same colours), below them
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize="medium", frameon=False)
    fig.suptitle(
        f"{label}, trained under {protocol}: original vs NDCG-consistent surrogates "
        "(band: ±1 s.e. over queries)"
    )
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    report.add_figure(
        "ndcg_at_k",
        fig,
        title=f"NDCG@1..10 per loss family (under {protocol})",
        caption=f"every loss trained under {protocol}; "
        "one panel per family: the original loss and its consistent versions "
        "with Z_1, Z_10 and Z; band ±1 standard error over test queries; NDCG@k is "
        f"{conv}",
    )


def _summary_table(report: Report, rows: list[list[Any]], p: Protocol, sfx: str) -> None:
    report.add_table(
        Table(
            f"summary{sfx}",
            f"Change of mean NDCG@1..10, consistent vs original, under {p.name}",
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
            rows,
            digits=4,
            notes=[
                "p: paired t-test on the per-query mean of NDCG@1..10, consistent vs its own "
                "original, Holm-adjusted over the family's three consistent versions",
                "k with significant gain/loss: paired randomisation test per k against the "
                "family's own original, Holm-adjusted over the three consistent versions, p < 0.05",
            ],
        )
    )


def _power_rows(store: Any) -> list[dict[str, Any]]:
    """Per consistent variant: the mean NDCG@1..10 difference to its original with its 95% CI,
    and the queries needed to detect a change of the paper's "large" size (3% of the
    original's mean)."""
    from ..analysis.power import paired_power

    out = []
    for fam in FAMILIES:
        names = [n for n, _ in losses_of(fam)]
        base = S.mean_over_k(store, names[0])
        delta = LARGE_PCT / 100 * float(np.nanmean(base))
        for n in names[1:]:
            pw = paired_power(S.mean_over_k(store, n) - base, delta)
            out.append(
                {
                    "family": fam,
                    "loss": n,
                    "diff": pw.mean,
                    "ci95": [pw.ci_low, pw.ci_high],
                    "sd": pw.sd,
                    "n": pw.n,
                    "delta": delta,
                    "n_needed": pw.n_needed,
                    "n_needed_normal": pw.n_needed_normal,
                    "min_detectable": pw.min_detectable,
                }
            )
    return out


def _power_section(report: Report, store: Any, protocol: str) -> None:
    rows_d = _power_rows(store)
    n = rows_d[0]["n"] if rows_d else 0
    rows = [
        [
            r["loss"],
            r["diff"],
            f"[{r['ci95'][0]:+.4f}, {r['ci95'][1]:+.4f}]",
            r["sd"],
            r["delta"],
            "—" if r["n_needed"] is None else r["n_needed"],
            "—" if r["n_needed"] is None else ("yes" if n >= r["n_needed"] else "no"),
        ]
        for r in rows_d
    ]
    ok = [r["loss"] for r in rows_d if r["n_needed"] is not None and n >= r["n_needed"]]
    md = [r["min_detectable"] for r in rows_d if np.isfinite(r["min_detectable"])]
    report.text(
        f"How much this data can tell. There are {n} test queries. The paper reports relative "
        f"changes in plots; the smallest change it calls large is {LARGE_PCT:g}% of the "
        "original's mean NDCG@1..10, used here as the difference δ to detect. For each "
        f"consistent variant (under {protocol}) the table gives the mean per-query difference "
        "of mean NDCG@1..10 to its original with its 95% confidence interval (Student t), the "
        "per-query standard deviation, and the queries a paired t-test (two-sided, α = 0.05, "
        "power 0.8) needs to detect δ at that standard deviation (exact noncentral t; normal "
        "approximation n = ((z_0.975 + z_0.8)·sd/δ)², ndcglab.analysis.power). "
        + (
            f"With {n} queries, differences of about {min(md):.4f}–{max(md):.4f} are detectable. "
            if md
            else ""
        )
        + f"A {LARGE_PCT:g}% change is detectable here for {len(ok)} of {len(rows_d)} variants"
        + (f" ({', '.join(ok)})" if 0 < len(ok) < len(rows_d) else "")
        + '; smaller changes — the paper\'s "small degradations" — mostly are not.'
    )
    report.add_table(
        Table(
            "power",
            f"Consistent vs original: 95% CI and queries needed to detect a {LARGE_PCT:g}% change "
            f"(under {protocol})",
            [
                "consistent loss",
                "difference of mean N@1..10",
                "95% CI",
                "sd per query",
                f"δ ({LARGE_PCT:g}% of the original)",
                "queries to detect δ",
                f"detectable with {n}?",
            ],
            rows,
            digits=4,
            notes=[
                "queries to detect δ: paired t-test, two-sided α = 0.05, power 0.8, at the "
                "per-query sd of our differences (exact noncentral t)",
            ],
        )
    )


#: a relative change of the mean NDCG@1..10 larger than this (in %) is "large" (the paper's 3 %)
LARGE_PCT = 3.0


def _findings(
    report: Report, rows: list[list[Any]], tests: dict[str, dict[str, Any]], alpha: float = ALPHA
) -> None:
    """Add the claims of :func:`_claims` (one protocol's results) to ``report``."""
    for f in _claims(rows, tests, alpha):
        report.add_finding(f.claim, f.observed, f.verdict)


def _claims(
    rows: list[list[Any]], tests: dict[str, dict[str, Any]], alpha: float = ALPHA
) -> list[Finding]:
    """The three claims, each decided by a stated rule (see :mod:`.verdicts`).

    ``rows``: ``[family, loss, original mean, consistent mean, relative change %, Holm p, ...]``;
    ``tests``: :func:`._surrogates.mean_k_tests` per family.
    """
    out: list[Finding] = []
    every = tuple(n for fam in FAMILIES for n, _ in losses_of(fam))
    sig = [r for r in rows if r[5] < alpha]
    big = [r for r in sig if abs(r[4]) > LARGE_PCT]
    changes = ", ".join(
        f"{r[1].split(':')[1].strip()} ({r[0]}) {r[4]:+.1f}% (p = {r[5]:.2g})" for r in rows
    )
    out.append(
        Finding(
            f"§6: the large changes (> {LARGE_PCT:g}% of mean NDCG@1..10) from restoring "
            "consistency are all improvements",
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
            every,
        )
    )
    better = [r for r in sig if r[4] > 0]
    worse = [r for r in sig if r[4] < 0]
    out.append(
        Finding(
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
            every,
        )
    )
    lnet = tests["listnet"]
    parts = [
        better_rule(t["diff"], t["p_adjusted"], alpha=alpha, what=f"{n} − original")
        for n, t in lnet.items()
    ]
    helped = [v for v in parts if v.verdict == AGREES]
    best = max(lnet, key=lambda n: lnet[n]["diff"])
    out.append(
        Finding(
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
            tuple(n for n, _ in losses_of("listnet")),
        )
    )
    return out
