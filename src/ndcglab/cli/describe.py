"""``ndcglab describe DATA``: what is in a dataset (queries, documents, labels, list lengths).

DATA is a LETOR/SVMlight file, ``synthetic:NAME[:SEED]`` or a LETOR folder (``Fold1..Fold5``
with ``train``/``vali``/``test`` files, or one fold folder). A folder is described per fold and
part, and in total: the total counts every distinct query id once (the folds of a LETOR
collection hold the same queries in different parts). ``--format json`` for a folder:
``{"source", "folds": [{"fold", "parts": {"train": ..., "vali": ..., "test": ...}}], "total"}``,
each part and the total in the shape of a single file's summary.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ._common import add_cache_argument, add_format_argument, emit, format_table, read_options


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "describe",
        help="summarise a dataset: queries, documents, features, labels, list lengths",
        description=(
            "Summarise a ranking dataset: numbers of queries, documents and features, label "
            "counts, queries without any relevant document (no label > 0), list lengths and "
            "missing (NULL/NaN) feature values. A LETOR folder (Fold1..Fold5, or one fold) is "
            "described per fold and part, and in total (every distinct query id once)."
        ),
    )
    p.add_argument(
        "data",
        metavar="DATA",
        help="a LETOR/SVMlight file (plain or .gz), a LETOR folder, or synthetic:NAME[:SEED]",
    )
    p.add_argument(
        "--query-file",
        default=None,
        help="LightGBM .query group file for data without qid: (default: DATA.query if present)",
    )
    add_format_argument(p)
    add_cache_argument(p)
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


def describe_folder(path: str, **options: Any) -> dict[str, Any]:
    """The summary of a LETOR folder: per fold and part, and in total (distinct query ids);
    ``options`` go to :func:`ndcglab.data.read_letor`."""
    from ..data import load_letor_folder
    from ..data.dataset import RankingDataset, boundaries_from_group

    folds = load_letor_folder(path, **options)
    out: dict[str, Any] = {"source": str(path), "folds": []}
    seen: set[str] = set()
    parts_new: list[RankingDataset] = []
    for fold in folds:
        entry: dict[str, Any] = {"fold": fold.name, "parts": {}}
        for part in ("train", "vali", "test"):
            if getattr(fold, f"{part}_path") is None:
                continue
            ds = getattr(fold, part)
            entry["parts"][part] = describe(ds)
            keep = [i for i, q in enumerate(ds.query_ids.tolist()) if str(q) not in seen]
            seen.update(str(ds.query_ids[i]) for i in keep)
            if keep:
                parts_new.append(ds.subset(np.asarray(keep, dtype=np.int64)))
        out["folds"].append(entry)
    if parts_new:
        total = RankingDataset(
            features=np.concatenate([d.features for d in parts_new]),
            labels=np.concatenate([d.labels for d in parts_new]),
            boundaries=boundaries_from_group(np.concatenate([d.query_lengths for d in parts_new])),
            query_ids=np.concatenate([d.query_ids for d in parts_new]),
            source=f"{path} (every distinct query id once)",
        )
        out["total"] = describe(total)
    else:
        out["total"] = None
    return out


def _folder_text(d: dict[str, Any]) -> str:
    rows = []

    def row(name: str, x: dict[str, Any]) -> list[Any]:
        ll = x["list_length"]
        return [
            name,
            x["queries"],
            x["documents"],
            x["features"],
            "  ".join(f"{k}:{v}" for k, v in x["labels"].items()),
            x["empty_queries"],
            f"{ll['min']} / {ll['median']:g} / {ll['max']}",
            x["missing_values"],
        ]

    for f in d["folds"]:
        for part, x in f["parts"].items():
            rows.append(row(f"{f['fold']}/{part}", x))
    if d["total"] is not None:
        rows.append(row("total (distinct queries)", d["total"]))
    header = [
        "part",
        "queries",
        "documents",
        "features",
        "labels",
        "empty queries",
        "list length min/med/max",
        "missing",
    ]
    return f"{d['source']}: {len(d['folds'])} fold(s)\n" + format_table(header, rows)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..data import load_dataset

    if Path(args.data).is_dir():
        d = describe_folder(args.data, **read_options(args, args.data))
        emit(args, d, lambda: _folder_text(d))
        return 0

    opts = {} if args.query_file is None else {"query_file": args.query_file}
    ds = load_dataset(args.data, **opts, **read_options(args, args.data))
    d = describe(ds)
    emit(args, d, lambda: _text(d))
    return 0
