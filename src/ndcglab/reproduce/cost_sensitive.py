"""``cost-sensitive``: Lu et al. (PAKDD 2010) Tables 1–6 — CS-ListMLE@k vs ListMLE and baselines.

Protocol (Lu et al. §5): a linear model f(x) = <w, x> for every method, trained on each fold's
training part, the epoch (or AdaRank round) kept by NDCG@10 on the validation part, tested on the
test part; five folds, so every query is tested once. Methods: ListMLE, CS-ListMLE@1/3/5/10,
ListNet, RankCosine, AdaRank and Ranking SVM (:mod:`ndcglab.losses`; AdaRank by
:mod:`ndcglab.models.adarank`). Measures N@1, N@3, N@5, N@10 and MAP under the ``letor3``
preset (the official Eval-Score-3.0.pl conventions). Paired t-test on the per-query N@1 of every
method against ListMLE, and of CS-ListMLE@1 against ListNet, RankCosine, AdaRank and RankSVM (the
paper's §5.2 test), with :mod:`ndcglab.analysis.significance`.

The published numbers (Tables 1–6) are kept in :data:`PAPER` and printed beside ours. They are for
LETOR **2.0** OHSUMED/TD2003/TD2004; our OHSUMED is LETOR 3.0 (QueryLevelNorm, 45 features
instead of 25; same 106 queries and judgements), so equal numbers are not expected — the claims
compared are the orderings and significance statements.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._common import Settings, source_for, subplots
from ._fit import PerQueryStore, fit_on_fold
from .report import Cell, Report, Table
from .verdicts import ALPHA, all_of, better, comparable, within

TITLE = "Cost-sensitive ListMLE vs ListMLE and baselines (Lu et al., PAKDD 2010, Tables 1–6)"
CLAIM = (
    "CS-ListMLE and ListMLE perform comparably on OHSUMED (Table 1); CS-ListMLE@1 reaches a higher "
    "NDCG@1 than ListNet, RankCosine, AdaRank and Ranking SVM (Table 4), significantly so over "
    "Ranking SVM and AdaRank (paired t-test, p < 0.05), with comparable MAP."
)
QUICK_NOTE = (
    "--quick: three folds instead of five, at most 80 gradient-descent epochs (AdaRank 20 "
    "rounds); fewer test queries, so tests have less power."
)

MEASURES = ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map")
CURVE = tuple(f"ndcg@{k}" for k in range(1, 11))
SHORT = {"ndcg@1": "N@1", "ndcg@3": "N@3", "ndcg@5": "N@5", "ndcg@10": "N@10", "map": "MAP"}

#: (name printed in the tables, loss spec in ndcglab.losses)
METHODS: tuple[tuple[str, str], ...] = (
    ("ListMLE", "listmle"),
    ("CS-ListMLE@1", "cs_listmle@1"),
    ("CS-ListMLE@3", "cs_listmle@3"),
    ("CS-ListMLE@5", "cs_listmle@5"),
    ("CS-ListMLE@10", "cs_listmle@10"),
    ("ListNet", "listnet"),
    ("RankCosine", "cosine"),
    ("AdaRank", "adarank(measure=ndcg)@10"),
    ("RankSVM", "ranksvm"),
)
BASELINES_52 = ("ListNet", "RankCosine", "AdaRank", "RankSVM")
_TABLES = {"OHSUMED": "1 and 4", "TD2003": "2 and 5", "TD2004": "3 and 6"}

# Published numbers, transcribed from Lu et al. (PAKDD 2010), LETOR 2.0. None = "—" in the paper
# (ListMLE and RankCosine were copied from Xia et al. 2009, which gives neither N@5 nor MAP).
# Columns: N@1, N@3, N@5, N@10, MAP.
_C = ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map")


def _row(*v: float | None) -> dict[str, float | None]:
    return dict(zip(_C, v))


PAPER: dict[str, dict[str, dict[str, float | None]]] = {
    "OHSUMED": {
        # Table 1 (ListMLE vs CS-ListMLE on OHSUMED)
        "ListMLE": _row(0.548, 0.473, None, 0.446, None),
        "CS-ListMLE@1": _row(0.555, 0.482, 0.464, 0.446, 0.442),
        "CS-ListMLE@3": _row(0.539, 0.480, 0.458, 0.446, 0.444),
        "CS-ListMLE@5": _row(0.548, 0.468, 0.453, 0.438, 0.443),
        "CS-ListMLE@10": _row(0.536, 0.471, 0.452, 0.439, 0.443),
        # Table 4 (test results on OHSUMED; its CS-ListMLE@1 row repeats Table 1's)
        "ListNet": _row(0.523, 0.478, 0.466, 0.449, 0.450),
        "RankCosine": _row(0.523, 0.475, None, 0.437, None),
        "AdaRank": _row(0.514, 0.462, 0.442, 0.437, 0.442),
        "RankSVM": _row(0.495, 0.465, 0.458, 0.441, 0.447),
    },
    "TD2003": {
        # Table 2
        "ListMLE": _row(0.24, 0.253, None, 0.261, None),
        "CS-ListMLE@1": _row(0.48, 0.400, 0.362, 0.359, 0.262),
        "CS-ListMLE@3": _row(0.48, 0.400, 0.364, 0.358, 0.253),
        "CS-ListMLE@5": _row(0.48, 0.391, 0.358, 0.355, 0.264),
        "CS-ListMLE@10": _row(0.48, 0.398, 0.362, 0.350, 0.262),
        # Table 5
        "ListNet": _row(0.46, 0.408, 0.382, 0.374, 0.273),
        "RankCosine": _row(0.36, 0.346, None, 0.322, None),
        "AdaRank": _row(0.42, 0.291, 0.242, 0.194, 0.137),
        "RankSVM": _row(0.42, 0.379, 0.347, 0.341, 0.256),
    },
    "TD2004": {
        # Table 3
        "ListMLE": _row(0.4, 0.351, None, 0.356, None),
        "CS-ListMLE@1": _row(0.467, 0.427, 0.422, 0.444, 0.364),
        "CS-ListMLE@3": _row(0.467, 0.429, 0.419, 0.449, 0.366),
        "CS-ListMLE@5": _row(0.467, 0.420, 0.407, 0.444, 0.366),
        "CS-ListMLE@10": _row(0.453, 0.409, 0.406, 0.445, 0.364),
        # Table 6
        "ListNet": _row(0.440, 0.437, 0.420, 0.458, 0.372),
        "RankCosine": _row(0.439, 0.397, None, 0.405, None),
        "AdaRank": _row(0.413, 0.402, 0.393, 0.406, 0.331),
        "RankSVM": _row(0.44, 0.410, 0.393, 0.420, 0.350),
    },
}


def run(report: Report, settings: Settings) -> None:
    from ..analysis.significance import compare_rankers

    source = source_for(settings)
    preset = "letor3"
    n_folds = settings.pick(5, 3, 1)
    epochs = settings.pick(300, 80, 4)
    rounds = settings.pick(100, 20, 3)
    report.seeds["training"] = settings.seed
    all_measures = tuple(dict.fromkeys(CURVE + MEASURES))
    store = PerQueryStore(all_measures)
    train_info: list[list[Any]] = []

    report.text(
        f"Data: {source.label}. Every method is a linear model trained by full-batch gradient "
        "descent (learning rate 0.1, divided by 10 only if the loss diverges; z-score features "
        f"from the training part, at most {epochs} "
        "epochs or until the loss changes by less than 1e-6); the epoch with the best NDCG@10 on "
        "the validation part is kept (AdaRank: boosting over single features, "
        f"{rounds} rounds, best round on validation). Test measures use the letor3 preset "
        "(Eval-Score-3.0.pl: gain {0:0, 1:1, 2:3}, discount 1/max(1, log2 r), ties in file order, "
        "NDCG@k of a list shorter than k counts 0)."
    )
    if source.kind == "letor-file":
        report.text(source.single_file_note())

    for fold in source.folds(n_folds):
        for name, loss in METHODS:
            fit = fit_on_fold(
                report,
                settings,
                store,
                fold,
                name,
                loss,
                preset=preset,
                validation=fold.vali,
                epochs=epochs,
                validation_measure="ndcg@10",
                rounds=rounds,
            )
            train_info.append(
                [
                    fold.name,
                    name,
                    fit.loss_name,
                    fit.lr,
                    fit.epochs_run,
                    fit.best_epoch,
                    fit.stop_reason,
                    fit.best_score,
                    round(fit.seconds, 2),
                ]
            )
    report.add_dataset(source.describe())
    report.add_conventions(store.conventions)

    # ------------------------------------------------------------------ significance
    sig_all = compare_rankers(
        store.as_mapping([m for m, _ in METHODS]),
        baseline="ListMLE",
        test="t",
        measures=["ndcg@1"],
        correction="holm",
        seed=settings.seed,
    )
    sig_52 = compare_rankers(
        store.as_mapping(["CS-ListMLE@1", *BASELINES_52]),
        baseline="CS-ListMLE@1",
        test="t",
        measures=["ndcg@1"],
        correction="none",
        seed=settings.seed,
    )

    # ------------------------------------------------------------------ our table
    n_q = store.per_query("ListMLE", "ndcg@1").size
    rows = []
    for name, _ in METHODS:
        row: list[Any] = [name]
        for m in MEASURES:
            mark = "" if name == "ListMLE" or m != "ndcg@1" else sig_all.mark(name, m)
            t = sig_all.get(name, m) if m == "ndcg@1" and name != "ListMLE" else None
            row.append(
                Cell(
                    store.mean(name, m),
                    store.fold_std(name, m),
                    mark,
                    None if t is None else t.p_adjusted,
                )
            )
        rows.append(row)
    report.heading("Our results")
    report.add_table(
        Table(
            "results",
            f"Test results on {source.label} ({n_q} test queries, {n_folds} fold(s))",
            ["method", *[SHORT[m] for m in MEASURES]],
            rows,
            caption="mean over all test queries; ± standard deviation of the fold means",
            digits=3,
            legend="Marks on N@1 only (per-query NDCG@1, Holm over the eight comparisons): "
            + sig_all.legend,
        )
    )

    # ------------------------------------------------------------------ beside the paper
    paper_key = _paper_dataset(source.label)
    paper = PAPER[paper_key or "OHSUMED"]
    _plots(report, store, paper if paper_key else None, source.label)
    cols = ["method"]
    for m in MEASURES:
        cols += [f"{SHORT[m]} ours", f"{SHORT[m]} paper"]
    rows = []
    for name, _ in METHODS:
        row = [name]
        for m in MEASURES:
            row += [store.mean(name, m), paper[name][m]]
        rows.append(row)
    note = (
        "the paper's numbers: Lu et al. Tables 1 and 4 (LETOR 2.0 OHSUMED); ours: LETOR 3.0 "
        "OHSUMED (QueryLevelNorm) — same queries and judgements, different feature set"
        if paper_key == "OHSUMED"
        else f"the paper's numbers are for LETOR 2.0 {paper_key or 'OHSUMED'} (Tables "
        f"{_TABLES.get(paper_key or 'OHSUMED')}); "
        f"ours are for {source.label}: shown for reference only, not comparable"
    )
    report.heading("Beside the published numbers")
    report.add_table(
        Table(
            "paper_comparison",
            "Ours beside Lu et al.'s published numbers",
            cols,
            rows,
            digits=3,
            notes=[
                note,
                "— : not reported by the paper (ListMLE and "
                "RankCosine were copied from Xia et al. 2009)",
            ],
        )
    )
    prow = []
    for ds_name, table in PAPER.items():
        for name, _ in METHODS:
            prow.append([ds_name, name, *[table[name][m] for m in MEASURES]])
    report.add_table(
        Table(
            "paper_tables",
            "Lu et al. (2010) Tables 1–6 as published (LETOR 2.0)",
            ["dataset", "method", *[SHORT[m] for m in MEASURES]],
            prow,
            digits=3,
        )
    )

    # ------------------------------------------------------------------ tests
    report.heading("Significance tests on N@1")
    for tag, res, title in (
        ("vs_listmle", sig_all, "Every method vs ListMLE (N@1, paired t-test, Holm)"),
        (
            "cs1_vs_baselines",
            sig_52,
            "CS-ListMLE@1 vs the baselines (N@1, paired t-test, not adjusted — as §5.2)",
        ),
    ):
        header, body = res.details()
        report.add_table(
            Table(f"significance_{tag}", title, header, [list(r) for r in body], legend=res.legend)
        )
        report.add_file(f"tables/significance_{tag}.export.md", res.to_markdown(details=True))
        report.add_file(f"tables/significance_{tag}.export.tex", res.to_latex())
        report.add_file(f"tables/significance_{tag}.export.csv", res.to_csv())
    report.add_table(
        Table(
            "training",
            "Training runs",
            [
                "fold",
                "method",
                "loss",
                "learning rate",
                "epochs run",
                "kept epoch",
                "stop",
                "vali NDCG@10",
                "seconds",
            ],
            train_info,
            collapsed=True,
        )
    )

    # ------------------------------------------------------------------ findings
    _findings(report, store, sig_all, sig_52, paper_key, source.label)
    report.results["mean"] = {
        name: {m: store.mean(name, m) for m in all_measures} for name, _ in METHODS
    }
    report.results["fold_means"] = store.fold_means
    report.results["per_query"] = {
        name: {m: store.per_query(name, m) for m in MEASURES} for name, _ in METHODS
    }
    report.results["significance"] = {
        "vs_listmle": sig_all.to_dict(),
        "cs1_vs_baselines": sig_52.to_dict(),
    }
    report.results["paper"] = PAPER
    report.results["protocol"] = {
        "preset": preset,
        "folds": n_folds,
        "epochs": epochs,
        "adarank_rounds": rounds,
        "selection": "ndcg@10 on vali",
        "methods": dict(METHODS),
    }


def _paper_dataset(label: str) -> str | None:
    up = label.upper()
    for key in PAPER:
        if key in up:
            return key
    return None


def _plots(report: Report, store: PerQueryStore, paper: dict[str, Any] | None, label: str) -> None:
    from .._compat import pyplot

    plt = pyplot()
    from ._surrogates import generic_k

    conv_text = generic_k(store.resolved("ndcg@1")) + " [letor3]"
    names = [n for n, _ in METHODS]
    fig, ax = plt.subplots(figsize=(11, 4.6))
    width = 0.8 / len(MEASURES)
    x = np.arange(len(names))
    low: list[float] = []
    high: list[float] = []
    for j, m in enumerate(MEASURES):
        means = [store.mean(n, m) for n in names]
        errs = [store.fold_std(n, m) or 0.0 for n in names]
        low += [v - e for v, e in zip(means, errs) if np.isfinite(v)]
        high += [v + e for v, e in zip(means, errs) if np.isfinite(v)]
        ax.bar(
            x + (j - (len(MEASURES) - 1) / 2) * width,
            means,
            width,
            yerr=errs,
            capsize=2,
            label=SHORT[m],
        )
        if paper is not None:
            pv = [paper[n][m] if paper[n][m] is not None else np.nan for n in names]
            low += [v for v in pv if np.isfinite(v)]
            high += [v for v in pv if np.isfinite(v)]
            ax.plot(
                x + (j - (len(MEASURES) - 1) / 2) * width,
                pv,
                "kD",
                ms=3,
                label="paper (LETOR 2.0)" if j == 0 else None,
            )
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=20, fontsize="small")
    ax.set_ylabel("test value (N@k, MAP)")
    # the differences between methods are small next to the values: zoom on them
    lo = min(low) if low else 0.0
    hi = max(high) if high else 1.0
    pad = 0.1 * max(hi - lo, 0.02)
    ax.set_ylim(max(0.0, lo - pad), min(1.0, hi + pad))
    ax.set_title(f"{label}: N@1, N@3, N@5, N@10 and MAP (error bars: sd of fold means)")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    report.add_figure(
        "measures",
        fig,
        title="N@k and MAP per method",
        caption="bars: our test means; error bars: standard deviation over folds"
        + ("; black diamonds: the paper's numbers" if paper else "")
        + f"; the y axis does not start at 0. N@k is {conv_text}; MAP is "
        + store.resolved("map"),
    )

    fig, axes = subplots(2, ncols=2, size=(6.2, 4.4))
    ks = np.arange(1, 11)
    groups = (
        ("ListMLE and CS-ListMLE@k", names[:5]),
        ("CS-ListMLE@1 and the baselines", ["CS-ListMLE@1", *BASELINES_52]),
    )
    for ax, (title, group) in zip(axes, groups):
        for n in group:
            mu = np.array([store.mean(n, f"ndcg@{k}") for k in ks])
            se = np.array([store.sem(n, f"ndcg@{k}") for k in ks])
            (line,) = ax.plot(ks, mu, marker="o", ms=3, label=n)
            ax.fill_between(ks, mu - se, mu + se, color=line.get_color(), alpha=0.12, lw=0)
        ax.set_xlabel("cut-off k")
        ax.set_ylabel("NDCG@k")
        ax.set_title(title, fontsize="medium")
        ax.legend(fontsize="x-small")
    fig.tight_layout()
    report.add_figure(
        "ndcg_at_k",
        fig,
        title="NDCG@1..10",
        caption=f"mean over test queries; band: ±1 standard error over queries; NDCG@k is "
        f"{conv_text}",
    )


def _findings(
    report: Report,
    store: PerQueryStore,
    sig_all: Any,
    sig_52: Any,
    paper_key: str | None,
    label: str,
) -> None:
    where = (
        ""
        if paper_key == "OHSUMED"
        else f" [the paper's claim is about OHSUMED; observed on {label}]"
    )
    cs = [f"CS-ListMLE@{k}" for k in (1, 3, 5, 10)]
    pq = {n: store.per_query(n, "ndcg@1") for n, _ in METHODS}
    parts = [comparable(pq[n] - pq["ListMLE"], what=f"{n[11:]} − ListMLE") for n in cs]
    report.add_finding(
        "Table 1 / §5.1: CS-ListMLE and ListMLE are comparable on OHSUMED (N@1)" + where,
        "N@1 differences to ListMLE: "
        + ", ".join(
            f"{n[11:]}: {store.mean(n, 'ndcg@1') - store.mean('ListMLE', 'ndcg@1'):+.3f} "
            f"(t-test p = {sig_all.get(n, 'ndcg@1').p_value:.2g})"
            for n in cs
        ),
        all_of(parts),
    )
    n1 = {n: store.mean(n, "ndcg@1") for n in ("CS-ListMLE@1", *BASELINES_52)}
    tests = {b: sig_52.get(b, "ndcg@1") for b in BASELINES_52}
    # diff in sig_52 is baseline − CS-ListMLE@1: the claim's difference is its negative
    report.add_finding(
        "Table 4: CS-ListMLE@1 has a higher N@1 than ListNet, RankCosine, AdaRank and RankSVM"
        + where,
        ", ".join(f"{n} {v:.3f}" for n, v in n1.items()),
        all_of([better(-t.diff, t.p_value, what=f"CS-ListMLE@1 − {b}") for b, t in tests.items()]),
    )
    report.add_finding(
        f"§5.2: the N@1 gain of CS-ListMLE@1 over RankSVM and AdaRank is significant "
        f"(t-test, p < {ALPHA:g})" + where,
        "; ".join(
            f"{b}: N@1 difference {-tests[b].diff:+.3f} for CS-ListMLE@1, "
            f"p = {tests[b].p_value:.3g}"
            for b in ("RankSVM", "AdaRank")
        ),
        all_of(
            [
                better(-tests[b].diff, tests[b].p_value, what=f"CS-ListMLE@1 − {b}")
                for b in ("RankSVM", "AdaRank")
            ]
        ),
    )
    maps = {n: store.per_query(n, "map") for n in ("CS-ListMLE@1", *BASELINES_52)}
    report.add_finding(
        "§5.2: CS-ListMLE@1 has MAP comparable to the baselines" + where,
        ", ".join(f"{n} {float(np.nanmean(v)):.3f}" for n, v in maps.items()),
        all_of(
            [
                comparable(maps["CS-ListMLE@1"] - maps[b], what=f"MAP CS-ListMLE@1 − {b}")
                for b in BASELINES_52
            ]
        ),
    )
    if paper_key == "OHSUMED":
        ours = store.mean("CS-ListMLE@1", "ndcg@1")
        report.add_finding(
            "Table 1: CS-ListMLE@1 reaches N@1 0.555, N@10 0.446, MAP 0.442 on OHSUMED (LETOR 2.0)",
            f"ours (LETOR 3.0 OHSUMED): N@1 {ours:.3f}, "
            f"N@10 {store.mean('CS-ListMLE@1', 'ndcg@10'):.3f}, "
            f"MAP {store.mean('CS-ListMLE@1', 'map'):.3f}",
            within(
                ours,
                0.555,
                PAPER_TOL,
                se=store.sem("CS-ListMLE@1", "ndcg@1"),
                what="our N@1",
            ),
        )


#: how far (in NDCG) our absolute N@1 may be from the paper's for "reaches the published value"
#: (the data differ: LETOR 3.0's 45 features against LETOR 2.0's 25)
PAPER_TOL = 0.05
