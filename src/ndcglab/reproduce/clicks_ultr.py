"""``clicks``: unbiased learning to rank from simulated clicks — naive, IPS (true and estimated
propensities), DLA, doubly robust and the affine correction against the skyline.

Protocol. The first fold's training queries (the embedded synthetic data, or ``--data``) are
shown to simulated users: a stochastic logging policy (Plackett–Luce, temperature 1, over the
judged labels plus standard normal noise, seeded) shows the top 10 of each session, and clicks
follow a position-based model ``pbm(eta=η)`` for three bias strengths (``η`` = 0.5, 1, 2;
examination ``j^−η``) or trust bias ``trust(eta=1)`` (``P(click) = α_j·a + β_j``), with the
attractiveness ``a(y) = 0.1 + 0.9·(2^y − 1)/(2^ymax − 1)`` (:mod:`ndcglab.clicks.simulate`).
Sessions grow from 10^3 to 10^7 (10^5 with ``--quick``), each step adding new sessions to the
same log (aggregated as sufficient statistics, :mod:`ndcglab.clicks.learn`).

Every method trains the same linear model through :func:`ndcglab.training.fit` (squared loss on
a linear gain, ``squared(gain=linear)``, whose minimiser is the conditional mean of the labels:
unbiased labels give an unbiased loss up to a constant; L-BFGS) on one label per document:

* *skyline* — the true attractiveness ``a(y)`` (what clicks estimate);
* *naive* — clicks per session; *IPS (true)* — policy-aware IPS with the simulator's
  examination ``θ``; *IPS (estimated)* — the same with propensities from intervention harvesting
  (:func:`ndcglab.clicks.propensity.estimate_propensities`, ``harvest``); *DLA* — three rounds of
  ranker and propensity steps; *DR* — doubly robust with a linear regression and the same
  examination as *IPS (true)* (no trust-bias offset); *affine* — the
  affine correction with the true ``α, β`` (trust bias only; under the PBM ``β = 0`` and it is
  IPS).

Three boosted-tree learners read the sessions themselves (the first :data:`BOOSTED_SESSIONS`
sessions of the log at most, :data:`BOOSTED_QUICK_SESSIONS` with ``--quick``: beyond, they
repeat the value of the last step within the cap), each with :data:`BOOSTED_LEAVES` leaves and
the same rounds and learning rate:

* *unbiased LambdaMART* — Hu, Wang, Peng and Li (WWW 2019),
  :mod:`ndcglab.clicks.unbiased_lambdamart` (biases re-estimated after every tree);
* *LightGBM position bias* — LightGBM's ``lambdarank`` with the positions given
  (``lambdarank_position_bias``), :func:`ndcglab.clicks.baselines.lightgbm_position_bias`;
* *XGBoost unbiased* — XGBoost's ``rank:ndcg`` with ``lambdarank_unbiased``,
  :func:`ndcglab.clicks.baselines.xgboost_unbiased`;

and their skyline, *skyline (trees)*: LightGBM trees of the same size and number trained through
:func:`ndcglab.training.fit` on the true attractiveness (``squared(gain=linear)``).

They are trees, the other lines a linear model: compare them with each other and with the
skyline, not as estimators of the same model. A run that fails to train is named in the report's
``failed_runs`` table and has no value; no claim reads these lines.

NDCG@10 on the fold's test queries with their judged labels (the data's preset). The claims get
verdicts by the rules of :mod:`.verdicts`, each test on the per-query differences (paired
randomisation test, two-sided).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ._common import Settings, preset_for, source_for
from .report import Report, Table
from .verdicts import Finding, all_of, better, comparable

TITLE = "Learning to rank from clicks: naive, IPS, DLA, doubly robust and affine vs the skyline"
CLAIM = (
    "IPS with the true propensities converges to the skyline (Joachims et al., WSDM 2017); "
    "naive learning from clicks does not under strong position bias; doubly robust learning "
    "needs fewer clicks than IPS (Oosterhuis, TOIS 2023); the affine correction beats IPS under "
    "trust bias (Vardasbi et al., CIKM 2020)."
)
QUICK_NOTE = (
    "--quick: 10^3, 10^4 and 10^5 sessions (not up to 10^7), one fold, 30 L-BFGS iterations per "
    "model, two DLA rounds; the boosted-tree lines grow 30 trees on at most the first 10,000 "
    "sessions of the log (at 10^5 sessions they repeat the 10^4 values)."
)

#: (label, click model spec): three position-bias strengths and trust bias
CONDITIONS = (
    ("PBM η = 0.5 (mild)", "pbm(eta=0.5)"),
    ("PBM η = 1", "pbm(eta=1)"),
    ("PBM η = 2 (strong)", "pbm(eta=2)"),
    ("trust bias (η = 1)", "trust(eta=1)"),
)
#: the learners that read the sessions and grow boosted trees (module docstring)
BOOSTED = ("unbiased LambdaMART", "LightGBM position bias", "XGBoost unbiased")
#: the skyline of the boosted-tree lines: the same trees on the true attractiveness
SKYLINE_TREES = "skyline (trees)"
METHODS = (
    "skyline",
    "naive",
    "IPS (true)",
    "IPS (estimated)",
    "DLA",
    "DR",
    "affine",
    SKYLINE_TREES,
    *BOOSTED,
)
K_SHOWN = 10
#: the measure of every table and claim
MEASURE = "ndcg@10"
#: the logging ranker: ``LOGGING_WEIGHT·y + N(0, 1)`` per document, sampled by Plackett–Luce at
#: ``LOGGING_TEMPERATURE`` (a mediocre ranker that still shows every document with some chance)
LOGGING_WEIGHT = 0.5
LOGGING_TEMPERATURE = 0.5
#: the clipping of the expected examination for IPS, DR and affine (bounds the weights at 100)
TAU = 0.01
#: sessions kept as a whole log for intervention harvesting (the rest only as statistics)
HARVEST_SESSIONS = 1_000_000
#: the boosted-tree lines read at most this many sessions (the first ones; ``--quick``: the
#: second), which a 2-core machine trains in minutes (10^6 sessions are 10^7 impressions)
BOOSTED_SESSIONS = 100_000
BOOSTED_QUICK_SESSIONS = 10_000
#: leaves per tree and learning rate of the boosted-tree lines
BOOSTED_LEAVES = 15
BOOSTED_LR = 0.1


def _sessions(settings: Settings) -> list[int]:
    return list(
        settings.pick([10**3, 10**4, 10**5, 10**6, 10**7], [10**3, 10**4, 10**5], [300, 3000])
    )


def run(report: Report, settings: Settings) -> None:
    from .._compat import pyplot
    from ..clicks.learn import (
        click_labels,
        click_statistics,
        fit_dla,
        merge_statistics,
    )
    from ..clicks.logs import ClickLog
    from ..clicks.propensity import estimate_propensities
    from ..clicks.simulate import (
        attractiveness,
        make_policy,
        parse_click_model,
        pl_position_marginals,
    )
    from ..measures import evaluate
    from ..training import fit

    source = source_for(settings)
    preset = preset_for(source)
    fold = next(source.folds(1, with_vali=False))
    train, test = fold.train, fold.test
    if settings.mode == "tiny":  # the test-suite's mode: a few queries, numbers meaningless
        train, test = train.subset(np.arange(min(20, train.n_queries))), test
    report.add_dataset(source.describe({"train": train, "test": test}))
    steps = _sessions(settings)
    iters = settings.pick(100, 30, 5)
    rng = np.random.default_rng(settings.seed)
    logging_scores = LOGGING_WEIGHT * train.labels + rng.normal(0.0, 1.0, train.n_docs)
    policy = make_policy(logging_scores, f"pl(temperature={LOGGING_TEMPERATURE:g})")
    # the logging policy's exact P(d at j), computed once (the simulator's own marginals)
    marginals = pl_position_marginals(policy.scores, train.boundaries, K_SHOWN, policy.temperature)
    ymax = max(float(train.labels.max()), 1.0)
    options = {
        "model": "linear",
        "loss": "squared(gain=linear)",
        "optimizer": "lbfgs",
        "epochs": iters,
        "seed": settings.seed,
        "normalize": settings.normalize,
    }

    def ndcg(labels: np.ndarray) -> np.ndarray:
        res = fit(dataclasses.replace(train, labels=labels), progress=False, **options)
        ev = evaluate(test, np.asarray(res.predict(test)), [MEASURE], preset=preset)
        return np.asarray(ev.per_query[MEASURE], dtype=np.float64)

    # per condition: method -> n -> per-query NDCG@10
    values: dict[str, dict[str, dict[int, np.ndarray]]] = {}
    examinations: dict[str, dict[int, list[float]]] = {}
    dla_alpha: dict[str, dict[int, list[float]]] = {}
    ulm_bias: dict[str, dict[int, list[float]]] = {}
    failed: list[list[Any]] = []
    boosted_rounds = int(settings.pick(100, 30, 3))
    boosted_cap = int(settings.pick(BOOSTED_SESSIONS, BOOSTED_QUICK_SESSIONS))

    def per_query(scores: np.ndarray) -> np.ndarray:
        ev = evaluate(test, np.asarray(scores, dtype=np.float64), [MEASURE], preset=preset)
        return np.asarray(ev.per_query[MEASURE], dtype=np.float64)

    for c_i, (label, spec) in enumerate(CONDITIONS):
        settings.say(f"clicks: {label}")
        model = parse_click_model(spec)
        truth = attractiveness(train.labels, model.eps, ymax)
        skyline = ndcg(truth)
        try:
            skyline_trees: np.ndarray | None = per_query(
                fit(
                    dataclasses.replace(train, labels=truth),
                    progress=False,
                    model="gbdt",
                    loss="squared(gain=linear)",
                    rounds=boosted_rounds,
                    lr=BOOSTED_LR,
                    trees={"num_leaves": BOOSTED_LEAVES},
                    seed=settings.seed,
                ).predict(test)
            )
        except Exception as exc:  # a run that fails is named, never used
            skyline_trees = None
            failed.append([label, SKYLINE_TREES, None, f"{type(exc).__name__}: {exc}"[:200]])
        per: dict[str, dict[int, np.ndarray]] = {m: {} for m in METHODS}
        examinations[label] = {}
        dla_alpha[label] = {}
        ulm_bias[label] = {}
        boosted_used, boosted_prev = -1, -1
        parts: list[Any] = []
        kept: list[ClickLog] = []
        meta: dict[str, Any] = {}
        for n, logs in _step_logs(
            train, model, policy, steps, settings.seed * 1000 + c_i, marginals
        ):
            for log in logs:
                meta = log.meta
                parts.append(click_statistics(log, train, placement=marginals))
                held = sum(lg.n_sessions for lg in kept)
                if not kept or held + log.n_sessions <= HARVEST_SESSIONS:
                    kept.append(log)
            stats = merge_statistics(parts)
            parts = [stats]
            theta = np.asarray(meta["examination"], dtype=np.float64)
            per["skyline"][n] = skyline
            if skyline_trees is not None:
                per[SKYLINE_TREES][n] = skyline_trees
            per["naive"][n] = ndcg(click_labels(stats, estimator="naive"))
            per["IPS (true)"][n] = ndcg(
                click_labels(stats, estimator="ips", examination=theta, tau=TAU)
            )
            whole = _concat(kept)
            est = estimate_propensities(whole, "harvest")
            est = _fill(est)
            examinations[label][n] = est.tolist()
            per["IPS (estimated)"][n] = ndcg(
                click_labels(stats, estimator="ips", examination=est, tau=TAU)
            )
            alpha_dla, _, res = fit_dla(
                stats, train, None, rounds=settings.pick(3, 2), tau=TAU, progress=False, **options
            )
            dla_alpha[label][n] = alpha_dla.tolist()
            ev = evaluate(test, np.asarray(res.predict(test)), [MEASURE], preset=preset)
            per["DLA"][n] = np.asarray(ev.per_query[MEASURE], dtype=np.float64)
            per["DR"][n] = ndcg(
                click_labels(
                    stats, estimator="dr", examination=theta, tau=TAU, features=train.features
                )
            )
            if spec.startswith("trust"):
                per["affine"][n] = ndcg(
                    click_labels(
                        stats,
                        estimator="affine",
                        examination=meta["alpha"],
                        trust_offset=meta["beta"],
                        tau=TAU,
                    )
                )
            used = min(whole.n_sessions, boosted_cap)
            if used == boosted_used:  # the same first sessions as the previous step: same trees
                for method in BOOSTED:
                    if boosted_prev in per[method]:
                        per[method][n] = per[method][boosted_prev]
                if boosted_prev in ulm_bias[label]:
                    ulm_bias[label][n] = ulm_bias[label][boosted_prev]
                continue
            boosted_used, boosted_prev = used, n
            sessions = whole if whole.n_sessions <= boosted_cap else _first(whole, boosted_cap)
            for method in BOOSTED:
                try:
                    scores, t_plus = _boosted(
                        method, train, test, sessions, boosted_rounds, settings
                    )
                except Exception as exc:  # a run that fails is named, never used
                    failed.append([label, method, n, f"{type(exc).__name__}: {exc}"[:200]])
                    settings.say(f"clicks: {method} failed at {n:,} sessions ({label}): {exc}")
                    continue
                per[method][n] = per_query(scores)
                if t_plus is not None:
                    ulm_bias[label][n] = t_plus
        values[label] = per

    _tables(report, values, steps, boosted_cap)
    _figure(report, pyplot(), values, steps, source.label)
    findings = _claims(values, steps, settings)
    for f in findings:
        report.add_finding(f.claim, f.observed, f.verdict)
    report.add_table(
        Table(
            "propensities",
            "Propensities estimated by intervention harvesting and learned by DLA (relative to "
            "position 1)",
            ["condition", "method", "sessions", *[f"p{j}" for j in range(1, K_SHOWN + 1)]],
            [
                [c, how, n, *v]
                for how, table in (
                    ("harvest", examinations),
                    ("DLA", dla_alpha),
                    ("unbiased LambdaMART t+", ulm_bias),
                )
                for c, d in table.items()
                for n, v in d.items()
            ],
            digits=3,
            notes=["the truth under the PBM is j^−η; under trust bias the examination j^−1"],
            collapsed=True,
        )
    )
    from ..measures import parse_measure

    report.add_convention(MEASURE, parse_measure(MEASURE).convention())
    report.results["sessions"] = steps
    report.results["mean"] = {
        c: {m: {str(n): float(np.mean(v)) for n, v in d.items()} for m, d in per.items() if d}
        for c, per in values.items()
    }
    report.results["per_query"] = {
        c: {m: {str(n): v.tolist() for n, v in d.items()} for m, d in per.items() if d}
        for c, per in values.items()
    }
    report.results["estimated_propensities"] = {
        "harvest": examinations,
        "dla": dla_alpha,
        "unbiased_lambdamart": ulm_bias,
    }
    report.results["boosted"] = {
        "methods": list(BOOSTED),
        "rounds": boosted_rounds,
        "max_sessions": boosted_cap,
        "leaves": BOOSTED_LEAVES,
        "learning_rate": BOOSTED_LR,
    }
    report.results["failed_runs"] = [
        {"condition": c, "method": m, "sessions": n, "error": e} for c, m, n, e in failed
    ]
    if failed:
        report.add_table(
            Table(
                "failed_runs",
                "Runs that failed to train (no value in the tables, no claim reads them)",
                ["condition", "method", "sessions", "error"],
                failed,
            )
        )


def _first(log: Any, n: int) -> Any:
    """The first ``n`` sessions of ``log`` (sessions are contiguous and numbered in order)."""
    starts = log.session_starts()
    return log.take(np.arange(len(log)) < starts[min(n, len(starts) - 1)])


def _boosted(
    method: str, train: Any, test: Any, log: Any, rounds: int, settings: Settings
) -> tuple[np.ndarray, list[float] | None]:
    """The test scores of one boosted-tree line trained on the sessions of ``log``, and the
    click bias it learned (Unbiased LambdaMART only)."""
    from ..clicks.baselines import baseline_scores, lightgbm_position_bias, xgboost_unbiased
    from ..clicks.unbiased_lambdamart import train_unbiased_lambdamart

    if method == "unbiased LambdaMART":
        fit = train_unbiased_lambdamart(
            train,
            log,
            num_boost_round=rounds,
            learning_rate=BOOSTED_LR,
            num_leaves=BOOSTED_LEAVES,
            seed=settings.seed,
        )
        return fit.predict(test), [float(v) for v in fit.t_plus]
    if method == "LightGBM position bias":
        booster = lightgbm_position_bias(
            train, log, rounds=rounds, lr=BOOSTED_LR, num_leaves=BOOSTED_LEAVES, seed=settings.seed
        )
    else:
        booster = xgboost_unbiased(
            train,
            log,
            rounds=rounds,
            lr=BOOSTED_LR,
            seed=settings.seed,
            params={"max_leaves": BOOSTED_LEAVES, "grow_policy": "lossguide", "max_depth": 0},
        )
    return baseline_scores(booster, test), None


#: sessions simulated per call (one log of 10^6 top-10 sessions is about 370 MB)
CHUNK = 1_000_000


def _step_logs(
    train: Any, model: Any, policy: Any, steps: list[int], seed: int, marginals: Any = None
) -> Any:
    """For each number of sessions ``n`` of ``steps``: ``(n, logs of the sessions added since
    the previous step)``, from one seeded stream (the simulator seeds each session on its own,
    so chunks equal one long log). Up to :data:`CHUNK` sessions are simulated in one call and
    split by session; beyond, chunks of :data:`CHUNK`. ``marginals``: the policy's position
    marginals, computed once by the caller."""
    from ..clicks.simulate import simulate_clicks

    if steps[-1] <= CHUNK:
        whole = simulate_clicks(
            train, model, policy, steps[-1], k=K_SHOWN, seed=seed, marginals=marginals
        )
        done = 0
        for n in steps:
            yield n, [whole.take((whole.session >= done) & (whole.session < n))]
            done = n
        return
    done = 0
    for n in steps:
        logs = []
        while done < n:
            m = min(CHUNK, n - done)
            logs.append(
                simulate_clicks(
                    train,
                    model,
                    policy,
                    m,
                    k=K_SHOWN,
                    seed=seed,
                    first_session=done,
                    marginals=marginals,
                )
            )
            done += m
        yield n, logs


def _concat(logs: list[Any]) -> Any:
    from ..clicks.logs import LOG_COLUMNS, ClickLog

    if len(logs) == 1:
        return logs[0]
    cols = {c: np.concatenate([getattr(lg, c) for lg in logs]) for c in LOG_COLUMNS}
    return ClickLog(**cols, qids=logs[0].qids, meta=logs[0].meta)


def _fill(p: np.ndarray) -> np.ndarray:
    """Positions the harvest could not connect (NaN) take the nearest estimate above them."""
    out = np.asarray(p, dtype=np.float64).copy()
    for j in range(len(out)):
        if not np.isfinite(out[j]) or out[j] <= 0:
            out[j] = out[j - 1] if j else 1.0
    return out


def _mean(v: dict[int, np.ndarray], n: int) -> float | None:
    return float(np.mean(v[n])) if n in v else None


def _tables(report: Report, values: dict[str, Any], steps: list[int], cap: int) -> None:
    for i, (cond, per) in enumerate(values.items()):
        rows = [[m, *[_mean(per[m], n) for n in steps]] for m in METHODS if per[m]]
        report.add_table(
            Table(
                f"ndcg_{i + 1}",
                f"NDCG@10 on the test queries, {cond}",
                ["method", *[f"{n:,} sessions" for n in steps]],
                rows,
                caption="mean over the test queries; the skyline trains on the true "
                "attractiveness and does not depend on the sessions; the last four lines are "
                "boosted trees (their skyline on the true attractiveness, the others grown from "
                f"the sessions, at most the first {cap:,}), the others a linear model",
            )
        )


def _figure(report: Report, plt: Any, values: dict[str, Any], steps: list[int], label: str) -> None:
    fig, axes = plt.subplots(1, len(values), figsize=(4.2 * len(values), 3.8), sharey=True)
    for ax, (cond, per) in zip(np.atleast_1d(axes), values.items(), strict=True):
        for i, m in enumerate(METHODS):
            if not per[m]:
                continue
            ns = sorted(per[m])
            ys = [float(np.mean(per[m][n])) for n in ns]
            if m == "skyline":
                ax.plot(ns, ys, "--", label=m, color="k")
            elif m == SKYLINE_TREES:
                ax.plot(ns, ys, ":", label=m, color="0.4")
            else:
                ax.plot(ns, ys, "-o", label=m, ms=3, color=f"C{i}")
        ax.set_xscale("log")
        ax.set_xlabel("sessions")
        ax.set_title(cond, fontsize="medium")
    np.atleast_1d(axes)[0].set_ylabel("NDCG@10 (test)")
    np.atleast_1d(axes)[-1].legend(fontsize="small")
    fig.tight_layout()
    report.add_figure(
        "ndcg_vs_sessions",
        fig,
        title=f"{label}: NDCG@10 against the number of sessions",
        caption="one log per condition, grown session by session; the dashed line is the "
        "skyline (trained on the true attractiveness)",
    )


def _test(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    from ..analysis.paired_tests import permutation_test

    t = permutation_test(a, b, n_resamples=2000, seed=0)
    return float(np.mean(a - b)), float(t.p_value)


def _claims(values: dict[str, Any], steps: list[int], settings: Settings) -> list[Finding]:
    big, small = steps[-1], steps[0]
    out: list[Finding] = []
    pbm = [c for c, _ in CONDITIONS[:3]]
    # 1. IPS (true) comparable to the skyline at the most sessions, every PBM strength
    parts = []
    obs = []
    for c in pbm:
        per = values[c]
        d = per["IPS (true)"][big] - per["skyline"][big]
        parts.append(comparable(d, what=f"IPS − skyline ({c})"))
        obs.append(f"{c}: {float(np.mean(d)):+.4f}")
    out.append(
        Finding(
            f"IPS with the true propensities converges to the skyline ({big:,} sessions, NDCG@10)",
            "IPS − skyline: " + "; ".join(obs),
            all_of(parts),
            ("IPS (true)", "skyline"),
        )
    )
    # 2. naive does not converge under strong bias
    strong = values[pbm[2]]
    diff, p = _test(strong["skyline"][big], strong["naive"][big])
    out.append(
        Finding(
            f"Naive learning from clicks stays below the skyline under strong position bias "
            f"(η = 2, {big:,} sessions)",
            f"skyline − naive = {diff:+.4f} (randomisation p = {p:.3g})",
            better(diff, p, what="skyline − naive"),
            ("skyline", "naive"),
        )
    )
    # 3. DR needs fewer clicks than IPS: better with the fewest sessions (η = 1)
    mid = values[pbm[1]]
    diff, p = _test(mid["DR"][small], mid["IPS (true)"][small])
    out.append(
        Finding(
            f"Doubly robust learning needs fewer clicks than IPS (η = 1, {small:,} sessions)",
            f"DR − IPS = {diff:+.4f} (randomisation p = {p:.3g})",
            better(diff, p, what="DR − IPS"),
            ("DR", "IPS (true)"),
        )
    )
    # 4. affine beats IPS under trust bias
    trust = values[CONDITIONS[3][0]]
    diff, p = _test(trust["affine"][big], trust["IPS (true)"][big])
    out.append(
        Finding(
            f"The affine correction beats IPS under trust bias ({big:,} sessions)",
            f"affine − IPS = {diff:+.4f} (randomisation p = {p:.3g})",
            better(diff, p, what="affine − IPS"),
            ("affine", "IPS (true)"),
        )
    )
    return out
