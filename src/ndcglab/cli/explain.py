"""``ndcglab explain``: why two conventions give different means, option by option.

::

    ndcglab explain DATA --scores FILE --from A --to B [--measure SPEC] [--top N]
    ndcglab explain --qrels FILE --run FILE --from A --to B [...]

A and B are conventions: a preset (``lightgbm``, ``trec_eval``, ...), a measure string
(``'ndcg(gain=linear,ties=average)@10'``) or ``PRESET:MEASURE``. The difference of the means
(B minus A) is split over the options on which they differ by Shapley values (every one of the
2^d mixtures of the d differing options is evaluated), so the parts add up to the difference;
then the queries that move the most are listed with the reason. ``--format json`` prints one
object (``total``, ``contributions``, ``options``, ``reasons``, ``queries``, both conventions);
``--plot FILE.png`` draws a waterfall from A's mean to B's. See docs/explain.md.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._common import add_format_argument, emit
from ._help import description
from .evaluate import add_ranking_arguments, read_ranking

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "explain",
        help="why two conventions (presets or measure strings) give different means",
        description=description(__doc__, 0),
        epilog="Conventions: a preset (standard, letor3, letor4, trec_eval, trec_eval10, "
        "sklearn, lightgbm, with options such as 'trec_eval(depth=100)'), a measure string "
        "('ndcg(gain=linear)@10') or PRESET:MEASURE (trec_eval:ndcg@10). See docs/explain.md.",
    )
    add_ranking_arguments(p)
    p.add_argument(
        "--from",
        "-a",
        dest="conv_a",
        required=True,
        metavar="A",
        help="the first convention (the difference is B minus A)",
    )
    p.add_argument("--to", "-b", dest="conv_b", required=True, metavar="B", help="the second")
    p.add_argument(
        "--measure",
        default=None,
        metavar="SPEC",
        help="the measure of a side given as a bare preset (default: the other side's measure, "
        "else ndcg@10)",
    )
    p.add_argument(
        "--preset",
        default=None,
        metavar="NAME",
        help="the preset that fills the unset options of a side given as a bare measure "
        "(default: the other side's preset, else standard; trec_eval for --qrels)",
    )
    p.add_argument("--top", type=int, default=10, metavar="N", help="queries to list (default 10)")
    p.add_argument(
        "--plot", default=None, metavar="FILE.png", help="save a waterfall chart to this image"
    )
    add_format_argument(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from ..analysis.explain import explain
    from ..errors import NdcglabError

    if args.top < 0:
        raise NdcglabError(f"--top {args.top} is negative. Fix: a count >= 0, e.g. --top 10")
    data, scores = read_ranking(args)
    res = explain(data, scores, args.conv_a, args.conv_b, measure=args.measure, preset=args.preset,
                  top=args.top)  # fmt: skip
    payload = res.to_dict()
    if args.plot:
        res.plot(args.plot)
        payload["plot"] = str(args.plot)

    def text() -> str:
        out = res.text()
        if args.plot:
            out += f"\n\nwritten: {args.plot}"
        return out

    emit(args, payload, text)
    return 0
