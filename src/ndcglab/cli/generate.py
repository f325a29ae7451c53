"""``ndcglab generate NAME --out FILE``: write a seeded synthetic dataset as LETOR text."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._common import add_format_argument, emit


def add_parser(subparsers: Any) -> None:
    from ..data.synthetic import SYNTHETIC_SETS

    p = subparsers.add_parser(
        "generate",
        help="write a seeded synthetic dataset as LETOR text",
        description=(
            "Generate a named synthetic dataset (see ndcglab.data.synthetic for the model) and "
            "write it as LETOR/SVMlight text with #docid comments; gzip when FILE ends in .gz."
        ),
    )
    p.add_argument("name", metavar="NAME", choices=sorted(SYNTHETIC_SETS), help="the shape: "
                   + ", ".join(SYNTHETIC_SETS))  # fmt: skip
    p.add_argument("--out", required=True, metavar="FILE", help="output file (.gz compresses)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--queries", type=int, default=None, help="override the number of queries")
    p.add_argument("--sparse", action="store_true", help="leave out zero feature values")
    add_format_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..data import make_synthetic, write_svmlight
    from ..errors import SpecError

    if args.seed < 0:
        raise SpecError(f"--seed must be >= 0, got {args.seed}")
    overrides = {} if args.queries is None else {"n_queries": args.queries}
    ds = make_synthetic(args.name, seed=args.seed, **overrides)
    bar = None
    if sys.stderr.isatty() and ds.n_docs > 200_000:
        from tqdm.auto import tqdm

        bar = tqdm(total=ds.n_docs, desc="writing", unit="doc", file=sys.stderr, leave=False)
    try:
        write_svmlight(
            args.out, ds, sparse=args.sparse, progress=None if bar is None else bar.update
        )
    finally:
        if bar is not None:
            bar.close()
    payload = {
        "out": str(args.out),
        "source": ds.source,
        "queries": ds.n_queries,
        "documents": ds.n_docs,
        "features": ds.n_features,
    }
    emit(
        args,
        payload,
        lambda: (
            f"wrote {args.out}: {ds.n_queries} queries, {ds.n_docs} documents, "
            f"{ds.n_features} features ({ds.source})"
        ),
    )
    return 0
