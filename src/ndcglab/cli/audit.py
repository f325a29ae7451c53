"""``ndcglab audit-consistency LOSS [--measure SPEC] [--distributions N] [--format json]``.

Decide numerically whether a loss is NDCG-consistent in the sense of Ravikumar, Tewari and Yang
("On NDCG Consistency of Listwise Ranking Methods", AISTATS 2011): over many small label
distributions (3–5 documents, graded labels, some built to separate E[G] from E[G/Z]) the
minimiser of the expected loss must order the documents as the expected normalised gains
E[G(y)/Z(y)]. Prints CONSISTENT (no counter-example found), NOT CONSISTENT with the
counter-example distribution, or SKIPPED (boosting losses). LOSS is a loss spec
(``consistent_listnet(norm=z10)``) or ``all`` for every registered loss. See docs/losses.md,
section "Consistency audit".
"""

from __future__ import annotations

import argparse
from typing import Any

from ._common import add_format_argument, emit, positive_int
from ._help import description

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "audit-consistency",
        help="is a loss NDCG-consistent? a numerical audit with counter-examples",
        description=description(__doc__),
        epilog="Example: ndcglab audit-consistency listnet --measure ndcg --distributions 100. "
        "See docs/losses.md, section 'Consistency audit'.",
    )
    p.add_argument("loss", metavar="LOSS", help="a loss spec (e.g. squared, 'qnorm(q=3)') or all")
    p.add_argument(
        "--measure",
        default="ndcg",
        metavar="SPEC",
        help="the ndcg measure whose consistency is checked (default ndcg: exp2 gain, log "
        "discount, whole list; e.g. 'ndcg(gain=linear)@3')",
    )
    p.add_argument(
        "--distributions",
        type=positive_int,
        default=60,
        metavar="N",
        help="label distributions to try (default 60; half of them adversarial)",
    )
    p.add_argument(
        "--restarts",
        type=positive_int,
        default=2,
        metavar="R",
        help="starts of the minimiser per distribution: s = 0 and R - 1 random (default 2)",
    )
    p.add_argument(
        "--margin",
        type=float,
        default=1e-3,
        help="E[G/Z] differences below margin x max E[G/Z] count as ties (default 0.001)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the distributions (default 0)")
    add_format_argument(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from ..analysis.consistency_audit import audit_all, audit_loss, table_markdown
    from ..errors import NdcglabError

    if not 0 <= args.margin < 1:
        raise NdcglabError(
            f"--margin {args.margin} is outside [0, 1) — option --margin — "
            "Fix: a small relative margin, e.g. --margin 0.001"
        )
    if args.loss.strip().lower() == "all":
        results = audit_all(
            args.measure,
            count=args.distributions,
            seed=args.seed,
            restarts=args.restarts,
            margin=args.margin,
        )
        payload: dict[str, Any] = {"results": [r.to_dict() for r in results]}

        def text() -> str:
            return "\n\n".join(r.text() for r in results) + "\n\n" + table_markdown(results)

    else:
        result = audit_loss(
            args.loss,
            args.measure,
            count=args.distributions,
            seed=args.seed,
            restarts=args.restarts,
            margin=args.margin,
        )
        payload = result.to_dict()

        def text() -> str:
            return result.text()

    emit(args, payload, text)
    return 0
