"""``linear-ndcg``: Jin & Geng (ECML/PKDD Discovery Challenge 2010) — DCG^β_ideal − DCG^β_f = R(f).

For every query of a dataset and the scores of a trained model, the DCG error of the linear
discount (``DCG^β = Σ_i y_(i) (n − i)``) is compared with the label-gap-weighted pairwise loss
``R(f) = Σ_{a<b} Σ_{i∈S_b, j∈S_a} (b − a) I[f(x_i) < f(x_j)]``, both from
:mod:`ndcglab.measures.linear_ndcg` (``ideal_linear_dcg``, ``linear_dcg``, ``pairwise_loss``).

Scores: a quick linear ListNet model trained on each fold's training part scores that fold's test
part (five folds: every query is tested once; two with ``--quick``); with a single file, the
model is trained and applied on it. Labels are integers and the discount n − i is an integer, so
both sides are integers far below 2^53 and float64 holds them exactly: the identity must hold
with a gap of exactly 0.
Ties in scores need one rule on both sides (the module's ``ties``): checked with the file order
(``input``) and, for scores rounded to one decimal (many ties), also with ``average`` (tied pairs
count half on both sides; the group averages make the values non-integers, so a float tolerance
is stated).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data.dataset import boundaries_from_group
from ._common import Settings, source_for, timed
from ._fit import fit_scores
from .report import Report, Table
from .verdicts import threshold

TITLE = "Linear NDCG and the pairwise loss: DCG^β_ideal − DCG^β_f = R(f) (Jin & Geng, 2010)"
CLAIM = (
    "For NDCG^β (discount n − i), the DCG error of any ranking equals the pairwise loss R(f) that "
    "charges every mis-ordered pair its label gap (Theorem 3; Theorem 2 for two levels, with ideal "
    "DCG^β = m·n + m(m−1)/2)."
)
QUICK_NOTE = "--quick: two folds (their test parts) instead of five, ListNet trained for 30 epochs."

SCOPE_SYNTHETIC = (
    "The identity is exact for any labels and scores, so the embedded synthetic data test it "
    "completely (the numbers are exact integers, not estimates). To check it on real LETOR "
    "queries as well, run <code>ndcglab reproduce linear-ndcg --data LETOR_DIR --out DIR</code> "
    "with a LETOR folder (<code>Fold1</code>…<code>Fold5</code>, e.g. <code>MQ2008</code>)."
)

#: float tolerance of the ``average`` tie rule (group means are not exact binary fractions)
AVERAGE_TOL = 1e-9


def _check(
    labels: np.ndarray, scores: np.ndarray, boundaries: np.ndarray, ties: str
) -> dict[str, Any]:
    from ..measures.linear_ndcg import ideal_linear_dcg, linear_dcg, pairwise_loss

    ideal = ideal_linear_dcg(labels, boundaries)
    dcg = linear_dcg(labels, scores, boundaries, ties=ties)
    r = pairwise_loss(labels, scores, boundaries, ties=ties)
    gap = (ideal - dcg) - r
    return {"ideal": ideal, "dcg": dcg, "R": r, "gap": gap}


def run(report: Report, settings: Settings) -> None:
    from .._compat import pyplot

    source = source_for(settings)
    n_folds = settings.pick(5, 2, 1)
    epochs = settings.pick(100, 30, 3)
    parts: list[dict[str, Any]] = []
    for fold in source.folds(n_folds, with_vali=False):
        settings.say(f"linear-ndcg: {fold.name}: training ListNet")
        with timed(report.timings, "training"):
            fit = fit_scores(
                "listnet",
                fold.train,
                {"test": fold.test},
                epochs=epochs,
                seed=settings.seed,
                preset="letor3",
                normalize=settings.normalize,
            )
        test = fold.test
        parts.append(
            {
                "fold": fold.name,
                "labels": test.labels,
                "scores": fit.scores["test"],
                "boundaries": test.boundaries,
                "query_ids": test.query_ids,
                "epochs": fit.epochs_run,
            }
        )
    report.add_dataset(source.describe())
    labels = np.concatenate([p["labels"] for p in parts])
    scores = np.concatenate([p["scores"] for p in parts])
    lengths = np.concatenate([np.diff(p["boundaries"]) for p in parts])
    bnd = boundaries_from_group(lengths)
    integer_labels = bool(np.all(labels == np.round(labels)))

    rounded = np.round(scores, 1)
    with timed(report.timings, "identity"):
        checks = {
            ("trained ListNet scores", "input"): _check(labels, scores, bnd, "input"),
            ("scores rounded to 0.1 (many ties)", "input"): _check(labels, rounded, bnd, "input"),
            ("scores rounded to 0.1 (many ties)", "average"): _check(
                labels, rounded, bnd, "average"
            ),
        }
    rows = []
    for (what, ties), c in checks.items():
        gap = np.abs(c["gap"])
        tol = 0.0 if ties != "average" else AVERAGE_TOL * max(1.0, float(np.max(c["ideal"])))
        tied = _tied_pairs_share(rounded if "rounded" in what else scores, bnd)
        rows.append(
            [
                what,
                ties,
                len(c["R"]),
                int(np.sum(c["R"] > 0)),
                _num(float(np.max(c["R"]))),
                float(np.mean(c["R"])),
                float(np.max(gap)),
                tol,
                bool(np.max(gap) <= tol),
                tied,
            ]
        )
    report.add_table(
        Table(
            "identity",
            "DCG^β_ideal − DCG^β_f vs R(f), every test query",
            [
                "scores",
                "ties rule",
                "queries",
                "queries with R > 0",
                "largest R",
                "mean R",
                "largest |gap|",
                "tolerance",
                "identity holds",
                "share of tied pairs",
            ],
            rows,
            digits=6,
            caption="gap = (DCG^β_ideal − DCG^β_f) − R(f) per query",
            notes=[
                "labels are integers: "
                + ("yes" if integer_labels else "no — float labels, tolerance applies"),
                "with integer labels both sides are integers < 2^53 (exact in float64), so the "
                "tolerance is 0; the average rule divides by group sizes, hence its tolerance "
                f"{AVERAGE_TOL:g} × the largest ideal DCG^β",
            ],
        )
    )

    # bipartite queries: the paper's closed form of the ideal DCG^β
    bip = []
    main = checks[("trained ListNet scores", "input")]
    for q in range(len(lengths)):
        y = labels[bnd[q] : bnd[q + 1]]
        vals = set(np.unique(y).tolist())
        if len(vals) == 2 and vals <= {0.0, 1.0}:
            m_pos, n_neg = int(np.sum(y == 1)), int(np.sum(y == 0))
            bip.append(abs(main["ideal"][q] - (m_pos * n_neg + m_pos * (m_pos - 1) / 2)))
    report.add_table(
        Table(
            "bipartite",
            "Theorem 2's ideal DCG^β = m·n + m(m−1)/2 on the two-level queries",
            ["two-level queries (labels 0/1 only)", "largest |ideal − m·n − m(m−1)/2|"],
            [[len(bip), float(max(bip)) if bip else None]],
        )
    )

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11.5, 4.2))
    r = main["R"]
    axes[0].hist(r, bins=min(40, max(5, int(np.sqrt(len(r))) * 2)), color="C0")
    axes[0].set_xlabel("R(f) = Σ_{a<b} (b − a) · #mis-ordered pairs (ties: input order)")
    axes[0].set_ylabel("number of queries")
    axes[0].set_title(
        f"{source.label}: R(f) of the trained ListNet, {len(r)} test queries", fontsize="medium"
    )
    err = main["ideal"] - main["dcg"]
    axes[1].plot(r, err, "o", ms=3, alpha=0.6, label="queries")
    hi = float(max(np.max(r), np.max(err), 1.0))
    axes[1].plot([0, hi], [0, hi], "k--", lw=1, label="identity y = x")
    axes[1].set_xlabel("R(f)")
    axes[1].set_ylabel("DCG^β_ideal − DCG^β_f")
    axes[1].set_title("every test query lies on the diagonal", fontsize="medium")
    axes[1].legend(fontsize="small")
    fig.tight_layout()
    report.add_figure(
        "pairwise_loss",
        fig,
        title="R(f) per query and the identity",
        caption="left: histogram of R(f); right: DCG error against R(f), one point per query; "
        "DCG^β: gain y (linear), discount n − i, ties in input order",
    )

    from ..measures import parse_measure

    m = parse_measure("ndcg_beta")
    report.add_convention("ndcg_beta (DCG^β side)", {**m.convention(), "ties": "input / average"})
    worst = float(np.max(np.abs(main["gap"])))
    report.add_finding(
        "Theorem 3: DCG^β_ideal − DCG^β_f = R(f) on every query (ties in file order)",
        f"{len(r)} queries, largest |gap| = {worst:g} (exact integer arithmetic; largest R(f) = "
        f"{float(np.max(r)):g})",
        threshold(
            worst == 0.0,
            worst > 0.0,
            "exact identity: agrees if the largest |gap| over all queries is 0 (integer labels "
            "and discounts: both sides are integers, exact in float64); disagrees otherwise",
        ),
    )
    avg = checks[("scores rounded to 0.1 (many ties)", "average")]
    worst_avg = float(np.max(np.abs(avg["gap"])))
    worst_tied = float(
        np.max(np.abs(checks[("scores rounded to 0.1 (many ties)", "input")]["gap"]))
    )
    tol = AVERAGE_TOL * max(1.0, float(np.max(avg["ideal"])))
    report.add_finding(
        "The identity also holds with ties when both sides use the same tie rule",
        f"scores rounded to 0.1: largest |gap| {worst_tied:g} (input order), {worst_avg:.3g} "
        f"(average, tolerance {tol:.3g})",
        threshold(
            worst_avg <= tol and worst_tied == 0.0,
            not (worst_avg <= tol and worst_tied == 0.0),
            "agrees if the largest |gap| is 0 with ties in input order and at most "
            f"{AVERAGE_TOL:g} × the largest ideal DCG^β with the average rule; disagrees "
            "otherwise",
        ),
    )
    if bip:
        report.add_finding(
            "Theorem 2 (bipartite): ideal DCG^β = m·n + m(m−1)/2",
            f"{len(bip)} two-level queries, largest deviation {max(bip):g}",
            threshold(
                max(bip) == 0.0,
                max(bip) > 0.0,
                "exact identity: agrees if the largest deviation is 0; disagrees otherwise",
            ),
        )
    report.results["queries"] = len(r)
    report.results["largest_gap"] = {
        f"{w} / {t}": float(np.max(np.abs(c["gap"]))) for (w, t), c in checks.items()
    }
    report.results["per_query"] = {
        "query_ids": np.concatenate([p["query_ids"] for p in parts]).tolist(),
        "fold": [p["fold"] for p in parts for _ in range(len(p["boundaries"]) - 1)],
        "R": main["R"],
        "ideal": main["ideal"],
        "dcg": main["dcg"],
        "gap": main["gap"],
    }
    report.results["training"] = {
        "loss": "listnet",
        "epochs": epochs,
        "epochs_run": [p["epochs"] for p in parts],
    }


def _num(x: float) -> int | float:
    """An integral value as an int (prints without decimals)."""
    return int(x) if float(x).is_integer() else x


def _tied_pairs_share(scores: np.ndarray, bnd: np.ndarray) -> float:
    """Share of within-query document pairs with equal scores (how many ties were tested)."""
    tied = total = 0
    for q in range(len(bnd) - 1):
        s = scores[bnd[q] : bnd[q + 1]]
        n = len(s)
        total += n * (n - 1) // 2
        _, counts = np.unique(s, return_counts=True)
        tied += int(np.sum(counts * (counts - 1) // 2))
    return tied / total if total else 0.0
