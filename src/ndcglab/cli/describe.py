"""``ndcglab describe DATA``: what is in a dataset (queries, documents, labels, list lengths)."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ._common import add_format_argument, emit, format_table


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "describe",
        help="summarise a dataset: queries, documents, features, labels, list lengths",
        description=(
            "Summarise a ranking dataset: numbers of queries, documents and features, label "
            "counts, queries without any relevant document (no label > 0), list lengths and "
            "missing (NULL/NaN) feature values."
        ),
    )
    p.add_argument(
        "data",
        metavar="DATA",
        help="a LETOR/SVMlight file (plain or .gz), or synthetic:NAME[:SEED]",
    )
    p.add_argument(
        "--query-file",
        default=None,
        help="LightGBM .query group file for data without qid: (default: DATA.query if present)",
    )
    add_format_argument(p)
    p.set_defaults(func=run)


def _label_key(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def describe(ds: Any) -> dict[str, Any]:
    """The summary printed by ``ndcglab describe`` as a plain dict (the JSON shape)."""
    lengths = ds.query_lengths
    rel = np.zeros(ds.n_queries, dtype=np.int64)
    if ds.n_docs:
        pos = (ds.labels > 0).astype(np.int64)
        nonempty = lengths > 0
        rel[nonempty] = np.add.reduceat(pos, ds.boundaries[:-1][nonempty])
    missing = 0
    for lo in range(0, ds.n_docs, 1 << 16):
        missing += int(np.count_nonzero(np.isnan(ds.features[lo : lo + (1 << 16)])))
    counts = ds.label_counts()
    return {
        "source": ds.source,
        "queries": int(ds.n_queries),
        "documents": int(ds.n_docs),
        "features": int(ds.n_features),
        "labels": {_label_key(k): int(v) for k, v in sorted(counts.items())},
        "empty_queries": int(np.count_nonzero(rel == 0)),
        "list_length": {
            "min": int(lengths.min()) if len(lengths) else 0,
            "median": float(np.median(lengths)) if len(lengths) else 0.0,
            "mean": float(lengths.mean()) if len(lengths) else 0.0,
            "max": int(lengths.max()) if len(lengths) else 0,
        },
        "missing_values": missing,
    }


def _text(d: dict[str, Any]) -> str:
    ll = d["list_length"]
    rows = [
        ["source", d["source"]],
        ["queries", d["queries"]],
        ["documents", d["documents"]],
        ["features", d["features"]],
        ["labels", "  ".join(f"{k}:{v}" for k, v in d["labels"].items())],
        ["empty queries (no label > 0)", d["empty_queries"]],
        [
            "list length min/median/mean/max",
            f"{ll['min']} / {ll['median']:g} / {ll['mean']:.2f} / {ll['max']}",
        ],
        ["missing values (NULL/NaN)", d["missing_values"]],
    ]
    return format_table(["", "value"], rows)


def run(args: argparse.Namespace) -> int:
    from ..data import load_dataset

    opts = {} if args.query_file is None else {"query_file": args.query_file}
    ds = load_dataset(args.data, **opts)
    d = describe(ds)
    emit(args, d, lambda: _text(d))
    return 0
