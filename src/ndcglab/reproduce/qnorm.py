"""``qnorm``: Ravikumar, Tewari & Yang (AISTATS 2011) Fig. 2 — the normalised q-norm surrogate.

The normalised member of the q-norm family, ``−⟨s/‖s‖_q, u(y)⟩`` with ``u = G(y)/‖G(y)‖_D`` and
``q = ln(m) + 2`` per list of length m (``qnorm(q=auto,form=normalised)`` in
:mod:`ndcglab.losses`), against the original cosine loss and the cross-entropy loss (ListNet).
Same linear model and optimiser (full-batch Adam) for all, no tuning; NDCG@1..10 on the test folds;
paired randomisation tests of q-norm against each.
"""

from __future__ import annotations

import numpy as np

from . import _surrogates as S
from ._common import Settings, source_for, wrap_label
from .report import Report

TITLE = "The normalised q-norm surrogate vs cosine and cross-entropy (Ravikumar et al., Fig. 2)"
CLAIM = (
    "With q = log(m) + 2 the normalised q-norm loss is much better than the cosine loss and even "
    "better than cross-entropy (ListNet) on 3 of 9 LETOR datasets, and comparable on the other 6 "
    "(NDCG@10)."
)
QUICK_NOTE = "--quick: three folds instead of five and 80 epochs (not 300) per loss."

LOSSES = (
    ("q-norm (q = ln m + 2, normalised)", "qnorm(q=auto,form=normalised)"),
    ("cosine", "cosine"),
    ("cross-entropy (ListNet)", "listnet"),
)


def run(report: Report, settings: Settings) -> None:
    from .._compat import pyplot

    source = source_for(settings)
    S.describe_protocol(report, settings, source)
    store, preset, info = S.train_all(report, settings, source, LOSSES)
    names = [n for n, _ in LOSSES]
    qn = names[0]
    sig = S.compare(store, names, qn, settings)
    for m in ("†", "‡"):
        report.add_mark(m, "differs from the q-norm loss: " + sig.legend)
    S.ndcg_table(report, "ndcg", "q-norm vs cosine vs cross-entropy", store, names, sig, qn)
    S.add_sig_files(report, "qnorm_vs_others", sig)

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11.5, 4.3))
    S.curves(axes[0], store, names, S.conv_text(store, preset), f"{source.label}: NDCG@1..10")
    x = np.arange(len(names))
    v10 = [store.mean(n, "ndcg@10") for n in names]
    se10 = [store.sem(n, "ndcg@10") for n in names]
    axes[1].bar(x, v10, yerr=se10, capsize=4, color=["C0", "C1", "C2"])
    axes[1].set_xticks(x)
    axes[1].set_xticklabels(["q-norm", "cosine", "cross-entropy"])
    lo = min(v10) - 3 * max(se10)
    axes[1].set_ylim(max(0.0, lo), min(1.0, max(v10) + 3 * max(se10)))
    axes[1].set_ylabel(
        wrap_label(store.resolved("ndcg@10") + f" [{preset}]", 48), fontsize="x-small"
    )
    axes[1].set_title("NDCG@10 (as the paper's Fig. 2); error bar ±1 s.e.", fontsize="medium")
    fig.tight_layout()
    report.add_figure(
        "qnorm",
        fig,
        title="q-norm vs cosine vs cross-entropy",
        caption="left: NDCG@1..10 with ±1 standard-error bands over test queries; right: NDCG@10",
    )
    report.add_table(S.training_table(info))

    t_cos = sig.get(names[1], "ndcg@10")
    t_ce = sig.get(names[2], "ndcg@10")
    q10 = store.mean(qn, "ndcg@10")
    # diff = other − q-norm
    report.add_finding(
        "Fig. 2: the q-norm loss is better than (or comparable to) the cosine loss at NDCG@10",
        f"NDCG@10 q-norm {q10:.4f}, cosine {v10[1]:.4f} (difference {-t_cos.diff:+.4f} for q-norm, "
        f"Holm-adjusted p = {t_cos.p_adjusted:.3g})",
        bool(t_cos.diff <= 0 or not t_cos.mark),
    )
    report.add_finding(
        "Fig. 2: the q-norm loss is comparable to (sometimes better than) cross-entropy at NDCG@10",
        f"NDCG@10 q-norm {q10:.4f}, cross-entropy {v10[2]:.4f} (difference {-t_ce.diff:+.4f} for "
        f"q-norm, Holm-adjusted p = {t_ce.p_adjusted:.3g})",
        bool(t_ce.diff <= 0 or not t_ce.mark),
    )
    report.results["mean"] = {n: {m: store.mean(n, m) for m in S.NDCG_K} for n in names}
    report.results["fold_means"] = store.fold_means
    report.results["significance"] = sig.to_dict()
