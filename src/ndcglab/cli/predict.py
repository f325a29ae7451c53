"""``ndcglab predict MODEL DATA --out SCORES [--format json]``.

Scores every document of DATA (a LETOR/SVMlight file or ``synthetic:NAME[:SEED]``) with a model
file written by ``ndcglab train`` (or the boosted-trees trainer) and writes one score per line, in
the data file's order — the score file ``ndcglab evaluate DATA --scores SCORES`` reads. The model
refuses data with another feature count.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._common import add_format_argument, emit, format_table

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "predict",
        help="score a data file with a trained model; write a score file",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    p.add_argument("model", metavar="MODEL", help="model file from `ndcglab train --out`")
    p.add_argument("data", metavar="DATA", help="LETOR/SVMlight file or synthetic:NAME[:SEED]")
    p.add_argument(
        "--out", required=True, metavar="SCORES", help="score file to write (one per line)"
    )
    add_format_argument(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from ..data import load_dataset, write_scores
    from ..estimator import load_trained

    model = load_trained(args.model)
    ds = load_dataset(args.data)
    scores = model.predict(ds)
    write_scores(args.out, scores)
    payload = {
        "scores": str(args.out),
        "model": str(args.model),
        "loss": model.metadata.get("loss"),
        "n_queries": ds.n_queries,
        "n_docs": ds.n_docs,
    }
    emit(
        args,
        payload,
        lambda: format_table(["", "value"], [[k, str(v)] for k, v in payload.items()]),
    )
    return 0
