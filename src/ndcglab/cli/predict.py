"""``ndcglab predict MODEL DATA --out SCORES [--format text|json|trec]``.

Scores every document of DATA (a LETOR/SVMlight file or ``synthetic:NAME[:SEED]``) with a model
file written by ``ndcglab train`` (or the boosted-trees trainer). By default it writes one score
per line, in the data file's order - the score file ``ndcglab evaluate DATA --scores SCORES``
reads - and prints a summary (``--format json``: as one JSON object). ``--format trec`` writes a
TREC run instead (``QID Q0 DOCNO RANK SCORE TAG``, the documents of each query by score,
descending, equal scores in file order; DOCNO is the data's doc id, or ``QID-i`` when it has none)
to ``--out``, or to standard output when ``--out`` is left out or is ``-``: the file trec_eval,
pytrec_eval, ir_measures and ranx read, with qrels from ``ndcglab.data.dataset_to_qrels``. The
model refuses data with another feature count. The score file of a torch model (linear, MLP,
AdaRank, attention) is written as the data file is read, block by block, so memory holds a block
of rows, not the file (files over 32 MiB; ``--cache`` reads the file whole).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import SpecError
from ._common import add_cache_argument, add_model_parser, emit, format_table, read_options

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    help_text = "score a data file with a trained model; write a score file or a TREC run"
    p = add_model_parser(subparsers, "predict", help_text, __doc__)
    p.add_argument("data", metavar="DATA", help="LETOR/SVMlight file or synthetic:NAME[:SEED]")
    p.add_argument(
        "--out",
        default=None,
        metavar="FILE",
        help="file to write: scores, one per line (text, json), or the TREC run (trec; "
        "standard output when left out or -)",
    )
    p.add_argument(
        "--format",
        choices=("text", "json", "trec"),
        default="text",
        help="text / json: write the score file and print a summary as a table / one JSON "
        "object; trec: write a TREC run (query and doc ids) instead of the score file",
    )
    p.add_argument(
        "--tag", default="ndcglab", help="run tag, the last field of a TREC run (default ndcglab)"
    )
    add_cache_argument(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from ..data import is_synthetic_spec, load_dataset, write_run, write_scores
    from ..training import load_trained

    trec = args.format == "trec"
    if not trec and args.out in (None, "-"):
        raise SpecError(
            "predict needs --out FILE for the score file. Fix: add --out scores.txt, or "
            "--format trec to print a TREC run"
        )
    model = load_trained(args.model)
    options = read_options(args, args.data)
    if hasattr(model, "write_file_run") and not is_synthetic_spec(str(args.data)):
        if not trec:
            return _streamed(args, model, options)
        if args.out not in (None, "-"):  # (printed runs are read whole: no half a run shown)
            return _streamed_run(args, model, options)
    ds = load_dataset(args.data, **options)
    width = int(getattr(model, "n_features", 0) or 0)
    if ds.n_features < width and not is_synthetic_spec(str(args.data)):
        ds = ds.with_n_features(width)  # a sparse file: indices above its highest are 0
    scores = model.predict(ds)
    if trec:
        if args.out in (None, "-"):
            import tempfile
            from pathlib import Path

            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "run.txt"
                write_run(path, ds, scores, tag=args.tag)
                sys.stdout.write(path.read_text(encoding="utf-8", errors="surrogateescape"))
        else:
            write_run(args.out, ds, scores, tag=args.tag)
            print(
                f"ndcglab predict: wrote the TREC run of {ds.n_queries} queries, {ds.n_docs} "
                f"documents to {args.out}",
                file=sys.stderr,
            )
        return 0
    write_scores(args.out, scores)
    return _summary(args, model, ds.n_queries, ds.n_docs)


def _streamed(args: argparse.Namespace, model: Any, options: dict[str, Any]) -> int:
    """The score file of a torch model, written block by block as the data file is read
    (:meth:`ndcglab.models.TrainedModel.iter_file_scores`): the bytes of ``write_scores``."""
    from .._atomic import atomic_write

    counts: dict[str, int] = {}
    with atomic_write(args.out) as f:
        for scores in model.iter_file_scores(args.data, counts=counts, **options):
            if len(scores):
                f.write("\n".join(map(repr, scores.tolist())).encode("ascii") + b"\n")
    return _summary(args, model, counts["n_queries"], counts["n_docs"])


def _streamed_run(args: argparse.Namespace, model: Any, options: dict[str, Any]) -> int:
    """The TREC run of a torch model, written query by query as the data file is read and
    scored (:meth:`ndcglab.models.TrainedModel.write_file_run`): the bytes of ``write_run``."""
    n_queries, n_docs = model.write_file_run(args.data, args.out, tag=args.tag, **options)
    print(
        f"ndcglab predict: wrote the TREC run of {n_queries} queries, {n_docs} documents to "
        f"{args.out}",
        file=sys.stderr,
    )
    return 0


def _summary(args: argparse.Namespace, model: Any, n_queries: int, n_docs: int) -> int:
    payload = {
        "scores": str(args.out),
        "model": str(args.model),
        "loss": model.metadata.get("loss"),
        "n_queries": n_queries,
        "n_docs": n_docs,
    }
    emit(
        args,
        payload,
        lambda: format_table(["", "value"], [[k, str(v)] for k, v in payload.items()]),
    )
    return 0
