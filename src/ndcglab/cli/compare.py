"""``ndcglab compare DATA --scores A --scores B ... [--test t|permutation] [--export TABLE]``.

Evaluates every score file on DATA (a LETOR/SVMlight file or ``synthetic:NAME[:SEED]``) with the
same measures, prints the table of means, and marks each system that differs significantly from
the baseline (default: the first): ``†`` p < 0.05, ``‡`` p < 0.01, paired two-sided test on the
per-query values, Holm-adjusted within each measure. ``--export`` writes the table as Markdown,
LaTeX or CSV (by the file's suffix) with the same legend. The text output ends with the line
stating the measures' convention and the number of empty queries, as ``evaluate`` prints it.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._common import add_format_argument, add_systems_parser, emit, read_systems
from ._help import plain

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = add_systems_parser(
        subparsers,
        "compare",
        help_text="compare several score files on one dataset: means, paired tests, marks",
        doc=plain(__doc__) if __doc__ else None,
        noun="system",
        measure_help="measure to compare, e.g. ndcg@10 or 'ndcg(discount=power:0.5)'; repeatable "
        "(default: the preset's measure set)",
    )
    p.add_argument(
        "--test",
        choices=("t", "permutation"),
        default="t",
        help="paired t-test (default) or paired randomisation (sign-flip) test",
    )
    p.add_argument(
        "--baseline",
        default=None,
        metavar="NAME",
        help="system the others are tested against (default: the first)",
    )
    p.add_argument(
        "--all-pairs",
        action="store_true",
        help="test every pair of systems, not only against the baseline",
    )
    p.add_argument(
        "--correction",
        choices=("holm", "none"),
        default="holm",
        help="multiple-comparison adjustment of the p-values (default holm)",
    )
    p.add_argument(
        "--resamples",
        type=int,
        default=10_000,
        help="random sign vectors of the permutation test and bootstrap resamples (default 10000)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the permutation test and bootstrap")
    p.add_argument(
        "--export",
        action="append",
        default=None,
        metavar="FILE",
        help="write the table to FILE.md, FILE.tex or FILE.csv (repeatable)",
    )
    add_format_argument(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from ..analysis.significance import compare_rankers
    from ..measures import evaluate
    from ..measures.evaluate import convention_line

    ds, systems = read_systems(args)
    results = {n: evaluate(ds, sc, args.measure, preset=args.preset) for n, sc in systems.items()}
    first = next(iter(results.values()))
    res = compare_rankers(
        {n: r.per_query for n, r in results.items()},
        baseline=args.baseline,
        test=args.test,
        pairs="all" if args.all_pairs else "baseline",
        correction=args.correction,
        n_resamples=args.resamples,
        n_bootstrap=args.resamples,
        seed=args.seed,
    )
    written = [str(res.export(p)) for p in args.export or []]
    payload = res.to_dict()
    payload["data"] = str(args.data)
    payload["scores"] = dict(zip(systems, args.scores))
    payload["n_queries"] = first.n_queries
    payload["empty_queries"] = {n: r.empty_queries for n, r in results.items()}
    payload["convention"] = first.convention
    payload["exported"] = written

    def text() -> str:
        out = res.to_text().rstrip("\n") + "\n" + convention_line(first)
        if written:
            out += "\n\nwritten: " + ", ".join(written)
        return out

    emit(args, payload, text)
    return 0
