"""``ndcglab evaluate``: measure a ranking, with every convention stated.

::

    ndcglab evaluate DATA --scores FILE  [--measure SPEC ...] [--preset NAME]
    ndcglab evaluate DATA --feature N    [...]   (rank by feature column N, 1-based as in the file)
    ndcglab evaluate --qrels FILE --run FILE [...]   (TREC; default preset trec_eval)
    ndcglab evaluate --qrels FILE --run FILE -c -M 1000 -J -l 2 --score-precision trec_eval10
    ndcglab evaluate --qrels FILE --run FILE -q -m ndcg_cut.5,10 -m map   (trec_eval's layout)
    ndcglab evaluate --qrels FILE --run A --run B -m 'nDCG(dcg=exp-log2)@10' -m 'P(rel=2)@5'

DATA is a LETOR/SVMlight file (plain or .gz) or ``synthetic:NAME[:SEED]``. Without ``--measure``
the preset's usual set is reported (letor4: P@1..10, MAP, NDCG@1..10, MeanNDCG). The output is a
table of means followed by a line stating the convention and the number of queries without a
relevant document; ``--format json`` prints one object with ``mean`` (printed measure name ->
mean), ``queries``, ``empty_queries`` and ``convention``. ``--per-query FILE`` writes the
per-query values as CSV. ``-q`` prints trec_eval's per-query lines instead (``name<TAB>query
id<TAB>value``, the name padded to 22 characters, values with 4 decimals, then the ``all``
lines of the means), as ``trec_eval -q`` does. ``--format trec_eval`` (with ``--qrels/--run``
under the preset ``trec_eval`` or ``trec_eval10``) prints instead exactly what ``ndcglab
trec_eval`` prints for the same options: trec_eval 9.0.8's or 10.0's output, byte for byte
(docs/trec_eval_cli.md).

Measures (``-m`` or ``--measure``) take ndcglab's specs, trec_eval's names and its ``-m``
syntax (``ndcg_cut.5,10``, ``P.5,10``, ``all_trec``, ``official``), and ir_measures' names
(``nDCG@10``, ``nDCG(dcg=exp-log2)@10``, ``P(rel=2)@5``, ``AP(rel=2)``). Several ``--run``
files are evaluated one by one on the same qrels: a table with one column per run (``-q``: each
run's lines, ended by its ``runid`` line).

trec_eval's options keep their letters: ``-c`` (every query of the qrels, a missing one scoring
0 and left out of ``-q``'s lines as in trec_eval 9; with ``--preset trec_eval10`` evaluated
against one unjudged document and printed, as trec_eval 10 does), ``-M N`` (the first N
documents of each ranking), ``-J`` (judged documents only), ``-l N`` (a label >= N is relevant:
the preset option ``rel=N``), and ``--score-precision`` (``float32`` = ``trec_eval9`` =
``pytrec_eval``, ``float64`` = ``trec_eval10``; the score precision only: ``--preset
trec_eval10`` has every rule of trec_eval 10). ``-c``, ``-M``, ``-J`` need a TREC run. TREC
files are read as trec_eval 10 reads them: ``#`` comment lines are skipped and run fields after
the sixth are ignored; an empty file, or a run with no query of the qrels, is refused naming
the file.

``--dask ADDRESS`` (a scheduler address, or ``local:N`` for N local worker processes; see
docs/distributed.md) evaluates DATA with ``--scores FILE``, or ``--qrels/--run``, block by block
on Dask, for files larger than memory; the means equal the single-process ones.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ..errors import NdcglabError
from ._common import (
    add_cache_argument,
    add_format_argument,
    add_measure_arguments,
    emit,
    read_options,
)
from ._help import description

__all__ = ["add_parser", "add_ranking_arguments", "read_ranking", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    from ..measures import available_measures, available_presets

    p = subparsers.add_parser(
        "evaluate",
        help="measure a ranking (NDCG, MAP, P@k, ...) with every convention stated",
        description=description(__doc__, 0),
        epilog=f"Measures: {', '.join(available_measures())}, e.g. ndcg@10, "
        "'ndcg(gain=linear,discount=power:0.5)@0.2n', map, p@5 (trec_eval's and ir_measures' "
        f"names are accepted too). Presets: {', '.join(available_presets())}. See "
        "docs/measures.md.",
    )
    add_ranking_arguments(p, several_runs=True)
    p.add_argument(
        "-q",
        "--query-lines",
        action="store_true",
        help="print trec_eval's per-query lines (and the 'all' lines) instead of the table",
    )
    p.add_argument("--per-query", metavar="FILE", help="write per-query values to FILE (CSV)")
    p.add_argument(
        "--tie-range",
        action="store_true",
        help="also report each measure's worst and best value over every order of the tied "
        "documents (exact per query), and warn where ties decide more than 5%% of a mean",
    )
    add_measure_arguments(
        p,
        preset_help="convention preset (default standard; trec_eval for --qrels), with options "
        "such as 'trec_eval(depth=100)'; the list is below",
        trec_group="trec_eval's options",
    )
    from ._dask import add_dask_arguments

    add_dask_arguments(p)
    add_format_argument(
        p,
        ("trec_eval",),
        "; trec_eval: with --qrels/--run under the preset trec_eval or trec_eval10, exactly "
        "what 'ndcglab trec_eval' prints for the same options (trec_eval 9.0.8 / 10.0)",
    )
    p.set_defaults(func=run)
    return p


def _with_rel(preset: str, level: str) -> str:
    """``preset`` with the preset option ``rel=level`` added (trec_eval's ``-l``)."""
    from .._spec import ParsedSpec, parse_spec

    parsed = parse_spec(preset, what="preset")
    have = dict(parsed.params)
    if "rel" in have and have["rel"] != level:
        raise NdcglabError(
            f"--rel-level {level} and --preset {preset} set two relevance levels. Fix: drop one"
        )
    have["rel"] = level
    return str(ParsedSpec(parsed.name, tuple(sorted(have.items())), parsed.cutoff))


def add_ranking_arguments(p: argparse.ArgumentParser, *, several_runs: bool = False) -> None:
    """The ranking to measure: ``DATA`` with ``--scores FILE`` or ``--feature N`` (and
    ``--missing``, ``--cache``), or ``--qrels FILE --run FILE`` (repeatable with
    ``several_runs``); read by :func:`read_ranking`."""
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
    if several_runs:
        p.add_argument(
            "--run",
            dest="run_file",
            action="append",
            default=None,
            metavar="FILE",
            help="TREC run file (with --qrels); repeat for several runs",
        )
    else:
        p.add_argument(
            "--run", dest="run_file", metavar="FILE", help="TREC run file (with --qrels)"
        )
    p.add_argument(
        "--missing",
        choices=("nan", "min", "zero"),
        default="nan",
        help="missing feature values (NULL) when reading DATA: kept as NaN (default), "
        "per-query minimum, or 0; matters for --feature",
    )
    add_cache_argument(p)


def read_ranking(args: argparse.Namespace, *, columns: bool = False) -> tuple[Any, Any]:
    """The ranking named by :func:`add_ranking_arguments`: ``(qrels, run)`` dicts for
    ``--qrels/--run`` (read by :func:`ndcglab.data.trec.read_trec`: comment lines skipped, extra
    run fields ignored, empty files and a run with no query of the qrels refused), else
    ``(dataset, scores)``. ``columns``: the TREC pair as
    :class:`~ndcglab.data.trec_columns.TrecColumns` where the files allow it (no Python object
    per line; :func:`~ndcglab.measures.evaluate_trec` takes both)."""
    trec = args.qrels is not None or args.run_file is not None
    if trec:
        if args.data is not None or args.scores is not None or args.feature is not None:
            raise NdcglabError(
                "--qrels/--run evaluate a TREC run on their own. Fix: drop DATA, --scores and "
                "--feature, or drop --qrels/--run"
            )
        if args.qrels is None or args.run_file is None:
            raise NdcglabError("TREC evaluation needs both --qrels FILE and --run FILE")
        from ..data.trec import read_trec

        run = args.run_file[0] if isinstance(args.run_file, list) else args.run_file
        if columns:
            from ..data.trec_columns import read_trec_columns

            _return_freed_memory(run)
            pair = read_trec_columns(args.qrels, run, disposable=True)
            if pair is not None:
                return pair
        return read_trec(args.qrels, run)
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
    ds = load_dataset(args.data, **read_opts, **read_options(args, args.data))
    if args.feature is not None:
        n = int(args.feature)
        if not 1 <= n <= ds.n_features:
            raise NdcglabError(
                f"--feature {n} is out of range: {args.data} has features 1..{ds.n_features}. "
                f"Fix: give --feature a number from 1 to {ds.n_features}"
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
    return ds, scores


#: a run file at least this large (bytes) is evaluated with :func:`_return_freed_memory`
LARGE_RUN_BYTES = 8 << 20


def _return_freed_memory(run: Any) -> None:
    """For a large run: fix glibc's mmap threshold at its default (128 KiB). glibc raises the
    threshold to the size of each large block freed, so that later arrays of up to 32 MiB come
    from the heap, whose freed memory stays with the process and adds to its peak; fixed, every
    large array is mapped on its own and given back when freed. Nothing on other C libraries."""
    import os

    try:
        if os.stat(run).st_size < LARGE_RUN_BYTES:
            return
        import ctypes

        ctypes.CDLL(None).mallopt(-3, 128 << 10)  # M_MMAP_THRESHOLD
    except (OSError, AttributeError, TypeError):
        pass


def _evaluate(args: argparse.Namespace) -> Any:
    from ..measures import evaluate, evaluate_trec

    trec = args.qrels is not None or args.run_file is not None
    if args.max_docs is not None and args.max_docs < 1:
        raise NdcglabError(f"-M {args.max_docs}: N must be a positive integer, e.g. -M 1000")
    if not trec:
        used = _trec_flags(args)
        if used:
            raise NdcglabError(
                f"{', '.join(used)} appl{'ies' if len(used) == 1 else 'y'} to a TREC run "
                "(--qrels/--run): every document of DATA is judged and ranked. Fix: drop "
                f"{', '.join(used)}"
            )
    preset = args.preset or ("trec_eval" if trec else "standard")
    version = _trec_version(preset)
    if version is not None:
        args.measure = _trec_measures(args.measure)
    if args.rel_level is not None:
        level = args.rel_level if version is None else _trec_level(args.rel_level)
        preset = _with_rel(preset, level)
    if getattr(args, "dask", None) is not None:
        return _evaluate_dask(args, preset, trec)
    data, scores = read_ranking(args, columns=True)
    if trec:
        return evaluate_trec(
            data,
            scores,
            args.measure,
            preset=preset,
            complete=args.all_queries,
            judged_only=True if args.judged_only else None,
            depth=args.max_docs,
            score_precision=args.score_precision,
            tie_range=args.tie_range,
        )
    return evaluate(
        data,
        scores,
        args.measure,
        preset=preset,
        score_precision=args.score_precision,
        tie_range=args.tie_range,
    )


#: the presets that follow trec_eval, and its version
_TREC_PRESETS = {"trec_eval": 9, "trec": 9, "pytrec_eval": 9, "trec_eval9": 9, "trec_eval10": 10}


def _trec_version(preset: str) -> int | None:
    """9 or 10 when ``preset`` is one of trec_eval's presets, else None."""
    from .._spec import parse_spec

    return _TREC_PRESETS.get(parse_spec(preset, what="preset").name.lower())


def _trec_measures(measures: list[str] | None) -> list[str] | None:
    """trec_eval's ``-m recall``: recall at its default cut-offs (``recall_5`` ...)."""
    if measures is None:
        return None
    return ["recall.5,10,15,20,30,100,200,500,1000" if m == "recall" else m for m in measures]


def _trec_level(text: str) -> str:
    """``-l`` read as trec_eval reads it (``atol``: the leading integer), with a warning when
    that changes the value written (``-l 1.5`` is ``-l 1``)."""
    from .._warn import warn_user
    from ..treceval.options import c_atol

    value = c_atol(text)
    try:
        same = float(text) == value
    except ValueError:
        same = False
    if not same:
        warn_user(
            f"-l {text} is read as -l {value}, as trec_eval reads it (the leading integer); "
            "use --preset standard for a fractional relevance level"
        )
    return str(value)


def _trec_eval_lines(args: argparse.Namespace) -> int:
    """``--format trec_eval``: ``ndcglab trec_eval``'s output for the same options."""
    import sys

    from .._warn import warn_user
    from ..treceval import run_trec_eval

    preset = args.preset or "trec_eval"
    version = _trec_version(preset)
    runs = args.run_file if isinstance(args.run_file, list) else [args.run_file]
    if args.qrels is None or runs == [None] or version is None or preset.strip().endswith(")"):
        raise NdcglabError(
            "--format trec_eval prints trec_eval's lines: it needs --qrels and --run, and the "
            "preset trec_eval or trec_eval10 without options. Fix: give them, or use "
            "--format text"
        )
    for flag, on in (("--tie-range", args.tie_range), ("--per-query", args.per_query),
                     ("--dask", getattr(args, "dask", None))):  # fmt: skip
        if on:
            raise NdcglabError(f"{flag} does not go with --format trec_eval. Fix: drop {flag}")
    argv = ["--trec-eval-version", str(version)]
    if args.query_lines:
        argv.append("-q")
    for m in args.measure or []:
        argv += ["-m", m]
    if args.all_queries:
        argv.append("-c")
    if args.max_docs is not None:
        argv += ["-M", str(args.max_docs)]
    if args.judged_only:
        argv.append("-J")
    if args.rel_level is not None:
        argv += ["-l", str(args.rel_level)]
    for run_file in runs:
        text = run_trec_eval([*argv, "--", args.qrels, run_file], warn=warn_user)
        sys.stdout.buffer.write(text.encode("latin-1"))
    sys.stdout.flush()
    return 0


def _trec_flags(args: argparse.Namespace) -> list[str]:
    """trec_eval's run options given (``-c``, ``-M``, ``-J``): they apply to a TREC run only."""
    given = (args.all_queries, args.max_docs is not None, args.judged_only)
    return [flag for flag, on in zip(("-c", "-M", "-J"), given) if on]


def _evaluate_dask(args: argparse.Namespace, preset: str, trec: bool) -> Any:
    """``_evaluate`` on Dask (``--dask``): LETOR + ``--scores``, or ``--qrels/--run``."""
    from ..distributed.cluster import dask_client
    from ..distributed.evaluate import evaluate_letor_dask, evaluate_trec_dask

    used = _trec_flags(args) + [
        flag
        for flag, on in (
            ("--score-precision", args.score_precision is not None),
            ("--feature", args.feature is not None),
            ("--tie-range", args.tie_range),
        )
        if on
    ]
    if used:
        raise NdcglabError(
            f"--dask does not take {', '.join(used)}. Fix: drop {', '.join(used)}, or drop "
            "--dask to evaluate in one process"
        )
    if trec:
        if args.data is not None or args.scores is not None:
            raise NdcglabError(
                "--qrels/--run evaluate a TREC run on their own. Fix: drop DATA and --scores"
            )
        if args.qrels is None or args.run_file is None:
            raise NdcglabError("TREC evaluation needs both --qrels FILE and --run FILE")
    elif args.data is None or args.scores is None:
        raise NdcglabError(
            "--dask evaluates DATA --scores FILE, or --qrels FILE --run FILE. Fix: give one of them"
        )
    from ..distributed.cluster import MIN_EVALUATE_MEMORY

    with dask_client(
        args.dask,
        memory_limit=args.dask_memory_limit,
        timeout=args.dask_timeout,
        quiet=args.format == "json",
        label="ndcglab evaluate",
        min_memory=MIN_EVALUATE_MEMORY,
    ) as client:
        if trec:
            return evaluate_trec_dask(
                args.qrels,
                args.run_file[0] if isinstance(args.run_file, list) else args.run_file,
                args.measure,
                preset=preset,
                client=client,
            )
        return evaluate_letor_dask(
            str(args.data), str(args.scores), args.measure, preset=preset, client=client
        )


def _run_names(files: list[str]) -> list[str]:
    from ..analysis.runs import run_names

    names = run_names(files)
    if len(set(names)) != len(names):
        raise NdcglabError(f"--run {files[0]} is given twice. Fix: give each run once")
    return names


def _several(args: argparse.Namespace) -> int:
    """Several ``--run`` files on one qrels: one column (or one ``-q`` block) per run."""
    from .._tables import TextTable
    from ..measures.evaluate import convention_line
    from ..measures.ir_names import format_trec_eval

    files = list(args.run_file)
    if args.per_query or getattr(args, "dask", None):
        used = "--per-query" if args.per_query else "--dask"
        raise NdcglabError(
            f"{used} takes one --run. Fix: evaluate the runs one by one, or drop {used} (-q "
            "prints every run's per-query lines)"
        )
    names = _run_names(files)
    results = {}
    for name, f in zip(names, files):
        args.run_file = [f]
        results[name] = _evaluate(args)
    args.run_file = files
    first = next(iter(results.values()))
    if args.query_lines and args.format != "json":
        import sys

        for name, res in results.items():
            sys.stdout.write(format_trec_eval(res, queries=_printed(args, res), runid=name))
        return 0
    shown = first.display_names()
    rows = [[shown[n], *(_num(results[r].mean[n]) for r in names)] for n in first.names]
    payload = {
        "runs": {r: res.to_dict() for r, res in results.items()},
        "mean": {r: res.to_dict()["mean"] for r, res in results.items()},
        "files": dict(zip(names, files)),
    }

    def text() -> str:
        table = TextTable(["measure", *names], rows).to_text()
        lines = [table]
        for r, res in results.items():
            lines.append(f"{r}: {convention_line(res)}")
        return "\n".join(lines)

    emit(args, payload, text)
    return 0


def _num_rel_all(args: argparse.Namespace) -> int | None:
    """Under ``-c`` with a trec_eval preset: the qrels lines with a relevance above 0 (read as
    trec_eval reads it), which trec_eval prints as the ``all`` num_rel; else None."""
    if not args.all_queries or args.qrels is None:
        return None
    if _trec_version(args.preset or "trec_eval") is None:
        return None
    from ..data.trec import read_qrels

    return sum(1 for q in read_qrels(args.qrels).values() for v in q.values() if int(v) > 0)


def _num(v: float) -> str:
    return "nan" if v != v else f"{v:.4f}"


def _printed(args: argparse.Namespace, res: Any) -> list[str] | None:
    """The queries ``-q`` prints per query (``None``: all of the result): with ``-c``, those
    of the run under the preset rule ``missing=zero`` (trec_eval 9), every query of the qrels
    under ``missing=unjudged`` (trec_eval 10, which evaluates the missing ones)."""
    if not args.all_queries or res.convention.get("missing") == "unjudged":
        return None
    from ..data.trec import read_run

    run = args.run_file[0] if isinstance(args.run_file, list) else args.run_file
    return [q for q in read_run(run) if q in set(res.query_ids.tolist())]


def run(args: argparse.Namespace) -> int:
    if args.format == "trec_eval":
        from ..treceval import TrecEvalError

        try:
            return _trec_eval_lines(args)
        except TrecEvalError as exc:  # (evaluate's own exit status: 2, a bad input)
            if exc.output:  # the -q lines trec_eval prints before it stops
                import sys

                sys.stdout.write(exc.output)
                sys.stdout.flush()
            raise NdcglabError(str(exc)) from None
    if isinstance(args.run_file, list) and len(args.run_file) > 1:
        return _several(args)
    res = _evaluate(args)
    if args.per_query:
        res.to_csv(args.per_query)
    if args.query_lines and args.format != "json":
        import sys

        from ..measures.ir_names import format_trec_eval

        sys.stdout.write(
            format_trec_eval(res, queries=_printed(args, res), num_rel_all=_num_rel_all(args))
        )
        return 0
    payload = res.to_dict(per_query=bool(args.query_lines))
    emit(args, payload, res.table)
    return 0
