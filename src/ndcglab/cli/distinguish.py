"""``ndcglab distinguish DATA --scores A --scores B ... [--measure ...] [--repeats R]``.

Curves of the mean measure value of each ranker on ``S_n`` — the first n documents of every list
of DATA — against n (Wang et al. 2013, §4), and how often the order of each pair of rankers at n
already holds at every larger n of the grid (an empirical handle on consistent
distinguishability, Definition 3). Without ``--repeats`` S_n follows the file order; with
``--repeats R`` every list is shuffled R times (seeded) and the curves get error bands.

Wang et al. 2013: Wang, Wang, Li, He, Chen, Liu, "A Theoretical Analysis of NDCG Type Ranking
Measures" (COLT 2013). See docs/analysis.md, section 2.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._common import (
    add_format_argument,
    add_systems_parser,
    emit,
    format_table,
    read_systems,
)
from ._help import plain

__all__ = ["add_parser", "run"]

_DEFAULT_MEASURES = ["ndcg", "ndcg(discount=power:0.5)", "ndcg(discount=exp:2)", "ndcg@0.2n"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = add_systems_parser(
        subparsers,
        "distinguish",
        help_text="mean NDCG vs list size n for several rankers, and the stability of their order",
        doc=plain(__doc__) if __doc__ else None,
        noun="ranker",
        measure_help="measure, repeatable (default: the four of the paper: ndcg, "
        "'ndcg(discount=power:0.5)', 'ndcg(discount=exp:2)', ndcg@0.2n)",
    )
    p.add_argument(
        "--grid",
        choices=("log", "linear"),
        default="log",
        help="spacing of the list sizes n (default log)",
    )
    p.add_argument("--points", type=int, default=60, help="number of sizes n (default 60)")
    p.add_argument("--n-max", type=int, default=None, help="largest n (default: the longest list)")
    p.add_argument(
        "--repeats",
        type=int,
        default=0,
        help="0: S_n in file order (default); R: R seeded shuffles of every list",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the shuffles (default 0)")
    p.add_argument(
        "--plot",
        default=None,
        metavar="FILE.png",
        help="save the curves (one panel per measure) to this image",
    )
    p.add_argument(
        "--plot-stability",
        default=None,
        metavar="FILE.png",
        help="save the stability curves to this image",
    )
    add_format_argument(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from ..analysis.distinguish import distinguishability

    ds, scores = read_systems(args)
    res = distinguishability(
        ds,
        scores,
        args.measure or _DEFAULT_MEASURES,
        preset=args.preset,
        grid=args.grid,
        points=args.points,
        n_max=args.n_max,
        repeats=args.repeats,
        seed=args.seed,
    )
    written = []
    if args.plot:
        res.save_plot(args.plot, kind="curves")
        written.append(str(args.plot))
    if args.plot_stability:
        res.save_plot(args.plot_stability, kind="stability")
        written.append(str(args.plot_stability))
    payload = res.to_dict()
    payload["data"] = str(args.data)
    payload["plots"] = written

    def text() -> str:
        lines = [
            f"{ds.n_queries} queries; n from {int(res.grid[0])} to {int(res.grid[-1])} "
            f"({len(res.grid)} sizes, {args.grid} grid); S_n: "
            + ("file order" if res.order == "file" else f"{res.n_repeats} seeded shuffles"),
            "",
        ]
        header = ["measure", *(f"{r} @n_max" for r in res.rankers), "order stable from n"]
        rows = []
        for m in res.measures:
            mu = res.mean(m)[:, -1]
            rows.append([m, *(float(v) for v in mu), str(res.ranking_stable_from(m))])
        lines.append(format_table(header, rows))
        lines.append("")
        stable = "stable from n" + ("" if res.order == "file" else " (all repetitions)")
        header2 = ["measure", "pair", "winner at n_max", stable]
        rows2 = []
        for m in res.measures:
            for a, b in res.pair_stability(m):
                share = res.winner(a, b, m)
                win = a if share > 0.5 else b if share < 0.5 else "tie"
                rows2.append([m, f"{a} vs {b}", win, str(res.stable_from(a, b, m))])
        lines.append(format_table(header2, rows2))
        lines.append("")
        lines.append("conventions: " + "; ".join(f"{k} = {v}" for k, v in res.conventions.items()))
        if written:
            lines.append("written: " + ", ".join(written))
        return "\n".join(lines)

    emit(args, payload, text)
    return 0
