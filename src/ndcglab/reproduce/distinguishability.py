"""``distinguishability``: Wang et al. (COLT 2013) §4, Figures 1–4 — NDCG vs list size.

Protocol (the paper's §4, on data shaped like theirs): a RankSVM and a ListNet model (linear,
:mod:`ndcglab.losses` ``ranksvm`` and ``listnet``) trained on a separate training set, and a random
ranker (scores uniform on [−1, 1], seeded); evaluated on 40 queries × 5000 documents with 40
features
and labels 0/1/2 (``make_synthetic("web40")``: most documents 0, few 1, fewer 2; relevance
i.i.d. given a latent linear score, as the theory assumes). The training set is 40 further queries
drawn from the same generator (same seed, hence the same relevance direction; queries 41–80 of
``make_synthetic("web40", n_queries=80)``, whose first 40 queries are exactly the test set).
S_n = the first n documents of every list; the curves are the mean over queries of

* standard NDCG, D(r) = 1/log2(1+r) (Figure 1, Theorems 1–2),
* D(r) = r^−1/2 (Figure 2, Theorems 3–4),
* D(r) = 2^−r (Figure 3, Theorem 6),
* NDCG@k with k = n/5 and the log discount (Figure 4, Theorems 8 and 6),

computed by :func:`ndcglab.analysis.distinguish.distinguishability` (``standard`` preset: gain
2^y − 1, ties in input order). Error bands: the documents of every list are put in R random
orders (``repeats``), so S_n is a different sample in each repetition; bands are ±1 sd over
repetitions. The distinguishability estimate is the fraction of repetitions in which the order of
two rankers (or of all three) at n is already the one it keeps for every larger n of the grid.

With ``--data`` (a LETOR folder), the rankers are trained on Fold1's training part and the curves
are computed on Fold1's test part; real lists are short (tens to a few hundred documents), which
the report states.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..analysis.distinguish_result import first_stable_n
from ..data.synthetic import format_synthetic_spec
from ._common import Settings, describe_dataset, source_for, subplots, timed
from ._fit import fit_scores
from .report import Cell, Report, Table
from .verdicts import Verdict, threshold

TITLE = "Distinguishability of NDCG as lists grow (Wang et al., COLT 2013, §4 and Figures 1–4)"
CLAIM = (
    "Standard NDCG gives the three rankers nearly the same, slowly converging values but orders "
    "them "
    "consistently (Fig. 1); r^−1/2 converges to different limits and distinguishes well (Fig. 2); "
    "2^−r fluctuates without converging and distinguishes poorly, the random ranker scoring "
    "close to "
    "the trained ones (Fig. 3); NDCG@n/5 converges to different limits and distinguishes well "
    "(Fig. 4)."
)
QUICK_NOTE = (
    "--quick: RankSVM trained on the first 400 documents of 10 training queries (ListNet on "
    "10 whole queries), 30 epochs; 6 repetitions and 30 grid points instead of 20 and 60."
)

SCOPE_SYNTHETIC = (
    "This run uses synthetic web-like lists shaped as in the paper (40 queries × 5000 "
    "documents, 40 features, labels 0/1/2; the paper's click-labelled web data are not public). "
    "It tests the shapes the paper describes — convergence with n, which discount separates "
    "the rankers and how early — not the paper's absolute values. With <code>ndcglab reproduce "
    "distinguishability --data LETOR_DIR --out DIR</code> the curves use Fold1 of a LETOR "
    "folder, whose lists are short (at most a few hundred documents), so only the start of "
    "the paper's range of n is covered."
)
SCOPE_REAL = (
    "This run uses Fold1 of <code>{data}</code>. Real LETOR lists are short (at most a few "
    "hundred documents, against 5000 in the paper), so only the start of the paper's range of "
    "n is tested; the claims about limits (large n) cannot be tested here."
)

MEASURES = (
    ("log", "ndcg", "Fig. 1: D(r) = 1/log2(1+r)"),
    ("power", "ndcg(discount=power:0.5)", "Fig. 2: D(r) = r^−1/2"),
    ("exp", "ndcg(discount=exp:2)", "Fig. 3: D(r) = 2^−r"),
    ("cut", "ndcg@0.2n", "Fig. 4: NDCG@k, k = n/5, D(r) = 1/log2(1+r)"),
)
RANKERS = ("RankSVM", "ListNet", "random")
CHECKPOINTS = (10, 100, 1000)


def _data(settings: Settings) -> tuple[Any, Any, dict[str, Any]]:
    """(train, test, description) for the synthetic run."""
    from ..data.synthetic import make_synthetic

    if settings.mode == "tiny":
        big = make_synthetic("web40", seed=settings.seed, n_queries=8, docs_per_query=300)
        n_test = 4
    else:
        big = make_synthetic("web40", seed=settings.seed, n_queries=80)
        n_test = 40
    test = big.subset(np.arange(n_test))
    train = big.subset(np.arange(n_test, big.n_queries))
    test.source = f"{format_synthetic_spec('web40', settings.seed)} (queries 1–{n_test})"
    train.source = (
        f"{format_synthetic_spec('web40', settings.seed)} (queries {n_test + 1}–{big.n_queries})"
    )
    return (
        train,
        test,
        {"generator": f"make_synthetic('web40', seed={settings.seed}, n_queries={big.n_queries})"},
    )


def _stability_panel(ax: Any, res: Any, measure: str) -> None:
    """One panel of the stability figure: the full ranking's share as a wide grey band drawn
    first, then each pair's share on top in its own colour and line style, so no curve hides
    another."""
    grid = res.grid
    if len(res.rankers) > 2:
        ax.step(
            grid,
            res.ranking_stability(measure),
            where="post",
            color="0.6",
            lw=7,
            alpha=0.45,
            solid_capstyle="butt",
            label="all three (full ranking)",
            zorder=1,
        )
    styles = ("-", "--", ":")
    for i, ((x, y), frac) in enumerate(res.pair_stability(measure).items()):
        ax.step(
            grid,
            frac,
            where="post",
            ls=styles[i % len(styles)],
            lw=1.8,
            label=f"{x} vs {y}",
            zorder=2 + i,
        )
    if grid[-1] / max(grid[0], 1) > 20:
        ax.set_xscale("log")
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel(
        "n (first n documents of each list, "
        + ("file order)" if res.order == "file" else f"shuffled; {res.n_repeats} repetitions)"),
        fontsize="small",
    )
    ax.set_ylabel("share of repetitions")
    ax.legend(fontsize="small", loc="lower right")


def run(report: Report, settings: Settings) -> None:
    from ..analysis.distinguish import distinguishability

    source = source_for(settings) if settings.data is not None else None
    repeats = settings.pick(20, 6, 2)
    points = settings.pick(60, 30, 8)
    epochs = settings.pick(100, 30, 3)
    if source is None:
        train, test, gen = _data(settings)
        svm_docs, svm_queries = settings.pick((600, 40), (400, 10), (100, 4))
        net_queries = settings.pick(40, 10, 4)
        svm_train = train.subset(np.arange(min(svm_queries, train.n_queries))).truncate(svm_docs)
        net_train = train.subset(np.arange(min(net_queries, train.n_queries)))
        label = "synthetic web40"
        from ._common import array_sha256

        report.add_dataset(
            {
                "name": "synthetic web40 (test: 40 queries × 5000 documents)",
                "kind": "synthetic",
                "source": test.source,
                "params": gen,
                **describe_dataset(test),
                "hashes": {
                    "test_arrays_sha256": array_sha256(test),
                    "train_arrays_sha256": array_sha256(train),
                },
                "description": "test set shaped like Wang et al.'s; training set: further "
                "queries of the "
                "same generator",
            }
        )
        train_note = (
            f"RankSVM trained on the first {svm_docs} documents of {svm_train.n_queries} "
            f"training queries (its pairwise loss is quadratic in the list length); "
            f"ListNet on {net_train.n_queries} whole training queries"
        )
    else:
        fold = next(source.folds(1, with_vali=False))
        svm_train = net_train = fold.train
        test = fold.test
        label = f"{source.label} {fold.name} test"
        report.add_dataset(source.describe())
        train_note = f"RankSVM and ListNet trained on {fold.name}'s training part"
    lengths = test.query_lengths
    n_max = int(lengths.max())
    report.seeds.update({"random_ranker": settings.seed + 7, "repetitions": settings.seed + 11})

    fits = {}
    for name, loss, train in (("RankSVM", "ranksvm", svm_train), ("ListNet", "listnet", net_train)):
        settings.say(f"distinguishability: {name}")
        with timed(report.timings, name):
            fits[name] = fit_scores(
                loss,
                train,
                {"test": test},
                epochs=epochs,
                seed=settings.seed,
                preset="standard",
                validation_measure="ndcg@10",
                normalize=settings.normalize,
            )
    svm, net = fits["RankSVM"], fits["ListNet"]
    rnd = np.random.default_rng(settings.seed + 7).uniform(-1.0, 1.0, test.n_docs)
    scores = {"RankSVM": svm.scores["test"], "ListNet": net.scores["test"], "random": rnd}

    grid = np.unique(
        np.concatenate(
            [
                np.round(np.geomspace(1, n_max, points)).astype(np.int64),
                [c for c in CHECKPOINTS if c <= n_max],
                [n_max],
            ]
        )
    )
    settings.say("distinguishability: " + "curves")
    with timed(report.timings, "curves"):
        res = distinguishability(
            test,
            scores,
            [m for _, m, _ in MEASURES],
            preset="standard",
            grid=grid,
            repeats=repeats,
            seed=settings.seed + 11,
        )
    for key, resolved in res.conventions.items():
        report.add_convention(
            key,
            {
                "resolved": str(resolved),
                "preset": "standard",
                "S_n": "first n documents of each list after a seeded shuffle",
            },
        )

    report.text(
        f"Data: {label}; {test.n_queries} test queries, list lengths {int(lengths.min())}–{n_max} "
        f"(median {float(np.median(lengths)):.0f}). {train_note}; {epochs} epochs of full-batch "
        f"gradient descent, no model selection. Random ranker: scores uniform on [−1, 1]. "
        f"{repeats} repetitions, each putting the documents of every list in a new random order "
        "before taking S_n = the first n; bands ±1 sd over repetitions."
    )
    if source is not None:
        report.text(
            f"Real LETOR lists are short (at most {n_max} documents here, against 5000 in the "
            "paper): the curves cover only the first part of the paper's range, and for n beyond a "
            "list's length the whole list is used, so the curves flatten."
        )

    # ------------------------------------------------------------------ figures
    fig, axes = subplots(4, ncols=2, size=(6.3, 4.5))
    for ax, (_key, m, title) in zip(axes, MEASURES):
        res.plot(ax, measure=m)
        ax.set_title(title, fontsize="medium")
        ax.set_ylabel("mean NDCG of S_n")
        lo, hi = ax.get_ylim()
        ax.set_ylim(max(lo, 0.0), min(hi, 1.0))  # NDCG lies in [0, 1]; so does the band shown
    fig.suptitle(f"{label}: mean NDCG of S_n vs n (bands ±1 sd over {repeats} repetitions)")
    fig.tight_layout()
    report.add_figure(
        "curves",
        fig,
        title="Mean NDCG vs list size n (Figures 1–4)",
        caption="RankSVM, ListNet and the random ranker; one panel per discount; bands ±1 sd "
        "over repetitions, cut at [0, 1]. Measures: "
        + "; ".join(f"{t.split(':')[0]}: {res.conventions[m]}" for _, m, t in MEASURES),
    )
    fig, axes = subplots(4, ncols=2, size=(6.3, 4.3))
    for ax, (_key, m, title) in zip(axes, MEASURES):
        _stability_panel(ax, res, m)
        ax.set_title(title, fontsize="medium")
    fig.tight_layout()
    report.add_figure(
        "stability",
        fig,
        title="Distinguishability: is the order already final?",
        caption="y axis: the share of repetitions in which the order of each pair of rankers "
        "at n stays the same for every larger n (coloured lines, one style per pair); the wide "
        "grey band underneath: the same for the order of all three — where a pair's line runs "
        "inside the band, the full ranking is final exactly when that pair's order is",
    )

    # ------------------------------------------------------------------ tables
    checkpoints = [c for c in CHECKPOINTS if c <= n_max]
    rows = []
    summary: dict[str, Any] = {}
    for key, m, title in MEASURES:
        mu, sd = res.mean(m), res.std(m)
        g = res.grid
        rank_frac = res.ranking_stability(m)
        pairs = res.pair_stability(m)
        idx = {c: int(np.flatnonzero(g == c)[0]) for c in checkpoints}
        trained_vs_random = np.minimum(pairs[("RankSVM", "random")], pairs[("ListNet", "random")])
        row: list[Any] = [title, str(res.conventions[m])]
        row += [
            Cell(float(mu[k, -1]), None if math.isnan(sd[k, -1]) else float(sd[k, -1]))
            for k in range(3)
        ]
        order = " > ".join(RANKERS[k] for k in np.argsort(-mu[:, -1]))
        row.append(order)
        row += [float(trained_vs_random[idx[c]]) for c in checkpoints]
        row += [float(pairs[("RankSVM", "ListNet")][idx[c]]) for c in checkpoints]
        row += [float(rank_frac[idx[c]]) for c in checkpoints]
        row.append(res.ranking_stable_from(m, level=0.9))
        rows.append(row)
        i10 = idx.get(10, 0)
        i_mid = int(np.argmin(np.abs(g - max(1, n_max // 10))))
        i_fifth = int(np.argmin(np.abs(g - max(1, n_max // 5))))
        i_probe = int(np.argmin(np.abs(g - max(2, n_max // 50))))
        summary[key] = {
            "measure": m,
            "final": {r: float(mu[k, -1]) for k, r in enumerate(RANKERS)},
            "final_sd": {r: float(sd[k, -1]) for k, r in enumerate(RANKERS)},
            "at_10": {r: float(mu[k, i10]) for k, r in enumerate(RANKERS)},
            "trained_vs_random": {str(c): float(trained_vs_random[idx[c]]) for c in checkpoints},
            "svm_vs_listnet": {
                str(c): float(pairs[("RankSVM", "ListNet")][idx[c]]) for c in checkpoints
            },
            "ranking": {str(c): float(rank_frac[idx[c]]) for c in checkpoints},
            "ranking_stable_from_90": res.ranking_stable_from(m, level=0.9),
            "trained_vs_random_stable_from": first_stable_n(g, trained_vs_random, 1.0),
            "n_mid": int(g[i_mid]),
            "at_mid": {r: float(mu[k, i_mid]) for k, r in enumerate(RANKERS)},
            "n_fifth": int(g[i_fifth]),
            "sd_fifth": {r: float(sd[k, i_fifth]) for k, r in enumerate(RANKERS)},
            "n_probe": int(g[i_probe]),
            "sd_probe": {r: float(sd[k, i_probe]) for k, r in enumerate(RANKERS)},
        }
    head = ["figure", "measure (resolved)"]
    n_final = 2 + 3 + 1  # figure, measure, three values, order
    final_cols = [
        *head,
        f"RankSVM at n={n_max}",
        f"ListNet at n={n_max}",
        f"random at n={n_max}",
        f"order at n={n_max}",
    ]
    report.add_table(
        Table(
            "final_values",
            f"Final values (n = {n_max})",
            final_cols,
            [row[:n_final] for row in rows],
            digits=3,
            caption="mean over queries at the largest n, ± sd over repetitions",
        )
    )
    cols = ["figure"]
    cols += [f"trained vs random, n={c}" for c in checkpoints]
    cols += [f"RankSVM vs ListNet, n={c}" for c in checkpoints]
    cols += [f"all three, n={c}" for c in checkpoints]
    cols.append("all three final (≥90% of repetitions) from n")
    report.add_table(
        Table(
            "distinguishability",
            "The distinguishability estimate: is the order at n already final?",
            cols,
            [[row[0], *row[n_final:]] for row in rows],
            digits=3,
            caption="fraction of repetitions in which the order at n is the one kept for every "
            "larger n of the grid (trained vs random: both trained rankers against the random "
            "one)",
        )
    )

    _findings(report, summary, res, n_max)
    report.results["curves"] = res.to_dict()
    report.results["summary"] = summary
    report.results["training"] = {
        "RankSVM": {
            "epochs_run": svm.epochs_run,
            "stop": svm.stop_reason,
            "lr": svm.lr,
            "train_queries": svm_train.n_queries,
            "train_docs": svm_train.n_docs,
        },
        "ListNet": {
            "epochs_run": net.epochs_run,
            "stop": net.stop_reason,
            "lr": net.lr,
            "train_queries": net_train.n_queries,
            "train_docs": net_train.n_docs,
        },
    }


#: trained − random gap at most this: the values are "close" (the paper's Fig. 1 and 3)
CLOSE = 0.05
#: trained − random gap at least this: the values are clearly apart (between: inconclusive)
APART = 0.10
#: share of repetitions whose order is already final: "distinguishes" from this level on ...
STABLE = 0.9
#: ... and "does not distinguish" below this one
UNSTABLE = 0.5


def _findings(report: Report, s: dict[str, Any], res: Any, n_max: int) -> None:
    def gap(key: str, where: str) -> float:
        d = s[key][where]
        return min(d["RankSVM"], d["ListNet"]) - d["random"]

    def tvr(key: str, c: int) -> float:
        return s[key]["trained_vs_random"].get(str(c)) or 0.0

    probe = 100 if n_max >= 1000 else 10
    n_mid = s["log"]["n_mid"]
    g_log_mid, g_log_end = gap("log", "at_mid"), gap("log", "final")
    close_txt = (
        "close" if g_log_end <= CLOSE else ("not yet close" if g_log_end < APART else "not close")
    )
    report.add_finding(
        "Fig. 1 / Thm 1: with the log discount the three rankers' NDCG values are close and move "
        "towards the same limit 1",
        f"trained − random: {g_log_mid:+.3f} at n = {n_mid}, {g_log_end:+.3f} at n = {n_max} "
        f"({close_txt}); values at n = {n_max}: "
        + ", ".join(f"{r} {v:.3f}" for r, v in s["log"]["final"].items()),
        threshold(
            g_log_end <= CLOSE,
            g_log_end >= APART and g_log_end >= g_log_mid,
            f"close = the smaller trained − random gap at the largest n is at most {CLOSE:g}; "
            f"agrees if close; disagrees if the gap is at least {APART:g} and did not shrink "
            f"since n = {n_mid}; otherwise inconclusive (a gap that is still shrinking is what "
            "the theorem's slow 1/log n rate predicts, but the values are not close)",
        ),
    )
    report.add_finding(
        "Fig. 1 / Thm 2: standard NDCG still distinguishes the rankers consistently",
        f"trained vs random order already final at n = {probe} in {tvr('log', probe):.0%} of "
        f"repetitions; final from n = {s['log']['trained_vs_random_stable_from']} in all",
        _distinguishes("log", tvr("log", probe), probe),
    )
    g_pow = gap("power", "final")
    report.add_finding(
        "Fig. 2 / Thms 3–4: with r^−1/2 the rankers converge to different limits and are well "
        "distinguished",
        f"trained − random at n = {n_max}: {g_pow:+.3f} (log discount: {g_log_end:+.3f}); "
        f"order final at n = {probe} in {tvr('power', probe):.0%} of repetitions",
        _apart_and_distinguished(g_pow, tvr("power", probe), probe),
    )

    def sd_pair(key: str) -> tuple[float, float]:
        return (
            float(np.mean(list(s[key]["sd_probe"].values()))),
            float(np.mean(list(s[key]["sd_fifth"].values()))),
        )

    (e0, e1), (p0, p1) = sd_pair("exp"), sd_pair("power")
    n0, n1 = s["exp"]["n_probe"], s["exp"]["n_fifth"]
    ok = all(math.isfinite(v) and v > 0 for v in (e0, e1, p0, p1)) and n1 > n0
    r_exp = e1 / e0 if ok else math.nan
    r_pow = p1 / p0 if ok else math.nan
    report.add_finding(
        "Fig. 3 / Thm 6: with 2^−r NDCG does not settle as n grows",
        f"sd over repetitions (different S_n), mean over the rankers: 2^−r {e0:.3f} at n = {n0} → "
        f"{e1:.3f} at n = {n1} (ratio {r_exp:.2f}); r^−1/2 {p0:.3f} → {p1:.3f} "
        f"(ratio {r_pow:.2f})",
        threshold(
            ok and r_exp > r_pow and e1 > p1,
            ok and not (r_exp > r_pow or e1 > p1),
            f"agrees if, from n = {n0} to n = {n1}, the spread over repetitions of 2^−r shrinks "
            "by a smaller factor than that of r^−1/2 (a convergent discount) and stays larger; "
            "disagrees if it shrinks by a larger factor and ends smaller; otherwise (or "
            "without two grid points to compare) inconclusive",
        ),
    )
    g_exp = gap("exp", "final")
    report.add_finding(
        "Fig. 3: with 2^−r the random ranker scores close to the trained ones",
        f"trained − random at n = {n_max}: {g_exp:+.3f} (r^−1/2: {g_pow:+.3f}, log: "
        f"{g_log_end:+.3f}); trained-vs-random order final at n = {probe} in "
        f"{tvr('exp', probe):.0%} of repetitions (log: {tvr('log', probe):.0%})",
        threshold(
            g_exp <= CLOSE,
            g_exp >= APART,
            f"close = the smaller trained − random gap at the largest n is at most {CLOSE:g}: "
            f"agrees; disagrees if the gap is at least {APART:g}; otherwise inconclusive",
        ),
    )
    close = {k: s[k]["svm_vs_listnet"] for k in ("exp", "log", "power")}
    common = [c for c in close["exp"] if int(c) < n_max]
    report.add_finding(
        "Fig. 3 / Thm 6: 2^−r has poor distinguishing power (two similar rankers: RankSVM vs "
        "ListNet)",
        "share of repetitions whose RankSVM-vs-ListNet order is already final: "
        + "; ".join(
            f"n = {c}: 2^−r {close['exp'][c]:.0%}, log {close['log'][c]:.0%}, "
            f"r^−1/2 {close['power'][c]:.0%}"
            for c in common
        ),
        threshold(
            bool(common)
            and all(close["exp"][c] <= min(close["log"][c], close["power"][c]) for c in common)
            and any(close["exp"][c] < close["log"][c] for c in common),
            bool(common)
            and any(close["exp"][c] > max(close["log"][c], close["power"][c]) for c in common),
            "agrees if at every checkpoint n below the largest the share of repetitions whose "
            "RankSVM-vs-ListNet order is already final is for 2^−r at most that of the log "
            "discount and of r^−1/2, and strictly below the log discount's at one checkpoint; "
            "disagrees if at some checkpoint it is above both; otherwise inconclusive",
        ),
    )
    g_cut = gap("cut", "final")
    report.add_finding(
        "Fig. 4 / Thm 8: NDCG@n/5 converges to different limits and distinguishes well",
        f"trained − random at n = {n_max}: {g_cut:+.3f} (log without cut-off: {g_log_end:+.3f}); "
        f"order final at n = {probe} in {tvr('cut', probe):.0%} of repetitions",
        _apart_and_distinguished(g_cut, tvr("cut", probe), probe),
    )


def _distinguishes(key: str, share: float, probe: int) -> Verdict:
    """Consistent distinguishability at the probe size, by the stated shares."""
    return threshold(
        share >= STABLE,
        share < UNSTABLE,
        f"agrees if the trained-vs-random order is already final at n = {probe} in at least "
        f"{STABLE:.0%} of repetitions; disagrees if in fewer than {UNSTABLE:.0%}; otherwise "
        "inconclusive",
    )


def _apart_and_distinguished(g: float, share: float, probe: int) -> Verdict:
    """ "Different limits and distinguishes well": a clear gap and a stable order."""
    return threshold(
        g >= APART and share >= STABLE,
        g <= CLOSE or share < UNSTABLE,
        f"different limits = the smaller trained − random gap at the largest n is at least "
        f"{APART:g}; agrees if so and the trained-vs-random order is final at n = {probe} in at "
        f"least {STABLE:.0%} of repetitions; disagrees if the gap is at most {CLOSE:g} or the "
        f"order is final in fewer than {UNSTABLE:.0%}; otherwise inconclusive",
    )
