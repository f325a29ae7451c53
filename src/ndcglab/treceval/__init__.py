"""trec_eval as a drop-in: its command line, its rules and its output, byte for byte.

``ndcglab trec_eval [trec_eval's options] QRELS RUN`` prints what trec_eval 9.0.8 (or, with
``--trec-eval-version 10``, trec_eval 10.0) prints for the same command: every measure of its
table (including the preference measures, judgment groups and z-scores), its parameter syntax
(``-m ndcg_cut.10,20``, ``-m ndcg.1=3,2=9``, ``-m rbp.p=0.5``), its reading of files and
labels, its averages and its line layout. The rules are written in docs/trec_eval_cli.md.

:func:`run_trec_eval` is the library form: the argument list (as typed after ``trec_eval``)
in, the output text out. :func:`evaluate_topics` gives the per-topic values as numbers for
topics held in memory (:class:`JudgedTopic`, :class:`RunTopic`), without files.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ._measures import measure_sets, measure_table
from ._readers import JudgedTopic, RunTopic, TrecEvalError, to_float32
from ._run import Options, evaluate_files, evaluate_topics
from .options import CommandLine, parse_command_line

__all__ = [
    "CommandLine",
    "JudgedTopic",
    "Options",
    "RunTopic",
    "TrecEvalError",
    "evaluate_files",
    "evaluate_topics",
    "measure_sets",
    "measure_table",
    "parse_command_line",
    "run_trec_eval",
    "to_float32",
]


def run_trec_eval(argv: Sequence[str], *, warn: Callable[[str], None] | None = None) -> str:
    """The output of ``trec_eval ARGV`` (the measures' lines; ``-h``/``-v`` are the command
    line's). Raises :class:`TrecEvalError` for an input trec_eval refuses."""
    cl = parse_command_line(argv)
    if len(cl.files) != 2:
        raise TrecEvalError(
            f"give two files, QRELS and RUN (got {len(cl.files)}). Fix: ndcglab trec_eval "
            "[options] QRELS RUN",
            1,
        )
    return evaluate_files(cl.options, cl.files[0], cl.files[1], warn=warn)
