"""``ndcglab compare``: several systems, the tests IR researchers use, one table with its rule.

::

    ndcglab compare --qrels QRELS RUN [RUN ...] [--name NAME ...] [-m SPEC ...] [-c] [-M N] [-J]
                    [-l N] [--topics FILE] [--test t|wilcoxon|sign|fisher|bootstrap|tukey]
                    [--baseline NAME ...] [--all-pairs] [--correction holm|bonferroni|bh|by|none]
                    [--asl] [--tie-range] [--export FILE.md|.tex|.csv|.html|.json ...]
    ndcglab compare DATA --scores A --scores B [...]     (a LETOR file and score files)

Evaluates every TREC run on the qrels (a RUN may be a file, a folder of runs or a glob pattern;
names come from the file names, or ``--name``) or every score file on DATA (a LETOR/SVMlight
file or ``synthetic:NAME[:SEED]``) with the same measures and tests each system against the
baseline (default: the first; ``--baseline`` repeated names several), or every pair
(``--all-pairs``), on the per-topic values. The table marks significant differences (``†``
p < 0.05, ``‡`` p < 0.01 against one baseline; letters of the systems a mean is significantly
better than, otherwise) and states its rule under it: the test, the correction, the interval,
the effect size, the wins/ties/losses threshold and the query set. ``--export`` writes the table
as Markdown, LaTeX (booktabs), CSV, HTML (with per-topic and ASL plots) or JSON by the file's
suffix. ``--tie-range`` adds each system's worst and best mean over every order of its tied
documents, and the topics with ties, and warns where ties decide more than 5% of a mean; the
tests stay on the values under the preset's tie rule.

The query set of TREC runs: by default the topics that every run has and the qrels judge (as
trec_eval evaluates one run); ``-c`` every topic of the qrels, a topic a run misses scoring 0;
``--topics FILE`` the listed topics. Dropped runs and topics are named in a warning.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._common import add_cache_argument, add_format_argument, add_measure_arguments, emit
from ._help import plain

__all__ = ["add_parser", "run"]

#: the tie-range warning of one evaluation, replaced by compare_rankers' (naming the system)
_TIE_WARNING = r".*: ties decide .* of the mean "

_TEST_CHOICES = ("t", "wilcoxon", "sign", "permutation", "fisher", "bootstrap", "tukey")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    from ..analysis.paired_tests import CORRECTIONS

    doc = plain(__doc__) if __doc__ else ""
    parts = doc.split("\n\n")
    p = subparsers.add_parser(
        "compare",
        help="compare systems (TREC runs or score files): means, paired tests, marks",
        description="\n\n".join(parts[2:]) if len(parts) > 2 else doc,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "inputs",
        nargs="*",
        metavar="RUN",
        help="with --qrels: TREC run files, folders or glob patterns; else DATA (a LETOR file "
        "or synthetic:NAME[:SEED]) followed by nothing",
    )
    p.add_argument("--qrels", metavar="FILE", help="TREC qrels file: compare the RUN files on it")
    p.add_argument(
        "--scores",
        action="append",
        default=None,
        metavar="FILE",
        help="score file (one score per document of DATA); once per system",
    )
    p.add_argument(
        "--name",
        action="append",
        default=None,
        metavar="NAME",
        help="system name, once per run or score file in order (default: the file names)",
    )
    t = add_measure_arguments(
        p,
        preset_help="convention preset (default trec_eval for --qrels, standard for DATA)",
        trec_group="trec_eval's options (with --qrels)",
    )
    t.add_argument(
        "--topics",
        metavar="FILE",
        default=None,
        help="compare on the topics listed in FILE (first field of each line)",
    )
    s = p.add_argument_group("tests")
    s.add_argument(
        "--test",
        choices=_TEST_CHOICES,
        default="t",
        help="paired t (default), Wilcoxon signed-rank, sign, Fisher's randomisation "
        "(permutation = fisher), Sakai's paired bootstrap, or two-way ANOVA + Tukey's HSD",
    )
    s.add_argument(
        "--baseline",
        action="append",
        default=None,
        metavar="NAME",
        help="the system the others are tested against (default: the first); repeat for several",
    )
    s.add_argument("--all-pairs", action="store_true", help="test every pair of systems")
    s.add_argument(
        "--correction",
        choices=CORRECTIONS,
        default="holm",
        help="multiple-comparison adjustment (default holm; bh/by: false discovery rate)",
    )
    s.add_argument(
        "--family",
        choices=("measure", "all"),
        default="measure",
        help="the p-values adjusted together: per measure (default) or the whole table",
    )
    s.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    s.add_argument(
        "--tie-threshold",
        type=float,
        default=0.0,
        metavar="T",
        help="a per-topic difference with |d| <= T is a tie (wins/ties/losses, sign test)",
    )
    s.add_argument(
        "--zero-method",
        choices=("wilcox", "pratt"),
        default="wilcox",
        help="Wilcoxon: zero differences dropped (wilcox, default) or ranked (pratt)",
    )
    s.add_argument(
        "--resamples",
        type=int,
        default=10_000,
        help="random sign vectors (randomisation) and bootstrap resamples (default 10000)",
    )
    s.add_argument("--seed", type=int, default=0, help="seed of the randomisation and bootstrap")
    s.add_argument(
        "--asl",
        action="store_true",
        help="discriminative power: paired-bootstrap ASL of every pair of systems (Sakai)",
    )
    s.add_argument(
        "--power",
        type=float,
        default=0.8,
        help="power for the topics needed to detect each difference (default 0.8)",
    )
    p.add_argument(
        "--tie-range",
        action="store_true",
        help="also state each system's worst and best mean over every order of its tied "
        "documents (exact per topic) and the topics with ties; warn where ties decide more "
        "than 5%% of a mean",
    )
    p.add_argument(
        "--export",
        action="append",
        default=None,
        metavar="FILE",
        help="write the table to FILE.md, .tex, .csv, .html or .json (repeatable)",
    )
    add_cache_argument(p)
    add_format_argument(p)
    p.set_defaults(func=run)
    return p


def _options(args: argparse.Namespace) -> dict[str, Any]:
    base = args.baseline
    return dict(
        baseline=base[0] if base and len(base) == 1 else base,
        test=args.test,
        pairs="all" if args.all_pairs else "baseline",
        correction=args.correction,
        family=args.family,
        alpha=args.alpha,
        alpha_strong=min(0.01, args.alpha),
        n_resamples=args.resamples,
        n_bootstrap=args.resamples,
        seed=args.seed,
        tie=args.tie_threshold,
        zero_method=args.zero_method,
        power=args.power,
        asl=args.asl,
    )


def _trec(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    from ..analysis.runs import expand_run_paths, run_names
    from ..analysis.significance import compare_runs
    from ..errors import NdcglabError
    from .evaluate import _with_rel

    if args.scores:
        raise NdcglabError("--scores belong to DATA, not to --qrels. Fix: give TREC runs as RUN")
    if not args.inputs:
        raise NdcglabError("--qrels needs run files. Fix: ndcglab compare --qrels QRELS RUN RUN")
    files = expand_run_paths(args.inputs)
    if args.name:
        if len(args.name) != len(files):
            raise NdcglabError(
                f"{len(args.name)} --name for {len(files)} runs. Fix: one --name per run, in "
                "order, or none"
            )
        names = list(args.name)
    else:
        names = run_names(files)
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise NdcglabError(
            f"two runs are named {twice!r}. Fix: give each run its own --name (or each file once)"
        )
    if args.max_docs is not None and args.max_docs < 1:
        raise NdcglabError(f"-M {args.max_docs}: N must be a positive integer, e.g. -M 1000")
    preset = args.preset or "trec_eval"
    if args.rel_level is not None:
        preset = _with_rel(preset, args.rel_level)
    res = compare_runs(
        args.qrels,
        dict(zip(names, files)),
        args.measure,
        preset=preset,
        complete=args.all_queries,
        topics=args.topics,
        judged_only=True if args.judged_only else None,
        depth=args.max_docs,
        score_precision=args.score_precision,
        tie_range=args.tie_range,
        **_options(args),
    )
    return res, {"qrels": str(args.qrels), "runs": dict(zip(names, files))}


def _letor(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    import warnings

    from ..analysis.significance import compare_rankers
    from ..errors import NdcglabError
    from ..measures import evaluate
    from ._common import read_systems

    used = [
        f
        for f, on in (
            ("-c", args.all_queries),
            ("-M", args.max_docs is not None),
            ("-J", args.judged_only),
            ("--topics", args.topics),
        )
        if on
    ]
    if used:
        raise NdcglabError(
            f"{', '.join(used)} apply to TREC runs (--qrels). Fix: drop them, or compare runs "
            "with --qrels QRELS RUN ..."
        )
    if len(args.inputs) != 1 or not args.scores:
        raise NdcglabError(
            "nothing to compare. Fix: ndcglab compare --qrels QRELS RUN RUN ..., or ndcglab "
            "compare DATA --scores A --scores B"
        )
    args.data = args.inputs[0]
    preset = args.preset or "standard"
    if args.rel_level is not None:
        from .evaluate import _with_rel

        preset = _with_rel(preset, args.rel_level)
    ds, systems = read_systems(args)
    with warnings.catch_warnings():
        if args.tie_range:  # compare_rankers warns about the range, naming the system
            warnings.filterwarnings("ignore", message=_TIE_WARNING)
        results = {
            n: evaluate(
                ds,
                sc,
                args.measure,
                preset=preset,
                score_precision=args.score_precision,
                tie_range=args.tie_range,
            )
            for n, sc in systems.items()
        }
    first = next(iter(results.values()))
    res = compare_rankers(
        {n: r.per_query for n, r in results.items()},
        topics=[str(q) for q in first.query_ids],
        tie_range={n: r.tie_range for n, r in results.items()} if args.tie_range else False,
        **_options(args),
    )
    res.settings["convention"] = first.convention
    extra = {
        "data": str(args.data),
        "scores": dict(zip(systems, args.scores)),
        "n_queries": first.n_queries,
        "empty_queries": {n: r.empty_queries for n, r in results.items()},
        "convention": first.convention,
        "_line": first,
    }
    return res, extra


def _refuse_export_over_input(args: argparse.Namespace) -> None:
    """An ``--export`` file that is the qrels, a run or a score file would overwrite it."""
    import os

    from ..errors import NdcglabError

    inputs = [args.qrels, *(args.inputs or []), *(args.scores or []), args.topics]
    for out in args.export or []:
        for path in inputs:
            if path and os.path.exists(path) and os.path.isfile(path):
                if os.path.exists(out) and os.path.samefile(out, path):
                    raise NdcglabError(
                        f"--export {out} is the input {path}; writing it would overwrite the "
                        "input (nothing was written). Fix: give --export another file name"
                    )


def run(args: argparse.Namespace) -> int:
    from ..measures.evaluate import convention_line

    _refuse_export_over_input(args)
    if args.qrels is not None:
        res, extra = _trec(args)
    else:
        res, extra = _letor(args)
    written = [str(res.export(p)) for p in args.export or []]
    line_of = extra.pop("_line", None)
    payload = res.to_dict()
    payload.update(extra)
    payload["exported"] = written

    def text() -> str:
        out = res.to_text().rstrip("\n")
        if line_of is not None:
            out += "\n" + convention_line(line_of)
        else:
            conv = res.settings.get("convention", {})
            out += f"\nconvention: preset {conv.get('preset')}; measures: " + ", ".join(
                f"{m} = {c.get('resolved', m)}" for m, c in conv.get("measures", {}).items()
            )
        if written:
            out += "\n\nwritten: " + ", ".join(written)
        return out

    emit(args, payload, text)
    return 0
