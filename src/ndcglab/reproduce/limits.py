"""``limits``: Wang et al. (COLT 2013) Theorems 1, 3, 5–13 — limits of NDCG(f, S_n) vs simulation.

Protocol
--------
Lists of size n are drawn from the paper's i.i.d. model by
:func:`ndcglab.analysis.simulate.simulate_ndcg`
(canonical scores s ~ U[0, 1], labels drawn given s), ranked by s, and scored with the measure
library's gain and discount objects; the limits come from
:func:`ndcglab.analysis.limits.theoretical_limit`.
Three rankers, stated by ``ybar(s) = P[Y = 1 | f̃(X) = s]`` (binary labels) or a graded model:

* ``informative``: ``ybar(s) = 0.3 + 0.5 s`` (p = 0.55, ybar(1) = 0.8) — a useful ranker;
* ``random``:      ``ybar(s) = 0.55`` — a ranker that ignores relevance;
* ``graded``:      labels 0/1/2 with ``P[Y=2|s] = 0.05 + 0.25 s²``, ``P[Y=1|s] = 0.2 + 0.2 s``
  (Theorems 10–13; gains 2^y − 1).

For each (theorem, measure) the table gives the limit and the simulated mean ± standard deviation
over independent draws at n = 10^3 … 10^6 (10^5 with ``--quick``), and the gap at the largest n.
The figure shows mean NDCG against n on a log axis with each limit dashed, and the spread across
draws against n: it shrinks for the convergent discounts and stays put for 2^−r (Theorem 6).
The data (``--data``) are not used: the theorems are about the i.i.d. model.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._common import Settings, subplots, timed
from .report import Cell, Report, Table
from .verdicts import DISAGREES, INCONCLUSIVE, Verdict, threshold, within

#: ``--data`` is not read (``ndcglab list experiments`` does not offer it)
USES_DATA = False
TITLE = "Limits of NDCG as lists grow: theorems vs simulation (Wang et al., COLT 2013)"
CLAIM = (
    "Standard NDCG (1/log(1+r)) tends to 1 for every ranker (Thm 1); with r^−β, 0<β<1, it tends to "
    "(1−β)∫ybar(s)(1−s)^−β ds / p^(1−β) (Thm 3); with 1/r to ybar(1) (Thm 5); with a summable "
    "discount such as 2^−r it does not converge (Thm 6); cut-offs k = o(n) and k = c·n have the "
    "limits of Thms 7–9, and graded labels those of Thms 10–13."
)
USES_TORCH = False  # simulation only: no model is trained
SCOPE_SYNTHETIC = SCOPE_REAL = (
    "This experiment simulates the theorems' own model (lists drawn i.i.d.: canonical scores "
    "uniform on [0, 1], labels drawn given the score), so it tests the theorems' limits directly, "
    "at finite n up to the largest size shown. Real data do not enter: <code>--data</code> is "
    "ignored, because LETOR lists (tens to a few hundred documents) are far too short to show "
    "limits."
)
QUICK_NOTE = (
    "--quick: lists up to n = 10^5 (not 10^6) and fewer independent draws; the gaps at "
    "the largest n are therefore larger than in a full run."
)


def _informative(s: Any) -> Any:
    return 0.3 + 0.5 * np.asarray(s, dtype=np.float64)


def _random(s: Any) -> Any:
    return np.full(np.shape(s), 0.55) if np.ndim(s) else 0.55


def _graded_probs(s: np.ndarray) -> np.ndarray:
    s = np.asarray(s, dtype=np.float64)
    p2 = 0.05 + 0.25 * s**2
    p1 = 0.2 + 0.2 * s
    return np.stack([1.0 - p1 - p2, p1, p2], axis=-1)


RANKERS = {
    "informative": "ybar(s) = 0.3 + 0.5·s (p = 0.55, ybar(1) = 0.8)",
    "random": "ybar(s) = 0.55 (scores carry no information)",
    "graded": "labels 0/1/2: P[Y=2|s] = 0.05 + 0.25·s², P[Y=1|s] = 0.2 + 0.2·s (gain 2^y − 1)",
}

#: (theorem, ranker, measure spec, cut at k(n) = √n?, discount text, cut-off text)
CASES: list[tuple[str, str, str, bool, str, str]] = [
    ("1", "informative", "ndcg", False, "1/log2(1+r)", "none"),
    ("1", "random", "ndcg", False, "1/log2(1+r)", "none"),
    ("3", "informative", "ndcg(discount=power:0.5)", False, "r^−1/2", "none"),
    ("3", "random", "ndcg(discount=power:0.5)", False, "r^−1/2", "none"),
    ("5", "informative", "ndcg(discount=zipf)", False, "1/r", "none"),
    ("5", "random", "ndcg(discount=zipf)", False, "1/r", "none"),
    ("6", "informative", "ndcg(discount=exp:2)", False, "2^−r", "none"),
    ("6", "random", "ndcg(discount=exp:2)", False, "2^−r", "none"),
    ("7", "informative", "ndcg", True, "1/log2(1+r)", "k = √n (o(n))"),
    ("8", "informative", "ndcg@0.2n", False, "1/log2(1+r)", "k = 0.2·n"),
    ("9", "informative", "ndcg(discount=power:0.5)@0.2n", False, "r^−1/2", "k = 0.2·n"),
    ("10", "graded", "ndcg(discount=power:0.5)", False, "r^−1/2", "none"),
    ("11", "graded", "ndcg", True, "1/log2(1+r)", "k = √n (o(n))"),
    ("12", "graded", "ndcg@0.2n", False, "1/log2(1+r)", "k = 0.2·n"),
    ("13", "graded", "ndcg(discount=power:0.5)@0.2n", False, "r^−1/2", "k = 0.2·n"),
]


def _sqrt_cutoff(n: int) -> int:
    return max(1, math.isqrt(int(n)))


def run(report: Report, settings: Settings) -> None:
    from ..analysis.limits import GradedModel
    from ..analysis.simulate import simulate_ndcg
    from ..measures import parse_measure

    top = settings.pick(6, 5, 3)
    sizes = np.unique(np.round(np.logspace(1, top, 2 * (top - 1) + 1)).astype(np.int64))
    table_sizes = [10**e for e in range(3, top + 1)] if top >= 3 else [int(sizes[-1])]
    base_draws = settings.pick(40, 16, 3)
    models: dict[str, Any] = {
        "informative": _informative,
        "random": _random,
        "graded": GradedModel(labels=(0, 1, 2), probabilities=_graded_probs),
    }
    if settings.data is not None:
        report.text(
            f"--data {settings.data} is not used: the theorems are about lists drawn i.i.d. from a "
            "model, which this experiment simulates (real LETOR lists are too short to show "
            "limits)."
        )
    report.seeds["simulation"] = {f"case{i}": settings.seed + 1000 * i for i in range(len(CASES))}
    report.text(
        "Each row simulates lists of size n from the i.i.d. model of the paper (canonical scores "
        "s ~ U[0,1], labels drawn given s, no ties), ranks them by s and computes NDCG with the "
        "measure library's gain and discount. Mean ± standard deviation over independent draws; "
        "the limit is the theorem's formula evaluated by numerical integration. Rankers: "
        + "; ".join(f"{k}: {v}" for k, v in RANKERS.items())
        + ". "
        "For 1/r the spread across draws shrinks only like 1/log n, so those rows use four times "
        "as many draws to pin down the mean."
    )

    results: list[dict[str, Any]] = []
    sims: dict[int, Any] = {}
    for i, (thm, ranker, spec, sublinear, disc, cut) in enumerate(CASES):
        draws = base_draws * (4 if "zipf" in spec else 1)
        settings.say(f"limits: theorem {thm} ({ranker}): {spec}, {draws} draws")
        with timed(report.timings, f"theorem {thm} ({ranker})"):
            sim = simulate_ndcg(
                models[ranker],
                sizes,
                spec,
                draws=draws,
                seed=settings.seed + 1000 * i,
                cutoff=_sqrt_cutoff if sublinear else None,
            )
        sims[i] = sim
        m = parse_measure(spec)
        conv = m.convention()
        conv.update(
            {"ties": "none (continuous scores)", "empty": "zero (list without relevant doc)"}
        )
        if sublinear:
            conv["cutoff"] = "k(n) = floor(sqrt(n))"
        printed = str(m) + ("@k(n)=√n" if sublinear else "")
        report.add_convention(printed, conv)
        lim = sim.limit
        at = [int(np.flatnonzero(sizes == n)[0]) for n in table_sizes]
        mean, sd = sim.mean, sim.std
        last = at[-1]
        gap = (mean[last] - lim.value) if lim is not None and lim.converges else math.nan
        results.append(
            {
                "theorem": thm,
                "ranker": ranker,
                "measure": printed,
                "discount": disc,
                "cutoff": cut,
                "limit": None if lim is None else lim.value,
                "converges": None if lim is None else lim.converges,
                "statement": None if lim is None else lim.statement,
                "draws": draws,
                "sizes": sizes.tolist(),
                "mean": mean.tolist(),
                "std": sd.tolist(),
                "gap_at_largest_n": gap,
                "se_at_largest_n": float(sd[last] / math.sqrt(draws)),
            }
        )

    # ------------------------------------------------------------------ table
    cols = ["theorem", "ranker", "measure", "discount", "cut-off", "limit"]
    cols += [f"n = 10^{round(math.log10(n))}" for n in table_sizes]
    cols += ["gap at largest n", "std ratio: largest n / 10^3"]
    rows = []
    for res in results:
        at = [int(np.flatnonzero(sizes == n)[0]) for n in table_sizes]
        row: list[Any] = [
            res["theorem"],
            res["ranker"],
            res["measure"],
            res["discount"],
            res["cutoff"],
            res["limit"] if res["converges"] else "no limit (Thm 6)",
        ]
        row += [Cell(res["mean"][j], res["std"][j]) for j in at]
        row.append(res["gap_at_largest_n"] if res["converges"] else None)
        row.append(res["std"][at[-1]] / res["std"][at[0]] if res["std"][at[0]] > 0 else None)
        rows.append(row)
    report.add_table(
        Table(
            "limits",
            "Theorems vs simulation",
            cols,
            rows,
            caption="simulated NDCG, mean ± standard deviation over independent draws",
            notes=[
                f"draws per size: {base_draws} ({4 * base_draws} for 1/r)",
                "gap = simulated mean at the largest n − limit; std ratio = spread at the largest "
                "n / "
                "spread at n = 10^3 (≈ 1: the measure does not settle)",
            ],
        )
    )

    # ------------------------------------------------------------------ figures
    from .._compat import pyplot

    plt = pyplot()
    panels = [
        ("binary labels, informative ranker: full lists", [0, 2, 4, 6]),
        ("binary labels, random ranker: full lists", [1, 3, 5, 7]),
        ("binary labels, informative ranker: cut-offs", [8, 9, 10]),
        ("graded labels (Theorems 10–13)", [11, 12, 13, 14]),
    ]
    fig, axes = subplots(len(panels), ncols=2, size=(6.4, 5.6))
    for ax, (title, idx) in zip(axes, panels):
        for i in idx:
            case = CASES[i]
            what = case[4] + ("" if case[5] == "none" else f", {case[5]}")
            _plot_sim(ax, sims[i], f"Thm {case[0]}: D(r) = {what}")
        ax.set_title(title, fontsize="medium")
        ax.set_xlabel("list size n (log scale)")
        ax.set_ylabel("NDCG(f, S_n)")
        ax.set_ylim(0.0, 1.0)
        # below the axes, so that no legend covers a curve or band
        ax.legend(
            fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False
        )
    fig.suptitle("Simulated NDCG vs n; dashed: the theorem's limit")
    fig.tight_layout()
    report.add_figure(
        "ndcg_vs_n",
        fig,
        title="NDCG vs list size n",
        caption=f"line: mean over independent draws; band: {BAND[0]:.0%}–{BAND[1]:.0%} "
        "quantiles of the draws (NDCG lies in [0, 1], so the band does too); dashed: the "
        "theorems' limits (none for 2^−r, Theorem 6). Every measure uses gain 2^y − 1 (exp2), "
        "no ties (continuous scores), and 0 for a list without a relevant document; the "
        "discount and cut-off are in the legend",
    )

    fig, ax = plt.subplots(figsize=(10.5, 4.8))
    for i in [0, 2, 4, 6, 7, 9]:
        ax.plot(
            sizes,
            sims[i].std,
            marker="o",
            ms=3,
            label=f"Thm {CASES[i][0]} ({CASES[i][1]}): {results[i]['measure']}",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("list size n (log scale)")
    ax.set_ylabel("sd of NDCG across draws")
    ax.set_title("Spread vs n: 2^−r does not settle")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    fig.tight_layout()
    report.add_figure(
        "spread_vs_n",
        fig,
        title="Spread across draws vs n",
        caption="for convergent discounts the spread shrinks as n grows; for 2^−r it "
        "stays of the same size (the measure keeps fluctuating); gain 2^y − 1, no ties",
    )

    # ------------------------------------------------------------------ findings
    n_top = f"10^{round(math.log10(table_sizes[-1]))}"

    def gap_finding(i: int, claim: str, tol: float) -> None:
        r = results[i]
        g = r["gap_at_largest_n"]
        report.add_finding(
            claim,
            f"{r['measure']} ({r['ranker']}): limit {r['limit']:.4f}, simulated mean at "
            f"n = {n_top} {r['mean'][-1]:.4f} (gap {g:+.4f}, standard error "
            f"{r['se_at_largest_n']:.4f}, {r['draws']} draws)",
            limit_verdict(
                r["mean"][-1],
                r["limit"],
                r["se_at_largest_n"],
                first_gap=r["mean"][0] - r["limit"],
                tol=tol,
                n_first=int(sizes[0]),
            ),
        )

    g0, g1 = results[0]["gap_at_largest_n"], results[1]["gap_at_largest_n"]
    first_gap = results[1]["limit"] - results[1]["mean"][0]
    rose = results[1]["mean"][-1] > results[1]["mean"][0]
    report.add_finding(
        "Theorem 1: with 1/log(1+r) NDCG tends to 1 for every ranker",
        f"informative {results[0]['mean'][-1]:.4f}, random {results[1]['mean'][-1]:.4f} "
        f"at n = {n_top} "
        f"(gaps {g0:+.4f}, {g1:+.4f}; random ranker's gap was {-first_gap:+.4f} at n = 10): both "
        "climb towards 1, slowly (the gap shrinks like 1/log n)",
        threshold(
            rose and abs(g1) < abs(first_gap),
            not rose and abs(g1) >= abs(first_gap),
            "moves towards the limit: agrees if the random ranker's mean NDCG rises from n = 10 "
            f"to n = {n_top} and its gap to 1 shrinks; disagrees if it neither rises nor gets "
            "closer; otherwise inconclusive (the rate, 1/log n, is too slow for a gap test)",
        ),
    )
    gap_finding(2, "Theorem 3: with r^−1/2 NDCG tends to (1−β)∫ybar(s)(1−s)^−β ds / p^(1−β)", 0.01)
    gap_finding(3, "Theorem 3 (random ranker): the limit is p^β", 0.01)
    gap_finding(4, "Theorem 5: with 1/r NDCG tends to ybar(1)", 0.01)
    gap_finding(
        5,
        "Theorem 5 (random ranker): with 1/r NDCG tends to ybar(1) = p (slowly: the random "
        "ranker's DCG picks up p·H_n while the ideal is H_{pn}; the gap is ≈ −p·ln p / ln(pn))",
        0.01,
    )
    for i in (6, 7):
        r = results[i]
        ratio = r["std"][-1] / r["std"][0] if r["std"][0] > 0 else math.nan
        report.add_finding(
            f"Theorem 6: with 2^−r NDCG does not converge ({r['ranker']} ranker)",
            f"spread across draws {r['std'][0]:.3f} at n = 10 and {r['std'][-1]:.3f} "
            f"at n = {n_top} "
            f"(ratio {ratio:.2f}); compare r^−1/2: {results[i - 4]['std'][-1]:.4f}",
            threshold(
                r["std"][-1] > SPREAD_HIGH and r["std"][-1] > 10 * results[i - 4]["std"][-1],
                r["std"][-1] <= SPREAD_LOW,
                f"agrees if the spread across draws at n = {n_top} exceeds {SPREAD_HIGH:g} and "
                "10 times that of r^−1/2 (a convergent discount); disagrees if it is at most "
                f"{SPREAD_LOW:g} (settled); otherwise inconclusive",
            ),
        )
    for i, thm in ((8, "7"), (9, "8"), (10, "9"), (11, "10"), (12, "11"), (13, "12"), (14, "13")):
        gap_finding(i, f"Theorem {thm}: {results[i]['measure']} tends to the stated limit", 0.02)

    report.results["cases"] = results
    report.results["sizes"] = sizes.tolist()
    report.results["table_sizes"] = table_sizes
    report.results["rankers"] = RANKERS


#: band of the NDCG-vs-n figure: these quantiles of the draws
BAND = (0.1, 0.9)
#: Theorem 6: a spread across draws above this at the largest n is "does not settle" ...
SPREAD_HIGH = 0.05
#: ... and one at most this is "settled"
SPREAD_LOW = 0.01


def limit_verdict(
    mean: float,
    limit: float,
    se: float,
    *,
    first_gap: float,
    tol: float,
    n_first: int,
) -> Verdict:
    """A limit claim at finite n: the tolerance rule, except that a gap still shrinking cannot
    refute a limit (the theorems state limits, not rates)."""
    v = within(mean, limit, tol, se=se, what="simulated mean")
    rule = (
        v.rule
        + f"; a gap beyond the tolerance that is still smaller than at n = {n_first} counts as "
        "inconclusive (a limit cannot be refuted at finite n while the gap shrinks)"
    )
    if v.verdict == DISAGREES and abs(mean - limit) < abs(first_gap):
        return Verdict(
            INCONCLUSIVE,
            rule,
            v.detail,
            f"beyond ±{tol:g} of the limit but still closing (gap {first_gap:+.4f} at "
            f"n = {n_first}) ({v.detail})",
        )
    return Verdict(v.verdict, rule, v.detail, v.reason)


def _plot_sim(ax: Any, sim: Any, label: str) -> None:
    """Mean NDCG vs n with a quantile band over draws (inside [0, 1]) and the limit dashed."""
    (line,) = ax.plot(sim.sizes, sim.mean, marker="o", ms=3, label=label)
    if sim.values.shape[0] > 1:
        lo, hi = np.quantile(sim.values, BAND, axis=0)
        ax.fill_between(sim.sizes, lo, hi, color=line.get_color(), alpha=0.2, lw=0)
    if sim.limit is not None and sim.limit.converges:
        ax.axhline(sim.limit.value, color=line.get_color(), ls="--", lw=1)
    ax.set_xscale("log")
