"""The protocol of Ravikumar et al.'s experiments (AISTATS 2011 §6), shared by ``consistency`` and
``qnorm``: several surrogate losses, one linear model each, the same optimiser and settings for
every loss with no tuning or model selection, NDCG@1..10 on the test part of every fold, and paired
randomisation (sign-flip) tests between losses on per-query values.

The paper used "gradient descent without any parameter tuning"; the experiments train every loss
under three protocols (:mod:`.protocols`): ``line-search`` (L-BFGS to the minimiser, the paper's,
primary), ``tuned-gd`` (η and ε chosen on validation) and ``adam`` (full-batch Adam with one
setting for every loss, the experiments' original protocol).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._common import DataSource, Settings, coverage_text, normalize_text, preset_for
from ._fit import PerQueryStore
from .protocols import (
    TUNED_GD_QUICK,
    Protocol,
    chosen_text,
    convergence_text,
    fit_fold,
    protocol_texts,
)
from .report import Cell, Report, Table

KS = tuple(range(1, 11))
NDCG_K = tuple(f"ndcg@{k}" for k in KS)

#: What a real-data run of the Ravikumar et al. experiments (consistency, q-norm) can test.
SCOPE_REAL_RAVIKUMAR = (
    "This run uses real data (<code>{data}</code>). The paper reports its results as plots and "
    "relative changes over nine LETOR datasets, not as a table to match number by number; what "
    "is tested here is the direction, size and significance of the differences between the "
    "losses on these data, under the paper's protocol (deviations stated below)."
)
#: What --quick changes in those two experiments.
QUICK_NOTE_RAVIKUMAR = (
    "--quick: three folds instead of five; line-search at most 60 L-BFGS iterations (not 500); "
    f"tuned-gd over {TUNED_GD_QUICK}; adam 80 epochs (not 300)."
)


def protocol(settings: Settings) -> dict[str, Any]:
    """Folds, epochs and learning rate of the ``adam`` protocol (the experiments' original one)."""
    return {
        "folds": settings.pick(5, 3, 1),
        "epochs": settings.pick(300, 80, 3),
        "optimizer": "adam",
        "lr": 0.01,
        "tol": 1e-6,
        "normalize": "zscore",
        "selection": "none (last epoch; no tuning, as the paper)",
    }


def train_and_check(
    report: Report,
    settings: Settings,
    source: DataSource,
    losses: Sequence[tuple[str, str]],
    protocols: Sequence[Protocol],
) -> tuple[
    dict[str, PerQueryStore], str, dict[str, list[tuple[str, str, Any]]], dict[str, dict[str, str]]
]:
    """An experiment's training: the protocols described on the page, :func:`train_all`, then
    the runs that failed to train named (:func:`find_failed`). Returns ``(stores, preset, fits,
    failed)``."""
    describe_protocol(report, settings, source, protocols)
    stores, preset, fits = train_all(report, settings, source, losses, protocols)
    return stores, preset, fits, find_failed(report, source, settings, stores, fits, preset)


def train_all(
    report: Report,
    settings: Settings,
    source: DataSource,
    losses: Sequence[tuple[str, str]],
    protocols: Sequence[Protocol],
) -> tuple[dict[str, PerQueryStore], str, dict[str, list[tuple[str, str, Any]]]]:
    """Train every ``(display name, loss spec)`` on every fold under every protocol; NDCG@1..10
    on the tests. Returns ``({protocol: store}, preset, {protocol: [(fold, name, Fitted)]})``."""
    from ._fit import cross_fit, record_lengths

    n_folds = settings.pick(5, 3, 1)
    preset = preset_for(source)
    stores = {p.name: PerQueryStore(NDCG_K) for p in protocols}
    fits: dict[str, list[tuple[str, str, Any]]] = {p.name: [] for p in protocols}
    runs = {
        f"{p.name}: {name}": (p, name, _fitter(p, spec, settings.seed, preset))
        for p in protocols
        for name, spec in losses
    }
    folds = record_lengths(
        source.folds(n_folds, with_vali=any(p.tuned for p in protocols)), stores.values()
    )
    cv = cross_fit(report, settings, folds, {k: r[2] for k, r in runs.items()}, NDCG_K, preset)
    for r in cv.results:
        p, name, _ = runs[r.run]
        stores[p.name].add(name, r.fold, r.evaluation)
        fits[p.name].append((r.fold, name, r.result))
    report.add_dataset(source.describe())
    report.add_conventions(stores[protocols[0].name].conventions)
    report.results["protocol"] = {
        "folds": n_folds,
        "preset": preset,
        "losses": dict(losses),
        "primary": protocols[0].name,
        "protocols": {p.name: p.to_dict() for p in protocols},
    }
    return stores, preset, fits


def _fitter(protocol: Protocol, spec: str, seed: int, preset: str) -> Any:
    """Train ``spec`` on a fold under ``protocol`` (:func:`.protocols.fit_fold`), scoring
    its test part."""

    def fitter(fold: Any) -> Any:
        return fit_fold(protocol, spec, fold, seed=seed, preset=preset)

    return fitter


def _preset_reason(source: DataSource) -> str:
    """Why the preset was chosen, as the page states it."""
    if preset_for(source) == "letor4":
        return (
            "the official LETOR 4.0 conventions, chosen because the data's name contains MQ2007 "
            "or MQ2008"
        )
    return "the official LETOR 3.0 conventions (Eval-Score-3.0.pl)"


def find_failed(
    report: Report,
    source: DataSource,
    settings: Settings,
    stores: dict[str, PerQueryStore],
    fits: dict[str, list[tuple[str, str, Any]]],
    preset: str,
) -> dict[str, dict[str, str]]:
    """The methods that failed to train under each protocol (:mod:`.soundness`), named on the
    page: ``{protocol: {method: reason}}``; constant scores are evaluated on the same test
    parts under ``preset``."""
    from .soundness import failed_methods, trivial_values

    n_folds = settings.pick(5, 3, 1)
    trivial = trivial_values(
        [f.test for f in source.folds(n_folds, with_vali=False)], ["ndcg@10"], preset
    )
    out: dict[str, dict[str, str]] = {}
    for name, store in stores.items():
        out[name] = failed_methods(
            {s: store.mean(s, "ndcg@10") for s in store.systems()}, fits[name], trivial
        )
        for method, why in out[name].items():
            report.add_failed_run(name, method, why)
    report.results["constant_scores_ndcg10"] = float(np.nanmean(trivial["ndcg@10"]))
    return out


def training_table(
    fits: Sequence[tuple[str, str, Any]], name: str = "training", title: str = "Training runs"
) -> Table:
    """The collapsed table of training runs (one row per fold and loss) with each run's
    convergence and chosen hyper-parameters."""
    rows = [
        [
            fold,
            loss,
            fit.loss_name,
            chosen_text(fit) or ("—" if fit.lr is None else f"η={fit.lr:g}"),
            fit.epochs_run,
            convergence_text(fit),
            "—" if fit.converged is None else ("yes" if fit.converged else "no"),
            round(fit.seconds, 2),
        ]
        for fold, loss, fit in fits
    ]
    return Table(
        name,
        title,
        [
            "fold",
            "loss",
            "spec",
            "learning rate / chosen",
            "epochs run",
            "stop",
            "converged",
            "seconds",
        ],
        rows,
        collapsed=True,
        notes=[_stop_note(fits)],
    )


def _stop_note(fits: Sequence[tuple[str, str, Any]]) -> str:
    """The training table's note: only the stop reasons and symbols that occur in it."""
    reasons = {str(fit.stop_reason) for _, _, fit in fits}
    words = {
        "converged": "converged (gradient max-norm ≤ gtol or objective change ≤ tol)",
        "stalled": "stalled (the line search made no progress with the gradient above gtol)",
        "max_epochs": "max_epochs (the epoch or iteration cap)",
    }
    parts = [w for k, w in words.items() if k in reasons]
    text = "stop: " + ", ".join(parts) if parts else ""
    if any(fit.grad_norm is not None for _, _, fit in fits):
        text += "; |∇|∞: the max-norm of the objective's gradient at the end"
    if any(fit.converged is None for _, _, fit in fits):
        text += "; converged — : no convergence test (Adam)"
    return text.lstrip("; ")


def describe_protocol(
    report: Report, settings: Settings, source: DataSource, protocols: Sequence[Protocol]
) -> None:
    parts = source.n_folds_available()
    covered = coverage_text(min(settings.pick(5, 3, 1), parts), parts)
    report.text(
        f"Data: {source.label}. As in the paper, every loss trains the same linear model "
        f"({normalize_text(settings.normalize)}) under the same protocol on each fold's "
        f"training part. Tests: {covered}. Measures: NDCG@1..10 under the "
        f"{preset_for(source)} preset ({_preset_reason(source)}). Each loss is trained under "
        f"{len(protocols)} protocols and every claim is checked under each; the primary one is "
        f"{protocols[0].name}."
    )
    report.begin_details(
        f"How every loss is trained: {len(protocols)} protocols (primary: {protocols[0].name})"
    )
    for text in protocol_texts(protocols):
        report.text(text)
    report.text(
        'Ravikumar et al. minimised every loss by "the MATLAB implementation of gradient descent '
        "without any parameter tuning\": a line-search method run to each convex loss's "
        "minimiser, which is what line-search does. Plain gradient descent with one fixed step "
        "cannot serve these losses together (their gradients differ in scale by orders of "
        "magnitude: the squared loss sums over lists of up to hundreds of documents, the "
        "consistent losses divide the gains by the DCG norm), which is why tuned-gd chooses the "
        "step per loss and fold on validation, and why the original protocol of this experiment "
        "(adam) used Adam, whose steps do not depend on the gradient's scale."
    )
    report.end_details()
    if source.kind == "letor-file":
        report.text(source.single_file_note())


def compare(store: PerQueryStore, systems: Sequence[str], baseline: str, settings: Settings) -> Any:
    """Paired randomisation tests of each system vs ``baseline`` on NDCG@1..10 (Holm per k)."""
    from ..analysis.significance import compare_rankers

    return compare_rankers(
        store.as_mapping(list(systems)),
        baseline=baseline,
        test="permutation",
        measures=list(NDCG_K),
        correction="holm",
        family="measure",
        n_resamples=settings.pick(10_000, 2_000, 200),
        n_bootstrap=settings.pick(2_000, 500, 100),
        seed=settings.seed,
    )


def ndcg_table(
    report: Report,
    name: str,
    title: str,
    store: PerQueryStore,
    systems: Sequence[str],
    sig: Any | None,
    baseline: str | None,
    failed: dict[str, str] | None = None,
    protocol: str = "",
) -> Table:
    """Rows: systems; columns NDCG@1..10 and their mean; cells marked against ``baseline``, no
    mark for or against a method of ``failed`` (it failed to train)."""
    from .soundness import failed_note

    failed = failed or {}
    if baseline in failed:
        sig = None
    rows = []
    for s in systems:
        row: list[Any] = [s + (" (failed to train)" if s in failed else "")]
        for m in NDCG_K:
            mark, p = "", None
            if sig is not None and s != baseline and s not in failed:
                t = sig.get(s, m)
                if t is not None:
                    mark, p = sig.direction_mark(s, m), t.p_adjusted
            row.append(Cell(store.mean(s, m), None, mark, p))
        row.append(float(np.mean([store.mean(s, m) for m in NDCG_K])))
        rows.append(row)
    return report.add_table(
        Table(
            name,
            title,
            ["loss", *[f"N@{k}" for k in KS], "mean N@1..10"],
            rows,
            digits=4,
            caption="mean over all test queries",
            legend=sig.legend_for(tests=False, directional=True) if sig is not None else "",
            notes=[n for n in (failed_note(failed, protocol), store.short_list_note(KS)) if n],
        )
    )


def curves(
    ax: Any,
    store: PerQueryStore,
    systems: Sequence[str],
    conv_text: str,
    title: str,
    labels: Sequence[str] | None = None,
    legend: bool = True,
) -> None:
    """NDCG@1..10 of each system with a ±1 standard-error band over queries. The y axis says
    ``NDCG@k``; the full convention ``conv_text`` belongs in the figure's caption; ``labels``
    (default: the systems' names) are the legend's entries."""
    ks = np.array(KS)
    for s, label in zip(systems, labels or systems):
        mu = np.array([store.mean(s, m) for m in NDCG_K])
        se = np.array([store.sem(s, m) for m in NDCG_K])
        (line,) = ax.plot(ks, mu, marker="o", ms=3, label=label)
        ax.fill_between(ks, mu - se, mu + se, color=line.get_color(), alpha=0.12, lw=0)
    ax.set_xlabel("cut-off k")
    ax.set_ylabel("NDCG@k")
    ax.set_title(title, fontsize="medium")
    ax.set_xticks(ks)
    if legend:
        ax.legend(fontsize="small")


def conv_text(store: PerQueryStore, preset: str) -> str:
    """The measure's full convention for axis labels: the resolved spec with k generic."""
    return generic_k(store.resolved("ndcg@1")) + f" [{preset}]"


def generic_k(resolved: str) -> str:
    """``ndcg(...)@1`` -> ``ndcg(...)@k``."""
    head, sep, _ = resolved.rpartition("@")
    return f"{head}@k" if sep else resolved


def add_sig_files(report: Report, tag: str, sig: Any) -> None:
    """The significance exporters' own Markdown/LaTeX/CSV files, beside our tables."""
    report.add_file(f"tables/significance_{tag}.export.md", sig.to_markdown(details=True))
    report.add_file(f"tables/significance_{tag}.export.tex", sig.to_latex())
    report.add_file(f"tables/significance_{tag}.export.csv", sig.to_csv())
    header, body = sig.details()
    report.add_table(
        Table(
            f"significance_{tag}",
            f"Randomisation tests: {tag.replace('_', ' ')}",
            header,
            [list(r) for r in body],
            legend=sig.legend,
            collapsed=True,
        )
    )


def mean_over_k(store: PerQueryStore, system: str) -> np.ndarray:
    """Per-query mean of NDCG@1..10 (the quantity the summary's relative change is about)."""
    return np.nanmean(np.stack([store.per_query(system, m) for m in NDCG_K]), axis=0)


def mean_k_tests(store: PerQueryStore, systems: Sequence[str], baseline: str) -> dict[str, Any]:
    """Paired t-tests of each system's per-query mean NDCG@1..10 against ``baseline``,
    Holm-adjusted over ``systems``: ``{system: {"diffs", "diff", "p", "p_adjusted"}}``."""
    from ..analysis.significance import holm, paired_t_test

    base = mean_over_k(store, baseline)
    out: dict[str, Any] = {}
    for s in systems:
        d = mean_over_k(store, s) - base
        out[s] = {"diffs": d, "diff": float(np.nanmean(d)), "p": paired_t_test(d).p_value}
    adj = holm([out[s]["p"] for s in systems]) if systems else np.zeros(0)
    for s, pa in zip(systems, adj):
        out[s]["p_adjusted"] = float(pa)
    return out
