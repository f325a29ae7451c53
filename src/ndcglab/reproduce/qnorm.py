"""``qnorm``: Ravikumar, Tewari & Yang (AISTATS 2011) Fig. 2 — the normalised q-norm surrogate.

The normalised member of the q-norm family, ``−⟨s/‖s‖_q, u(y)⟩`` with ``u = G(y)/‖G(y)‖_D`` and
``q = ln(m) + 2`` per list of length m (``qnorm(q=auto,form=normalised)`` in
:mod:`ndcglab.losses`), against the original cosine loss and the cross-entropy loss (ListNet).
Same linear model and protocol for all, under three protocols (:mod:`.protocols`: line-search —
the paper's, primary —, tuned-gd and adam), each claim's verdict combined over them; NDCG@1..10 on
the test folds; paired randomisation tests of q-norm against each.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _surrogates as S
from ._common import Settings, source_for
from .protocols import add_verdict_table, convergence_summary, experiment_protocols, fit_record
from .report import Report
from .verdicts import Finding, better_or_comparable, untestable

TITLE = "The normalised q-norm surrogate vs cosine and cross-entropy (Ravikumar et al., Fig. 2)"
CLAIM = (
    "With q = log(m) + 2 the normalised q-norm loss is much better than the cosine loss and even "
    "better than cross-entropy (ListNet) on 3 of 9 LETOR datasets, and comparable on the other 6 "
    "(NDCG@10)."
)
SCOPE_REAL = S.SCOPE_REAL_RAVIKUMAR
QUICK_NOTE = S.QUICK_NOTE_RAVIKUMAR

LOSSES = (
    ("q-norm (q = ln m + 2, normalised)", "qnorm(q=auto,form=normalised)"),
    ("cosine", "cosine"),
    ("cross-entropy (ListNet)", "listnet"),
)


def run(report: Report, settings: Settings) -> None:
    from .._compat import pyplot

    source = source_for(settings)
    protocols = experiment_protocols("qnorm", settings)
    primary = protocols[0]
    stores, preset, fits, failed = S.train_and_check(report, settings, source, LOSSES, protocols)
    names = [n for n, _ in LOSSES]
    qn = names[0]
    per_protocol: dict[str, list[Finding]] = {}
    results: dict[str, Any] = {}
    for i, p in enumerate(protocols):
        store = stores[p.name]
        sfx = "" if i == 0 else f"_{p.slug}"
        sig = S.compare(store, names, qn, settings)
        report.heading(
            f"Results under {p.name}" + (" (primary: the paper's protocol)" if i == 0 else "")
        )
        if i:
            report.begin_details(f"Results and training runs under {p.name} (described above)")
        S.ndcg_table(
            report,
            f"ndcg{sfx}",
            f"q-norm vs cosine vs cross-entropy under {p.name} (baseline: {qn!r})",
            store,
            names,
            sig,
            qn,
            failed[p.name],
            p.name,
        )
        if i == 0:
            S.add_sig_files(report, "qnorm_vs_others", sig)
            _figure(report, store, preset, source.label, names, pyplot(), p.name)
        report.text(convergence_summary(p, fits[p.name]))
        report.add_table(
            S.training_table(fits[p.name], f"training{sfx}", f"Training runs under {p.name}")
        )
        if i:
            report.end_details()
        per_protocol[p.name] = untestable(_claims(store, sig, names), failed[p.name])
        results[p.name] = {
            "protocol": p.to_dict(),
            "mean": {n: {m: store.mean(n, m) for m in S.NDCG_K} for n in names},
            "fold_means": store.fold_means,
            "per_query": {n: {m: store.per_query(n, m) for m in S.NDCG_K} for n in names},
            "significance": sig.to_dict(),
            "training": [fit_record(f, n, fit) for f, n, fit in fits[p.name]],
            "failed": failed[p.name],
        }
    report.add_protocol_findings(per_protocol)
    add_verdict_table(report, per_protocol)
    report.results["primary_protocol"] = primary.name
    report.results["protocols"] = results
    report.results["mean"] = results[primary.name]["mean"]
    report.results["fold_means"] = stores[primary.name].fold_means
    report.results["significance"] = results[primary.name]["significance"]


def _figure(
    report: Report,
    store: Any,
    preset: str,
    label: str,
    names: list[str],
    plt: Any,
    protocol: str = "",
) -> None:
    conv = S.conv_text(store, preset)
    fig, axes = plt.subplots(1, 2, figsize=(11.5, 4.3))
    S.curves(axes[0], store, names, conv, f"{label}, under {protocol}: NDCG@1..10")
    x = np.arange(len(names))
    v10 = [store.mean(n, "ndcg@10") for n in names]
    se10 = [store.sem(n, "ndcg@10") for n in names]
    axes[1].bar(x, v10, yerr=se10, capsize=4, color=["C0", "C1", "C2"])
    axes[1].set_xticks(x)
    axes[1].set_xticklabels(["q-norm", "cosine", "cross-entropy"])
    lo = min(v10) - 3 * max(se10)
    axes[1].set_ylim(max(0.0, lo), min(1.0, max(v10) + 3 * max(se10)))
    axes[1].set_ylabel("NDCG@10")
    axes[1].set_title("NDCG@10 (as the paper's Fig. 2); error bar ±1 s.e.", fontsize="medium")
    fig.tight_layout()
    report.add_figure(
        "qnorm",
        fig,
        title=f"q-norm vs cosine vs cross-entropy (under {protocol})",
        caption=f"every loss trained under {protocol}; "
        "left: NDCG@1..10 with ±1 standard-error bands over test queries; right: "
        "NDCG@10 (the y axis does not start at 0); NDCG@k is "
        f"{conv}",
    )


def _findings(report: Report, store: Any, sig: Any, names: list[str]) -> None:
    """Add the claims of :func:`_claims` (one protocol's results) to ``report``."""
    for f in _claims(store, sig, names):
        report.add_finding(f.claim, f.observed, f.verdict)


def _claims(store: Any, sig: Any, names: list[str]) -> list[Finding]:
    """The two claims of Fig. 2 at NDCG@10, each by the "better or comparable" rule
    (:func:`.verdicts.better_or_comparable`): ``names`` = [q-norm, cosine, cross-entropy],
    ``sig`` the randomisation tests against q-norm (``diff`` = other − q-norm)."""
    out: list[Finding] = []
    qn = names[0]
    q10 = store.per_query(qn, "ndcg@10")
    for other, claim in (
        (names[1], "Fig. 2: the q-norm loss is better than (or comparable to) the cosine loss"),
        (
            names[2],
            "Fig. 2: the q-norm loss is comparable to (sometimes better than) cross-entropy",
        ),
    ):
        t = sig.get(other, "ndcg@10")
        d = q10 - store.per_query(other, "ndcg@10")
        out.append(
            Finding(
                claim + " at NDCG@10",
                f"NDCG@10 q-norm {store.mean(qn, 'ndcg@10'):.4f}, {other} "
                f"{store.mean(other, 'ndcg@10'):.4f} (difference {-t.diff:+.4f} for q-norm, "
                f"Holm-adjusted randomisation p = {t.p_adjusted:.3g})",
                better_or_comparable(d, t.p_adjusted, what=f"q-norm − {other.split(' ')[0]}"),
                (qn, other),
            )
        )
    return out
