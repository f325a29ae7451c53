"""``cost-sensitive``: Lu et al. (PAKDD 2010) Tables 1–6 — CS-ListMLE@k vs ListMLE and baselines.

Protocol (Lu et al. §5): a linear model f(x) = <w, x> for every method, trained on each fold's
training part and tested on the test part; five folds (three with ``--quick``), so in a full run
every query is tested once. Every method
is trained under three protocols (:mod:`.protocols`): ``tuned-gd`` (the paper's: gradient descent
with η and ε chosen per fold on validation by the measure the method targets; primary),
``line-search`` (L-BFGS to the minimiser) and ``fixed-gd`` (this experiment's original protocol:
one learning rate, the epoch kept by validation NDCG@10); every claim's verdict is combined over
them (:func:`.verdicts.combine_protocols`). AdaRank is boosted the same way under every protocol.
Methods: ListMLE, CS-ListMLE@1/3/5/10, ListNet, RankCosine, AdaRank and Ranking SVM
(:mod:`ndcglab.losses`; AdaRank by :mod:`ndcglab.models.adarank`). Measures N@1, N@3, N@5,
N@10 and MAP under the ``letor3`` preset (the official Eval-Score-3.0.pl conventions). Paired
t-test on the per-query N@1 of every method against ListMLE, and of CS-ListMLE@1 against ListNet,
RankCosine, AdaRank and RankSVM (the paper's §5.2 test), with :mod:`ndcglab.analysis.significance`.

The published numbers (Tables 1–6) are kept in :data:`PAPER` and printed beside ours. They are for
LETOR **2.0** OHSUMED/TD2003/TD2004; data given with ``--data`` are compared with a table only when
their sizes match the LETOR 3.0 version of that collection (:func:`._common.known_collection`:
OHSUMED has 106 queries and 45 features there, against 25 in LETOR 2.0), so equal numbers are not
expected — the claims compared are the orderings and significance statements. Before any claim
is decided, every method is checked for a failed training (:mod:`.soundness`); claims resting on
a failed method are not testable under that protocol. Lu et al.'s ListMLE and RankCosine rows
were not trained by them but taken from Xia et al.'s work (:data:`NOT_COMPARABLE`), so the page
compares our CS-ListMLE with the published numbers and with our own baselines separately, and
gives the 95% CI of every claimed difference with the queries needed to detect the paper's
difference (:mod:`ndcglab.analysis.power`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._common import Settings, coverage_text, normalize_text, source_for, subplots
from ._fit import PerQueryStore
from .protocols import (
    TUNED_GD_QUICK,
    Protocol,
    add_verdict_table,
    chosen_text,
    convergence_summary,
    convergence_text,
    experiment_protocols,
    fit_fold,
    fit_record,
    protocol_by_name,
    protocol_texts,
)
from .report import Cell, Report, Table
from .soundness import TRIVIAL, failed_methods, failed_note, trivial_values, unmark_details
from .verdicts import (
    ALPHA,
    MARGIN,
    Finding,
    all_of,
    better,
    comparable,
    untestable,
    within,
)

TITLE = "Cost-sensitive ListMLE vs ListMLE and baselines (Lu et al., PAKDD 2010, Tables 1–6)"
CLAIM = (
    "CS-ListMLE and ListMLE perform comparably on OHSUMED (Table 1); CS-ListMLE@1 reaches a higher "
    "NDCG@1 than ListNet, RankCosine, AdaRank and Ranking SVM (Table 4), significantly so over "
    "Ranking SVM and AdaRank (paired t-test, p < 0.05), with comparable MAP."
)
QUICK_NOTE = (
    f"--quick: three folds instead of five; tuned-gd over {TUNED_GD_QUICK}; line-search at most "
    "60 L-BFGS iterations (not 500); fixed-gd at most 80 epochs (not 300); AdaRank 20 rounds "
    "(not 100); fewer test queries, so tests have less power."
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
# (ListMLE and RankCosine were copied from Xia, Liu & Li, NIPS 2009, which gives neither N@5
# nor MAP).
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
    from ._fit import cross_fit, record_lengths

    source = source_for(settings)
    preset = "letor3"
    n_folds = settings.pick(5, 3, 1)
    rounds = settings.pick(100, 20, 3)
    protocols = experiment_protocols("cost-sensitive", settings)
    primary = protocols[0]
    report.seeds["training"] = settings.seed
    all_measures = tuple(dict.fromkeys(CURVE + MEASURES))
    stores = {p.name: PerQueryStore(all_measures) for p in protocols}
    fits: dict[str, list[tuple[str, str, Any]]] = {p.name: [] for p in protocols}

    report.text(
        f"Data: {source.label}. Every method is a linear model "
        f"({normalize_text(settings.normalize)}) trained on each fold's training part and "
        "tested on its test part; test "
        "measures use the letor3 preset (Eval-Score-3.0.pl: gain {0:0, 1:1, 2:3}, discount "
        "1/max(1, log2 r), ties in file order, NDCG@k of a list shorter than k counts 0). "
        f"Each method is trained under {len(protocols)} protocols and every claim is checked "
        f"under each; the primary protocol is {primary.name}, the paper's."
    )
    report.begin_details(
        f"How every method is trained: {len(protocols)} protocols (primary: {primary.name}, "
        "the paper's)"
    )
    for text in protocol_texts(protocols):
        report.text(text)
    report.text(
        "AdaRank has no gradient hyper-parameters: it is boosted the same way under every "
        f"protocol (boosting over single features, {rounds} rounds, the round with the best "
        "validation NDCG@10 kept), trained once per fold and shared by the protocols."
    )
    report.end_details()
    if source.kind == "letor-file":
        report.text(source.single_file_note())

    fixed = next((p for p in protocols if p.name == "fixed-gd"), None)
    ada_protocol = fixed or protocol_by_name("fixed-gd", "cost-sensitive", settings)
    ada: dict[str, Any] = {}  # AdaRank, trained once per fold and shared by the protocols

    def fitter(p: Any, name: str, loss: str) -> Any:
        def fit_on(protocol: Any, fold: Any) -> Any:
            return fit_fold(protocol, loss, fold, seed=settings.seed, preset=preset, rounds=rounds)

        def fit(fold: Any) -> Any:
            if name == "AdaRank":
                if ada.get("fold") != fold.name:
                    shared = fit_on(ada_protocol, fold)
                    shared.protocol = "(every protocol)"
                    ada.update(fold=fold.name, fit=shared)
                return ada["fit"]
            return fit_on(p, fold)

        return fit

    runs = {
        f"{p.name}: {name}": (p, name, fitter(p, name, loss))
        for p in protocols
        for name, loss in METHODS
    }
    cv = cross_fit(
        report,
        settings,
        record_lengths(source.folds(n_folds), stores.values()),
        {k: r[2] for k, r in runs.items()},
        all_measures,
        preset,
        timing=lambda run: "AdaRank" if runs[run][1] == "AdaRank" else run,
    )
    for r in cv.results:
        p, name, _ = runs[r.run]
        stores[p.name].add(name, r.fold, r.evaluation)
        fits[p.name].append((r.fold, name, r.result))
    report.add_dataset(source.describe())
    report.add_conventions(stores[primary.name].conventions)

    paper_key = _paper_dataset(report.datasets[-1])
    paper = PAPER[paper_key or "OHSUMED"]
    n_parts = source.n_folds_available()
    trivial = trivial_values(
        [f.test for f in source.folds(n_folds, with_vali=False)], all_measures, preset
    )
    per_protocol: dict[str, list[Finding]] = {}
    results: dict[str, Any] = {}
    for i, p in enumerate(protocols):
        store = stores[p.name]
        failed = failed_methods(
            {n: store.mean(n, "ndcg@10") for n, _ in METHODS}, fits[p.name], trivial
        )
        for name, why in failed.items():
            report.add_failed_run(p.name, name, why)
        sig_all, sig_52, sig_curve = _significance(store, settings)
        sfx = "" if i == 0 else f"_{p.slug}"
        report.heading(
            f"Results under {p.name}" + (" (primary: the paper's protocol)" if i == 0 else "")
        )
        if i:
            report.begin_details(
                f"Results, tests and training runs under {p.name} (described above)"
            )
        _results_table(report, store, sig_all, source.label, n_folds, p, sfx, failed, trivial)
        _curve_table(report, store, sig_curve, p, sfx, failed)
        _significance_tables(report, sig_all, sig_52, p, sfx, files=i == 0, failed=failed)
        report.text(convergence_summary(p, fits[p.name]))
        report.add_table(_training_table(fits[p.name], p, sfx))
        if i:
            report.end_details()
        per_protocol[p.name] = untestable(
            _claims(store, sig_all, sig_52, paper_key, source.label), failed
        )
        results[p.name] = {
            "protocol": p.to_dict(),
            "mean": {n: {m: store.mean(n, m) for m in all_measures} for n, _ in METHODS},
            "fold_means": store.fold_means,
            "per_query": {n: {m: store.per_query(n, m) for m in all_measures} for n, _ in METHODS},
            "significance": {
                "vs_listmle": sig_all.to_dict(),
                "cs1_vs_baselines": sig_52.to_dict(),
                "cs_vs_listmle_n1_10": sig_curve.to_dict(),
            },
            "power": _power_rows(store, paper),
            "training": [fit_record(f, n, fit) for f, n, fit in fits[p.name]],
            "failed": failed,
        }
    report.add_protocol_findings(per_protocol)
    add_verdict_table(report, per_protocol)

    # ------------------------------------------------------------------ beside the paper
    store = stores[primary.name]
    _plots(report, store, paper if paper_key else None, source.label, primary.name)
    report.heading("Beside the published numbers")
    report.text(NOT_COMPARABLE + " " + _data_sentence(report.datasets[-1], paper_key))
    cols = ["method"]
    for m in MEASURES:
        cols += [f"{SHORT[m]} ours", f"{SHORT[m]} paper"]
    rows = []
    for name, _ in METHODS:
        row: list[Any] = [name]
        for m in MEASURES:
            row += [store.mean(name, m), paper[name][m]]
        rows.append([*row, _paper_source(name)])
    note = (
        "the paper's numbers: Lu et al. Tables 1 and 4 (LETOR 2.0 OHSUMED); ours: data with "
        "LETOR 3.0 OHSUMED's sizes (106 queries, 45 features) — the same queries and judgements "
        "if it is that collection, a different feature set"
        if paper_key == "OHSUMED"
        else f"the paper's numbers are for LETOR 2.0 {paper_key or 'OHSUMED'} (Tables "
        f"{_TABLES.get(paper_key or 'OHSUMED')}); "
        f"ours are for {source.label}: shown for reference only, not comparable"
    )
    report.add_table(
        Table(
            "paper_comparison",
            f"Ours (under {primary.name}) beside Lu et al.'s published numbers",
            [*cols, "source of the published row"],
            rows,
            digits=3,
            notes=[
                note,
                "— : not reported by the paper (its ListMLE and RankCosine rows were taken from "
                "Xia et al., which gives neither N@5 nor MAP)",
            ],
        )
    )
    _published_cs_table(report, stores, protocols, paper, paper_key)
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

    # ------------------------------------------------------------------ variance and power
    report.heading("Variance and power")
    _power_section(report, store, paper, primary.name, paper_key, n_folds, n_parts)

    sig_primary = results[primary.name]["significance"]
    report.results["primary_protocol"] = primary.name
    report.results["protocols"] = results
    report.results["mean"] = results[primary.name]["mean"]
    report.results["fold_means"] = store.fold_means
    report.results["per_query"] = {
        name: {m: store.per_query(name, m) for m in MEASURES} for name, _ in METHODS
    }
    report.results["significance"] = {
        "vs_listmle": sig_primary["vs_listmle"],
        "cs1_vs_baselines": sig_primary["cs1_vs_baselines"],
    }
    report.results["paper"] = PAPER
    report.results["protocol"] = {
        "preset": preset,
        "folds": n_folds,
        "adarank_rounds": rounds,
        "primary": primary.name,
        "protocols": {p.name: p.to_dict() for p in protocols},
        "methods": dict(METHODS),
    }


def _data_sentence(info: dict[str, Any], paper_key: str | None) -> str:
    """What the data of this run are, as far as their sizes tell (never from the folder name)."""
    if info.get("kind") == "synthetic":
        return "The data of this run are synthetic: no published number is comparable with ours."
    match = info.get("sizes_match")
    if match and paper_key:
        return (
            f"The data given have the sizes of {match}, so they are set beside the paper's "
            f"{paper_key} tables (LETOR 2.0)."
        )
    return (
        "The data given match no collection of the paper by their sizes: the published numbers "
        "are printed for reference only."
    )


#: the paragraph that names what cannot be compared with the paper
NOT_COMPARABLE = (
    "What cannot be compared. Lu et al. did not train their ListMLE and RankCosine baselines: "
    "those rows of their Tables 1–6 were taken directly from Xia, Liu & Li, "
    '"Statistical Consistency of Top-k Ranking" (NIPS 2009; the paper\'s reference [9]), '
    "trained by other code with other settings — which is also why those rows have no N@5 and "
    'no MAP. The paper\'s "CS-ListMLE beats ListMLE" therefore compares two protocols and two '
    "implementations, while ours trains every method identically. So our CS-ListMLE is compared "
    "separately (1) with the published numbers (the table of CS-ListMLE@k below, and the "
    "finding on the published N@1) and (2) with our own baselines trained under the same "
    "protocol (the results tables and findings above). All published numbers are for LETOR 2.0 "
    "(OHSUMED with 25 features; LETOR 3.0's OHSUMED has 45, with the same queries and "
    "judgements)."
)


def _paper_source(name: str) -> str:
    if name in ("ListMLE", "RankCosine"):
        return "Xia, Liu & Li (NIPS 2009), copied by Lu et al."
    return "Lu et al. (trained by the authors)" if name.startswith("CS-") else "Lu et al."


def _significance(store: PerQueryStore, settings: Settings) -> tuple[Any, Any, Any]:
    """The three families of paired t-tests on one protocol's results."""
    from ..analysis.significance import compare_rankers

    def t_tests(names: list[str], baseline: str, measures: list[str], correction: str) -> Any:
        return compare_rankers(
            store.as_mapping(names),
            baseline=baseline,
            test="t",
            measures=measures,
            correction=correction,
            family="measure",
            seed=settings.seed,
        )

    sig_all = t_tests([m for m, _ in METHODS], "ListMLE", ["ndcg@1"], "holm")
    sig_52 = t_tests(["CS-ListMLE@1", *BASELINES_52], "CS-ListMLE@1", ["ndcg@1"], "none")
    sig_curve = t_tests([n for n, _ in METHODS[:5]], "ListMLE", list(CURVE), "holm")
    return sig_all, sig_52, sig_curve


def _results_table(
    report: Report,
    store: PerQueryStore,
    sig_all: Any,
    label: str,
    n_folds: int,
    p: Protocol,
    sfx: str,
    failed: dict[str, str] | None = None,
    trivial: dict[str, np.ndarray] | None = None,
) -> None:
    failed = failed or {}
    n_q = store.per_query("ListMLE", "ndcg@1").size
    rows = []
    for name, _ in METHODS:
        row: list[Any] = [name + (" (failed to train)" if name in failed else "")]
        for m in MEASURES:
            off = name == "ListMLE" or m != "ndcg@1" or name in failed or "ListMLE" in failed
            mark = "" if off else sig_all.direction_mark(name, m)
            t = None if off else sig_all.get(name, m)
            row.append(
                Cell(
                    store.mean(name, m),
                    store.fold_std(name, m),
                    mark,
                    None if t is None else t.p_adjusted,
                )
            )
        rows.append(row)
    if trivial is not None:
        rows.append(
            [f"{TRIVIAL} (trivial ranker)"]
            + [float(np.nanmean(trivial[m])) if trivial[m].size else None for m in MEASURES]
        )
    legend = (
        ""
        if "ListMLE" in failed
        else "Marks on N@1 only (per-query NDCG@1 against ListMLE, Holm over the eight "
        "comparisons): " + sig_all.legend_for(tests=False, directional=True)
    )
    note = failed_note(failed, p.name)
    report.add_table(
        Table(
            f"results{sfx}",
            f"Test results on {label} under {p.name} ({n_q} test queries, {n_folds} fold(s))",
            ["method", *[SHORT[m] for m in MEASURES]],
            rows,
            caption="mean over all test queries; ± standard deviation of the fold means"
            + (
                f"; {TRIVIAL}: every document tied, ranked by the preset's tie rule"
                if trivial is not None
                else ""
            ),
            digits=3,
            legend=legend,
            notes=[note] if note else [],
        )
    )


def _curve_table(
    report: Report,
    store: PerQueryStore,
    sig: Any,
    p: Protocol,
    sfx: str,
    failed: dict[str, str] | None = None,
) -> None:
    """CS-ListMLE@k vs ListMLE at N@1..10, marked by the paired t-test (Holm per cut-off); no
    marks for or against a method that failed to train."""
    failed = failed or {}
    off = "ListMLE" in failed
    rows = []
    for name, _ in METHODS[:5]:
        row: list[Any] = [name + (" (failed to train)" if name in failed else "")]
        for m in CURVE:
            tested = name != "ListMLE" and not off and name not in failed
            t = sig.get(name, m) if tested else None
            row.append(
                Cell(
                    store.mean(name, m),
                    None,
                    "" if t is None else sig.direction_mark(name, m),
                    None if t is None else t.p_adjusted,
                )
            )
        rows.append(row)
    report.add_table(
        Table(
            f"cs_vs_listmle{sfx}",
            f"CS-ListMLE@k vs ListMLE at N@1..10 under {p.name}",
            ["method", *[f"N@{k}" for k in range(1, 11)]],
            rows,
            digits=3,
            caption="mean over all test queries"
            + (
                ""
                if off
                else "; paired t-test against ListMLE per cut-off, Holm over the four "
                "CS-ListMLE variants"
            ),
            legend="" if off else sig.legend_for(tests=False, directional=True),
            notes=[
                n
                for n in (
                    failed_note(failed, p.name) if failed else "",
                    store.short_list_note(range(1, 11)),
                )
                if n
            ],
        )
    )


def _significance_tables(
    report: Report,
    sig_all: Any,
    sig_52: Any,
    p: Protocol,
    sfx: str,
    *,
    files: bool,
    failed: dict[str, str] | None = None,
) -> None:
    for tag, res, title in (
        ("vs_listmle", sig_all, "Every method vs ListMLE (N@1, paired t-test, Holm)"),
        (
            "cs1_vs_baselines",
            sig_52,
            "CS-ListMLE@1 vs the baselines (N@1, paired t-test, not adjusted — as §5.2)",
        ),
    ):
        header, body = res.details()
        note = failed_note(failed or {}, p.name)
        report.add_table(
            Table(
                f"significance_{tag}{sfx}",
                f"{title} under {p.name}",
                header,
                unmark_details(header, body, failed or {}),
                legend=res.legend,
                collapsed=True,
                notes=[note] if note else [],
            )
        )
        if files:
            report.add_file(f"tables/significance_{tag}.export.md", res.to_markdown(details=True))
            report.add_file(f"tables/significance_{tag}.export.tex", res.to_latex())
            report.add_file(f"tables/significance_{tag}.export.csv", res.to_csv())


def _training_table(fits: list[tuple[str, str, Any]], p: Protocol, sfx: str) -> Table:
    rows = [
        [
            fold,
            name,
            fit.loss_name,
            fit.protocol,
            chosen_text(fit) or ("—" if fit.lr is None else f"η={fit.lr:g}"),
            fit.epochs_run,
            fit.best_epoch,
            convergence_text(fit),
            fit.best_score,
            round(fit.seconds, 2),
        ]
        for fold, name, fit in fits
    ]
    return Table(
        f"training{sfx}",
        f"Training runs under {p.name}",
        [
            "fold",
            "method",
            "loss",
            "protocol",
            "learning rate / chosen",
            "epochs run",
            "kept epoch",
            "stop (convergence)",
            "vali score",
            "seconds",
        ],
        rows,
        collapsed=True,
        notes=[_training_note(p, fits)],
    )


def _training_note(p: Protocol, fits: list[tuple[str, str, Any]]) -> str:
    """The training table's note: only what its columns hold under protocol ``p``."""
    if p.tuned:
        vali = (
            "vali score: the validation value of the chosen grid point (NDCG@k for "
            "CS-ListMLE@k, NDCG@10 otherwise)"
        )
    elif p.select_epoch:
        vali = "vali score: the validation NDCG@10 of the kept epoch"
    else:
        vali = "vali score: empty — nothing is selected on validation under " + p.name
    vali += "; AdaRank: the validation NDCG@10 of the kept round"
    if any(getattr(fit, "grad_norm", None) is not None for _, _, fit in fits):
        vali += "; |∇|∞: the max-norm of the objective's gradient at the end"
    return vali


def _published_cs_table(
    report: Report,
    stores: dict[str, PerQueryStore],
    protocols: list[Protocol],
    paper: dict[str, Any],
    paper_key: str | None,
) -> None:
    """Our CS-ListMLE@k under every protocol against the published CS-ListMLE@k rows only."""
    rows = []
    for name, _ in METHODS[1:5]:
        for m in ("ndcg@1", "ndcg@10", "map"):
            row: list[Any] = [name, SHORT[m], paper[name][m]]
            row += [stores[p.name].mean(name, m) for p in protocols]
            rows.append(row)
    report.add_table(
        Table(
            "cs_vs_published",
            "Our CS-ListMLE@k against the published CS-ListMLE@k (Lu et al. trained these "
            "themselves)",
            ["method", "measure", f"paper ({paper_key or 'OHSUMED'}, LETOR 2.0)"]
            + [f"ours, {p.name}" for p in protocols],
            rows,
            digits=3,
        )
    )


#: the comparisons the paper makes, for the power table: (A, B, measure)
_POWER_PAIRS: tuple[tuple[str, str, str], ...] = (
    *((f"CS-ListMLE@{k}", "ListMLE", "ndcg@1") for k in (1, 3, 5, 10)),
    *(("CS-ListMLE@1", b, "ndcg@1") for b in BASELINES_52),
    *(("CS-ListMLE@1", b, "map") for b in BASELINES_52),
)


def _power_rows(store: PerQueryStore, paper: dict[str, Any]) -> list[dict[str, Any]]:
    from ..analysis.power import paired_power

    out = []
    for a, b, m in _POWER_PAIRS:
        d = store.per_query(a, m) - store.per_query(b, m)
        pa, pb = paper[a][m], paper[b][m]
        delta = None if pa is None or pb is None else round(pa - pb, 6)
        pw = paired_power(d, delta if delta else MARGIN)
        at_margin = paired_power(d, MARGIN)
        out.append(
            {
                "a": a,
                "b": b,
                "measure": m,
                "diff": pw.mean,
                "ci95": [pw.ci_low, pw.ci_high],
                "sd": pw.sd,
                "n": pw.n,
                "paper_diff": delta,
                "n_needed_paper_diff": pw.n_needed if delta else None,
                "n_needed_paper_diff_normal": pw.n_needed_normal if delta else None,
                "n_needed_margin": at_margin.n_needed,
                "min_detectable": pw.min_detectable,
            }
        )
    return out


def _power_section(
    report: Report,
    store: PerQueryStore,
    paper: dict[str, Any],
    protocol: str,
    paper_key: str | None,
    n_folds: int = 5,
    n_parts: int = 5,
) -> None:
    rows_d = _power_rows(store, paper)
    n = rows_d[0]["n"] if rows_d else 0
    rows = []
    for r in rows_d:
        need = r["n_needed_paper_diff"]
        rows.append(
            [
                f"{r['a']} − {r['b']}",
                SHORT[r["measure"]],
                r["diff"],
                f"[{r['ci95'][0]:+.3f}, {r['ci95'][1]:+.3f}]",
                r["sd"],
                "—" if r["paper_diff"] is None else f"{r['paper_diff']:+.3f}",
                "—" if need is None else need,
                r["n_needed_margin"] if r["n_needed_margin"] is not None else "—",
                "—" if need is None else ("yes" if n >= need else "no"),
            ]
        )
    testable = [
        f"{r['a']} − {r['b']} ({SHORT[r['measure']]})"
        for r in rows_d
        if r["n_needed_paper_diff"] is not None and n >= r["n_needed_paper_diff"]
    ]
    untestable = [
        f"{r['a']} − {r['b']} ({SHORT[r['measure']]})"
        for r in rows_d
        if r["n_needed_paper_diff"] is not None and n < r["n_needed_paper_diff"]
    ]
    md = [r["min_detectable"] for r in rows_d if np.isfinite(r["min_detectable"])]
    source = (
        f"Lu et al., LETOR 2.0 {paper_key}" if paper_key else "Lu et al.'s OHSUMED, for reference"
    )
    report.text(
        f"How much this data can tell. There are {n} test queries "
        f"({coverage_text(n_folds, n_parts)}). "
        "For each difference the paper claims, the table gives "
        f"our mean paired difference under {protocol} with its 95% confidence interval (Student "
        "t), the per-query standard deviation of the differences, the paper's difference δ "
        f"({source}) "
        "and the number of queries a paired t-test (two-sided, α = 0.05, power 0.8) would need "
        "to detect a true difference of δ at that standard deviation — the exact noncentral-t "
        "value; the normal approximation n = ((z_0.975 + z_0.8)·sd/δ)² is within a query or two "
        "(ndcglab.analysis.power). "
        + (
            f"At these standard deviations the smallest difference detectable with {n} queries "
            f"is about {min(md):.3f}–{max(md):.3f}. "
            if md
            else ""
        )
        + (
            "Claims this data can test (enough queries for the paper's δ): "
            + (", ".join(testable) or "none")
            + ". Claims it cannot test (a difference of the paper's size would go undetected "
            "most of the time): "
            + (", ".join(untestable) or "none")
            + ". A comparability claim (δ ≈ 0) is tested by equivalence within ±0.02; the "
            "last-but-one column gives the queries needed to detect a difference of that size."
        )
    )
    report.add_table(
        Table(
            "power",
            f"Every claimed difference: 95% CI and queries needed to detect the paper's difference "
            f"(under {protocol})",
            [
                "difference",
                "measure",
                "ours",
                "95% CI",
                "sd per query",
                "paper's δ",
                "queries to detect δ",
                f"queries to detect ±{MARGIN:g}",
                f"testable with {n}?",
            ],
            rows,
            digits=3,
            notes=[
                "queries to detect: paired t-test, two-sided α = 0.05, power 0.8, at the "
                "per-query sd of our differences (exact noncentral t); — : the paper gives no "
                "number for one side or claims no difference",
            ],
        )
    )


def _paper_dataset(info: dict[str, Any]) -> str | None:
    """The paper's dataset whose tables apply: only when the data's sizes match that collection's
    LETOR 3.0 version (:func:`._common.known_collection`), never from the folder's name."""
    match = str(info.get("sizes_match") or "")
    for key in PAPER:
        if match.endswith(" " + key):
            return key
    return None


def _plots(
    report: Report,
    store: PerQueryStore,
    paper: dict[str, Any] | None,
    label: str,
    protocol: str = "",
) -> None:
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
    ax.set_title(
        f"{label}, trained under {protocol}: N@1, N@3, N@5, N@10 and MAP "
        "(error bars: sd of fold means)"
    )
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    report.add_figure(
        "measures",
        fig,
        title=f"N@k and MAP per method (under {protocol})",
        caption=f"bars: our test means, every method trained under {protocol}; error bars: "
        "standard deviation over folds"
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
        ax.set_title(f"{title} ({protocol})", fontsize="medium")
        ax.legend(fontsize="small")
    fig.tight_layout()
    report.add_figure(
        "ndcg_at_k",
        fig,
        title=f"NDCG@1..10 (under {protocol})",
        caption=f"mean over test queries, every method trained under {protocol}; band: ±1 "
        "standard error over queries; NDCG@k is "
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
    """Add the claims of :func:`_claims` (one protocol's results) to ``report``."""
    for f in _claims(store, sig_all, sig_52, paper_key, label):
        report.add_finding(f.claim, f.observed, f.verdict)


def _claims(
    store: PerQueryStore,
    sig_all: Any,
    sig_52: Any,
    paper_key: str | None,
    label: str,
) -> list[Finding]:
    """The paper's claims checked on one protocol's results (each with its verdict)."""
    out: list[Finding] = []
    where = (
        ""
        if paper_key == "OHSUMED"
        else f" [the paper's claim is about OHSUMED; observed on {label}]"
    )
    cs = [f"CS-ListMLE@{k}" for k in (1, 3, 5, 10)]
    pq = {n: store.per_query(n, "ndcg@1") for n, _ in METHODS}
    parts = [comparable(pq[n] - pq["ListMLE"], what=f"{n} − ListMLE") for n in cs]
    out.append(
        Finding(
            "Table 1 / §5.1: CS-ListMLE and ListMLE are comparable on OHSUMED (N@1; our ListMLE, "
            "trained identically)" + where,
            "N@1 differences to ListMLE: "
            + ", ".join(
                f"{n}: {store.mean(n, 'ndcg@1') - store.mean('ListMLE', 'ndcg@1'):+.3f} "
                f"(t-test p = {sig_all.get(n, 'ndcg@1').p_value:.2g})"
                for n in cs
            ),
            all_of(parts),
            ("ListMLE", *cs),
        )
    )
    n1 = {n: store.mean(n, "ndcg@1") for n in ("CS-ListMLE@1", *BASELINES_52)}
    tests = {b: sig_52.get(b, "ndcg@1") for b in BASELINES_52}
    # diff in sig_52 is baseline − CS-ListMLE@1: the claim's difference is its negative
    out.append(
        Finding(
            "Table 4: CS-ListMLE@1 has a higher N@1 than ListNet, RankCosine, AdaRank and RankSVM "
            "(our baselines, trained identically)" + where,
            ", ".join(f"{n} {v:.3f}" for n, v in n1.items()),
            all_of(
                [better(-t.diff, t.p_value, what=f"CS-ListMLE@1 − {b}") for b, t in tests.items()]
            ),
            ("CS-ListMLE@1", *BASELINES_52),
        )
    )
    out.append(
        Finding(
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
            ("CS-ListMLE@1", "RankSVM", "AdaRank"),
        )
    )
    maps = {n: store.per_query(n, "map") for n in ("CS-ListMLE@1", *BASELINES_52)}
    out.append(
        Finding(
            "§5.2: CS-ListMLE@1 has MAP comparable to the baselines" + where,
            ", ".join(f"{n} {float(np.nanmean(v)):.3f}" for n, v in maps.items()),
            all_of(
                [
                    comparable(maps["CS-ListMLE@1"] - maps[b], what=f"MAP CS-ListMLE@1 − {b}")
                    for b in BASELINES_52
                ]
            ),
            ("CS-ListMLE@1", *BASELINES_52),
        )
    )
    if paper_key == "OHSUMED":
        ours = store.mean("CS-ListMLE@1", "ndcg@1")
        out.append(
            Finding(
                "Table 1 (published numbers): CS-ListMLE@1 reaches N@1 0.555, N@10 0.446, "
                "MAP 0.442 on OHSUMED (LETOR 2.0)",
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
                ("CS-ListMLE@1",),
            )
        )
    return out


#: how far (in NDCG) our absolute N@1 may be from the paper's for "reaches the published value"
#: (the data differ: LETOR 3.0's 45 features against LETOR 2.0's 25)
PAPER_TOL = 0.05
