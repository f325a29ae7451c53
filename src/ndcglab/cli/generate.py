"""``ndcglab generate NAME --out FILE``: write a seeded synthetic dataset as LETOR text.

With ``--folds K`` (LETOR uses 5), ``--out`` names a folder that receives ``Fold1..FoldK``,
each with ``train.txt``, ``vali.txt`` and ``test.txt`` in LETOR's rotation (see
:func:`ndcglab.data.folds.fold_parts`: the folds ``ndcglab cv synthetic:NAME`` builds with
``--seed 0``), ready for ``ndcglab cv``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .._warn import terminal_safe
from ._common import add_format_argument, emit, positive_int


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
    p.add_argument(
        "--out",
        required=True,
        metavar="FILE",
        help="output file (.gz compresses); with --folds, a new folder for Fold1..FoldK",
    )
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument(
        "--queries", type=positive_int, default=None, help="override the number of queries"
    )
    p.add_argument("--sparse", action="store_true", help="leave out zero feature values")
    p.add_argument(
        "--folds",
        dest="n_folds",
        type=int,
        default=None,
        metavar="K",
        help="write a LETOR fold folder Fold1..FoldK (train/vali/test, K >= 3; LETOR uses 5) "
        "for ndcglab cv, instead of one file",
    )
    add_format_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..data import make_synthetic, write_svmlight
    from ..errors import SpecError

    if args.seed < 0:
        raise SpecError(f"--seed must be >= 0, got {args.seed}")
    overrides = {} if args.queries is None else {"n_queries": args.queries}
    ds = make_synthetic(args.name, seed=args.seed, **overrides)
    if args.n_folds is not None:
        return _write_folds(args, ds)
    from ..data.synthetic import estimate_text_size

    try:  # writes a small sample to a temporary file and measures it
        expected: int | None = estimate_text_size(ds, args.out, sparse=args.sparse)
    except OSError:  # no room even for the sample: the write below says so, naming the output
        expected = None
    if expected is not None:
        print(
            f"ndcglab generate: {ds.n_queries} queries, {ds.n_docs} documents; writing about "
            f"{_size(expected)} to {terminal_safe(args.out)}",
            file=sys.stderr,
            flush=True,
        )
    bar = None
    if sys.stderr.isatty() and ds.n_docs > 200_000:
        from tqdm.auto import tqdm

        bar = tqdm(total=ds.n_docs, desc="writing", unit="doc", file=sys.stderr, leave=False)
    existed = os.path.exists(args.out)
    try:
        write_svmlight(
            args.out, ds, sparse=args.sparse, progress=None if bar is None else bar.update
        )
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
            bar = None
        left = "kept its old content" if existed else "was not created"
        print(
            f"ndcglab: error: interrupted (Ctrl-C) while writing {terminal_safe(args.out)}: "
            f"{terminal_safe(args.out)} {left} "
            "and no temporary file was left behind. Fix: run the command again",
            file=sys.stderr,
        )
        return 130
    finally:
        if bar is not None:
            bar.close()
    payload = {
        "out": str(args.out),
        "source": ds.source,
        "queries": ds.n_queries,
        "documents": ds.n_docs,
        "features": ds.n_features,
        "expected_bytes": expected,
        "bytes": os.path.getsize(args.out) if os.path.isfile(args.out) else None,
    }
    if str(args.out) in ("-", "/dev/stdout"):  # the data went to standard output: say it aside
        print(
            f"ndcglab generate: wrote {ds.n_queries} queries, {ds.n_docs} documents, "
            f"{ds.n_features} features ({ds.source}) to standard output",
            file=sys.stderr,
        )
        return 0
    emit(
        args,
        payload,
        lambda: (
            f"wrote {args.out}: {ds.n_queries} queries, {ds.n_docs} documents, "
            f"{ds.n_features} features ({ds.source})"
        ),
    )
    return 0


def _write_folds(args: argparse.Namespace, ds: Any) -> int:
    from ..data.folds import write_letor_folder

    folder = write_letor_folder(args.out, ds, args.n_folds, sparse=args.sparse)
    payload = {
        "out": str(folder),
        "folds": args.n_folds,
        "source": ds.source,
        "queries": ds.n_queries,
        "documents": ds.n_docs,
        "features": ds.n_features,
    }
    emit(
        args,
        payload,
        lambda: (
            f"wrote {folder}: Fold1..Fold{args.n_folds} (train/vali/test) of {ds.n_queries} "
            f"queries, {ds.n_docs} documents, {ds.n_features} features ({ds.source})"
        ),
    )
    return 0


def _size(n: int) -> str:
    """``n`` bytes in a unit a person reads at a glance."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"
