"""``ndcglab clicks simulate DATA --click-model SPEC --policy MODEL|SCORES --sessions N --out LOG``

Simulate a click log from a LETOR file (or ``synthetic:NAME``), a logging ranker and a click
model, and write it as Parquet (``.parquet``) or NumPy ``.npz``: one row per shown document
(session, query, document, position, click, logging propensity). See :mod:`ndcglab.clicks.simulate`
for the click models, the attractiveness mapping and the sampling of rankings.
"""

from __future__ import annotations

import argparse
import os
import sys
import zipfile
from collections.abc import Iterator
from typing import Any

from ._common import add_cache_argument, add_format_argument, emit, positive_int, read_options

#: sessions simulated (and written, as one Parquet row group) at a time
CHUNK = 1_000_000


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "simulate",
        help="simulate a click log from data, a logging ranker and a click model",
        description=(
            "Simulate user sessions on DATA: each session draws a query uniformly, shows the top "
            "K documents of the logging ranker (--policy: a model file from 'ndcglab train' or a "
            "score file with one score per document; without it, the labels' order) sampled as "
            "--sampling says, and draws clicks from --click-model. Writes LOG (.parquet, or "
            ".npz) with one row per shown document."
        ),
    )
    p.add_argument("data", metavar="DATA", help="LETOR file, or synthetic:NAME")
    p.add_argument(
        "--click-model",
        default="pbm(eta=1)",
        metavar="SPEC",
        help="pbm(eta=1), cascade, dcm(lam=0.6), dbn(gamma=0.9), sdbn, ubm(eta=1,beta=0.5) or "
        "trust(eta=1,pos=1,neg=0.65); every model also takes eps (attractiveness of a label-0 "
        "document, default 0.1) and ymax (default: the largest label). Default: pbm(eta=1)",
    )
    p.add_argument(
        "--policy",
        dest="scores",
        default=None,
        metavar="MODEL|SCORES",
        help="the logging ranker: a model file (ndcglab train --out) or a score file (one "
        "score per line, in DATA's order); default: the labels (the ideal ranking)",
    )
    p.add_argument(
        "--sampling",
        default="deterministic",
        metavar="SPEC",
        help="how rankings are drawn from the scores: deterministic (default), "
        "pl(temperature=T) (Plackett-Luce), randtop(n=N) (top N shuffled) or swap (the top "
        "document swapped with a uniformly drawn position)",
    )
    p.add_argument("--sessions", type=positive_int, required=True, metavar="N",
                   help="number of sessions")  # fmt: skip
    p.add_argument("--k", type=positive_int, default=10, help="documents shown (default 10)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--out", default=None, metavar="LOG", help="output log: .parquet or .npz")
    p.add_argument(
        "--stats",
        default=None,
        metavar="FILE",
        help="also (or only) write the sufficient statistics: impressions and clicks per query, "
        "document and position (.parquet or .npz)",
    )
    add_cache_argument(p)
    add_format_argument(p)
    p.set_defaults(func=run)


def logging_scores(path: str, ds: Any) -> Any:
    """The scores of the logging ranker ``path`` (a model file or a score file) on ``ds``."""
    from ..data import read_scores

    if zipfile.is_zipfile(path):
        from ..training import load_trained

        model = load_trained(path)
        width = int(getattr(model, "n_features", 0) or 0)
        if ds.n_features < width:
            ds = ds.with_n_features(width)
        return model.predict(ds)
    return read_scores(path, n_expected=ds.n_docs)


def run(args: argparse.Namespace) -> int:
    from ..clicks import merge_stats, write_log, write_stats
    from ..clicks.simulate import make_policy, parse_click_model, simulate_clicks
    from ..data import load_dataset
    from ..errors import SpecError

    if args.seed < 0:
        raise SpecError(f"--seed must be >= 0, got {args.seed}. Fix: give --seed 0 or more")
    model = parse_click_model(args.click_model)
    ds = load_dataset(args.data, **read_options(args, args.data))
    if args.scores is None:
        if args.sampling != "deterministic":
            raise SpecError(
                f"--sampling {args.sampling} needs the scores of a logging ranker. Fix: add "
                "--policy MODEL|SCORES"
            )
        policy = make_policy(ds.labels, "deterministic", name="ideal (labels)")
    else:
        scores = logging_scores(args.scores, ds)
        policy = make_policy(scores, args.sampling)
        policy = make_policy(
            scores, args.sampling, name=f"{policy.name} of {os.path.basename(args.scores)}"
        )
    if args.out is None and args.stats is None:
        raise SpecError("nothing to write. Fix: give --out LOG, --stats FILE or both")
    totals = {"sessions": 0, "rows": 0, "clicks": 0}
    stats: list[Any] = []
    meta: dict[str, Any] = {}

    def chunks() -> Iterator[Any]:
        done = 0
        while done < args.sessions:
            n = min(CHUNK, args.sessions - done)
            part = simulate_clicks(ds, model, policy, n, k=args.k, seed=args.seed,
                                   first_session=done)  # fmt: skip
            done += n
            totals["sessions"] += n
            totals["rows"] += len(part)
            totals["clicks"] += int(part.click.sum())
            meta.update(part.meta)
            if args.stats is not None:  # added up as the chunks go: memory stays bounded
                stats[:] = [merge_stats([*stats, part.stats()])]
            yield part

    if args.out is not None:
        write_log(chunks(), args.out)
    else:
        for _ in chunks():
            pass
    if args.stats is not None:
        write_stats(merge_stats(stats), args.stats)
    clicks = totals["clicks"]
    payload = {
        "out": args.out,
        "stats": args.stats,
        "sessions": totals["sessions"],
        "rows": totals["rows"],
        "clicks": clicks,
        "click_model": meta["click_model"],
        "policy": meta["policy"],
        "k": args.k,
        "seed": args.seed,
    }
    if str(args.out) in ("-", "/dev/stdout"):
        print(
            f"ndcglab clicks simulate: wrote {totals['rows']} rows to standard output",
            file=sys.stderr,
        )
        return 0
    emit(
        args,
        payload,
        lambda: (
            f"wrote {' and '.join(x for x in (args.out, args.stats) if x)}: "
            f"{totals['sessions']} sessions, {totals['rows']} shown documents, {clicks} clicks "
            f"({meta['click_model']}; policy {meta['policy']}; top {args.k}; seed {args.seed})"
        ),
    )
    return 0
