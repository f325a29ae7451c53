"""``ndcglab evaluate``: measure a ranking, with every convention stated.

::

    ndcglab evaluate DATA --scores FILE  [--measure SPEC ...] [--preset NAME]
    ndcglab evaluate DATA --feature N    [...]   (rank by feature column N, 1-based as in the file)
    ndcglab evaluate --qrels FILE --run FILE [...]   (TREC; default preset trec_eval)

DATA is a LETOR/SVMlight file (plain or .gz) or ``synthetic:NAME[:SEED]``. Without ``--measure``
the preset's usual set is reported (letor4: P@1..10, MAP, NDCG@1..10, MeanNDCG). The output is a
table of means followed by a line stating the convention and the number of queries without a
relevant document; ``--format json`` prints one object with ``mean`` (printed measure name ->
mean), ``queries``, ``empty_queries`` and ``convention``. ``--per-query FILE`` writes the
per-query values as CSV.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ..errors import NdcglabError
from ._common import add_format_argument, emit

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "evaluate",
        help="measure a ranking (NDCG, MAP, P@k, ...) with every convention stated",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="Measures: ndcg, dcg, idcg (z), ndcg_beta, meanndcg, map (ap), p, mrr (rr), e.g. "
        "ndcg@10, 'ndcg(gain=linear,discount=power:0.5)@0.2n', map, p@5. Presets: standard, "
        "letor3, letor4, trec_eval, sklearn, lightgbm. See docs/measures.md.",
    )
    p.add_argument(
        "data",
        nargs="?",
        metavar="DATA",
        help="LETOR/SVMlight file or synthetic:NAME[:SEED] (not with --qrels)",
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument(
        "--scores",
        metavar="FILE",
        help="score file: one number per line, one line per document of DATA",
    )
    src.add_argument(
        "--feature",
        type=int,
        metavar="N",
        help="rank by feature column N of DATA (1-based, as written in the file)",
    )
    p.add_argument("--qrels", metavar="FILE", help="TREC qrels file (with --run, without DATA)")
    p.add_argument("--run", dest="run_file", metavar="FILE", help="TREC run file (with --qrels)")
    p.add_argument(
        "--measure",
        action="append",
        default=None,
        metavar="SPEC",
        help="measure, e.g. ndcg@10 or 'ndcg(ties=average)@5'; repeatable (default: the preset's "
        "usual set)",
    )
    p.add_argument(
        "--preset",
        default=None,
        metavar="NAME",
        help="convention preset: standard (default; trec_eval for --qrels), letor3, "
        "letor4, trec_eval, sklearn, lightgbm",
    )
    p.add_argument(
        "--missing",
        choices=("nan", "min", "zero"),
        default="nan",
        help="missing feature values (NULL) when reading DATA: kept as NaN (default), "
        "per-query minimum, or 0; matters for --feature",
    )
    p.add_argument("--per-query", metavar="FILE", help="write per-query values to FILE (CSV)")
    add_format_argument(p)
    p.set_defaults(func=run)
    return p


def _evaluate(args: argparse.Namespace) -> Any:
    from ..measures import evaluate, evaluate_trec

    trec = args.qrels is not None or args.run_file is not None
    if trec:
        if args.data is not None or args.scores is not None or args.feature is not None:
            raise NdcglabError(
                "--qrels/--run evaluate a TREC run on their own. Fix: drop DATA, --scores and "
                "--feature, or drop --qrels/--run"
            )
        if args.qrels is None or args.run_file is None:
            raise NdcglabError("TREC evaluation needs both --qrels FILE and --run FILE")
        from ..data import read_qrels, read_run

        qrels = read_qrels(args.qrels)
        run_ = read_run(args.run_file)
        return evaluate_trec(qrels, run_, args.measure, preset=args.preset or "trec_eval")
    if args.data is None:
        raise NdcglabError(
            "nothing to evaluate. Fix: ndcglab evaluate DATA --scores FILE (or --feature N), or "
            "ndcglab evaluate --qrels FILE --run FILE"
        )
    if args.scores is None and args.feature is None:
        raise NdcglabError(
            f"no ranking for {args.data}. Fix: add --scores FILE (one score per document) or "
            "--feature N (rank by feature column N)"
        )
    from ..data import is_synthetic_spec, load_dataset, read_scores

    read_opts = {} if is_synthetic_spec(args.data) else {"missing": args.missing}
    ds = load_dataset(args.data, **read_opts)
    if args.feature is not None:
        n = int(args.feature)
        if not 1 <= n <= ds.n_features:
            raise NdcglabError(
                f"--feature {n} is out of range: {args.data} has features 1..{ds.n_features}"
            )
        scores = ds.features[:, n - 1].astype(np.float64)
        if not np.isfinite(scores).all():
            bad = int(np.flatnonzero(~np.isfinite(scores)).size)
            raise NdcglabError(
                f"feature {n} is missing (NULL/NaN) for {bad} documents. Fix: --missing min "
                "(per-query minimum, as LETOR's Feature-min) or --missing zero"
            )
    else:
        scores = read_scores(args.scores, n_expected=ds.n_docs)
    return evaluate(ds, scores, args.measure, preset=args.preset)


def run(args: argparse.Namespace) -> int:
    res = _evaluate(args)
    if args.per_query:
        res.to_csv(args.per_query)
    emit(args, res.to_dict(), res.table)
    return 0
