"""``consistency-audit``: which registered losses are NDCG-consistent, decided numerically.

Ravikumar, Tewari and Yang ("On NDCG Consistency of Listwise Ranking Methods", AISTATS 2011):
a surrogate is NDCG-consistent iff the minimiser of its expected loss over every label
distribution orders the documents as E[G(y)/Z(y)]. Prop. 7: squared, cosine and ListNet are not;
Thm 8–9: their Z-normalised versions are. :mod:`ndcglab.analysis.consistency_audit` checks the
condition on seeded small label distributions (half of them adversarial) for every loss in the
registry at run time; this experiment reports the verdicts, the counter-examples and whether the
paper's known answers come out. Uses no LETOR data (``--data`` is not read).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from ._common import Settings
from .report import Report, Table
from .verdicts import threshold

#: ``--data`` is not read (``ndcglab list experiments`` does not offer it)
USES_DATA = False
TITLE = "NDCG-consistency audit of every registered loss (Ravikumar et al., AISTATS 2011)"
CLAIM = (
    "Squared, cosine (RankCosine) and ListNet losses are not NDCG-consistent (Prop. 7); "
    "dividing the gains by the DCG norm Z(y) makes them consistent (Thm 8–9)."
)
QUICK_NOTE = (
    "--quick: 60 label distributions instead of 200, and only the six losses of the paper (the "
    "full run audits every registered loss; the tiny test mode uses 10 distributions)."
)
SCOPE_SYNTHETIC = (
    "The audit needs no dataset: it minimises each loss's expected value over seeded label "
    "distributions of 3–5 documents, so --data is not read. A 'consistent' verdict means no "
    "counter-example among the distributions tried (evidence, not a proof); 'not consistent' "
    "comes with the counter-example, which anyone can check."
)
SCOPE_REAL = SCOPE_SYNTHETIC

KNOWN_NOT = ("squared", "cosine", "listnet")
KNOWN_YES = (
    "consistent_squared(norm=z)",
    "consistent_cosine(norm=z)",
    "consistent_listnet(norm=z)",
)
MEASURE = "ndcg"


def run(report: Report, settings: Settings) -> None:
    from .._compat import pyplot
    from ..analysis.consistency_audit import DEFAULT_MARGIN, audit_loss, draw_distributions
    from ..losses import available_losses, get_loss
    from ..measures import parse_measure

    count = settings.pick(200, 60, 10)
    restarts = settings.pick(2, 2, 1)
    if settings.mode != "full":  # quick and tiny: the paper's six losses, the audit's self-check
        names = [*KNOWN_NOT, *KNOWN_YES]
    else:
        known = {get_loss(n).name for n in (*KNOWN_NOT, *KNOWN_YES)}
        names = [*KNOWN_NOT, *KNOWN_YES] + [n for n in available_losses() if n not in known]
    settings.say(f"consistency-audit: {count} distributions, {len(names)} losses")
    dists = draw_distributions(count, seed=settings.seed, measure=MEASURE)
    blob = json.dumps([d.to_dict() for d in dists], sort_keys=True).encode()
    report.add_dataset(
        {
            "name": "label distributions",
            "kind": "synthetic",
            "source": "ndcglab.analysis.consistency_audit.draw_distributions",
            "params": {"count": count, "seed": settings.seed, "adversarial": 0.5},
            "hashes": {"distributions_sha256": hashlib.sha256(blob).hexdigest()},
            "description": "lists of 3–5 documents, labels 0..2 or 0..3, 2–4 label vectors with "
            "Dirichlet probabilities; half adversarial (E[G/Z] ordered differently from E[G], "
            "E[y], E[G/‖G‖₂], E[softmax(G)] or E[softmax(y)]); hash over the JSON of the "
            "distributions",
        }
    )
    report.add_convention(MEASURE, parse_measure(MEASURE).convention())

    results = []
    for name in names:
        settings.say(f"consistency-audit: {name}")
        r = audit_loss(name, MEASURE, distributions=dists, seed=settings.seed, restarts=restarts)
        results.append(r)
        report.timings[f"audit {r.loss}"] = r.seconds

    declared_text = {True: "consistent", False: "not consistent", None: "—"}
    rows = [
        [
            r.loss,
            r.verdict,
            None if r.verdict == "skipped" else r.failures,
            None if r.verdict == "skipped" else r.distributions,
            declared_text[r.declared],
            r.reason or "",
        ]
        for r in results
    ]
    report.add_table(
        Table(
            "verdicts",
            "Verdict per loss",
            [
                "loss",
                "verdict",
                "distributions with a wrong order",
                "distributions",
                "declared in the registry",
                "note",
            ],
            rows,
            notes=[
                "a distribution has a wrong order when some pair with E[G/Z] strictly larger "
                f"(by more than {DEFAULT_MARGIN:g} × max E[G/Z]) is not strictly above in the "
                "minimiser s* (and the other document is in s*'s top k); confirmed from 4 starts",
                f"minimiser: L-BFGS in float64 from s = 0 and {restarts - 1} random start(s)",
            ],
        )
    )
    ce_rows = [
        [
            r.loss,
            r.counter_example.dist.text(),
            ", ".join(f"{v:.4g}" for v in r.counter_example.eta),
            ", ".join(f"{v:.4g}" for v in r.counter_example.scores),
            "; ".join(f"{i + 1} vs {j + 1}" for i, j in r.counter_example.violations),
        ]
        for r in results
        if r.counter_example is not None
    ]
    if ce_rows:
        report.add_table(
            Table(
                "counter_examples",
                "Counter-examples (the distribution whose wrong order has the largest E[G/Z] gap)",
                ["loss", "distribution", "E[G/Z]", "minimiser s*", "wrong pairs (docs)"],
                ce_rows,
            )
        )

    plt = pyplot()
    shown = [r for r in results if r.verdict != "skipped"]
    fig, ax = plt.subplots(figsize=(8.0, 0.35 * len(shown) + 1.5))
    share = [r.failures / max(r.distributions, 1) for r in shown]
    colors = ["C3" if r.verdict == "not consistent" else "C2" for r in shown]
    y = np.arange(len(shown))
    ax.barh(y, share, color=colors)
    for yi, r, v in zip(y, shown, share):
        label = f"{r.failures} of {r.distributions}" + (
            " — no counter-example" if r.failures == 0 else ""
        )
        if r.failures == 0:  # a bar of zero length: mark it so the row is not read as missing
            ax.plot([0], [yi], marker="o", ms=7, color="C2", clip_on=False, zorder=3)
        ax.text(v + 0.015, yi, label, va="center", fontsize="small")
    ax.set_yticks(y)
    ax.set_yticklabels([r.loss for r in shown])
    ax.invert_yaxis()
    ax.set_xlabel("share of label distributions where the minimiser orders wrongly")
    ax.set_xlim(0, 1)
    fig.tight_layout()
    n_zero = sum(r.failures == 0 for r in shown)
    report.add_figure(
        "wrong_order_share",
        fig,
        title="Share of distributions with a wrong order, per loss",
        caption="bar length: the share of the label distributions whose expected-loss minimiser "
        "orders some pair wrongly; red bar: not consistent (a counter-example was found)"
        + (
            f"; green dot at 0 (no bar): no counter-example among {count} distributions "
            f"({n_zero} loss{'es' if n_zero != 1 else ''})"
            if n_zero
            else ""
        )
        + f"; the count beside each row; measure {MEASURE} (exp2 gain, log discount)",
    )

    by = {r.loss: r for r in results}
    not_found = [get_loss(n).name for n in KNOWN_NOT]
    yes_found = [get_loss(n).name for n in KNOWN_YES]
    report.add_finding(
        "Squared, cosine and ListNet are not NDCG-consistent (Prop. 7)",
        "; ".join(
            f"{n}: {by[n].verdict} ({by[n].failures}/{by[n].distributions})" for n in not_found
        ),
        threshold(
            all(by[n].verdict == "not consistent" for n in not_found),
            None,
            "agrees if a counter-example is found for each of the three; a finite search "
            "without one cannot disprove the claim (inconclusive)",
        ),
    )
    report.add_finding(
        "Their Z-normalised versions are NDCG-consistent (Thm 8–9)",
        "; ".join(
            f"{n}: {by[n].verdict} ({by[n].failures}/{by[n].distributions})" for n in yes_found
        ),
        threshold(
            all(by[n].verdict == "consistent" for n in yes_found),
            any(by[n].verdict == "not consistent" for n in yes_found),
            "agrees if none of the three has a counter-example among the distributions; "
            "disagrees if any has one",
        ),
    )
    report.results["measure"] = MEASURE
    report.results["distributions"] = [d.to_dict() for d in dists]
    report.results["audit"] = [r.to_dict() for r in results]
